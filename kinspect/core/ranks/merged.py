"""The ranks of one torchrun job side by side: what each rank ran per step, who held the
others up, and where their compiles diverged.

Under torchrun every rank compiles and dispatches on its own, so each writes its own
session (`model.rank0.session.json`, ...). With dynamic shapes the ranks see different
sizes per step and pick different variants, and the slowest rank of a step holds every
other one at the next collective. Merging reads the sessions only (no clock is shared
between ranks):

- a step is a workload step index, the same on every rank;
- a rank's GPU time in a site for a step is the sum, over the site's calls in that step,
  of the picked variant's median at that key from the rank's own measurements
  (`kinspect.core.session.timings`); a call whose pick was not measured leaves it unknown;
- the step's time in a site is its slowest rank's; each other rank waits the difference;
- a straggler is a rank whose pick is slower than the fastest variant at its key beyond
  noise, where picking the fastest would have shortened the step's time in that site by
  more than `STRAGGLER_SHARE` of it: that is what its pick costs every other rank;
- a compile diverges where ranks hold different kernels for one site's variant (config or
  source, the GPU it was compiled for aside), or one rank has a site another lacks, or the
  ranks ran with different hints: each rank autotunes on its own, and autotuning is
  noisy, so the same size can run different kernels on different ranks.

Every time comes from each rank's one compile, which the findings say.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from kinspect.core.errors import KinspectError
from kinspect.core.numbers import US, share, us, us_text
from kinspect.core.quality.overview import SizeNamer
from kinspect.core.quality.rules import rank_rule
from kinspect.core.session.model import Finding, Session, Site, Variant
from kinspect.core.dispatch.shapes import Key, sizes_text
from kinspect.core.session.timings import KeyTimings

STRAGGLER_SHARE = 0.10
"""A rank's pick is a straggler when it costs the others more than this share of the
step's GPU time in that site."""


@dataclass(frozen=True)
class SiteWork:
    """One site's calls on one rank in one step."""

    site: str
    keys: tuple[Key, ...]
    """The distinct runtime keys, in call order."""
    picks: tuple[int, ...]
    """The variant run at each of `keys`."""
    calls: int
    gpu_us: float | None
    """The picked variants' medians summed over the calls; None where one was not measured."""
    best_us: float | None
    """The same with the fastest variant wherever the pick is slower beyond noise."""


@dataclass(frozen=True)
class RankStep:
    rank: int
    sizes: Mapping[str, int]
    """The user's sizes this rank ran the step at (from the keys its sites saw)."""
    sites: Mapping[str, SiteWork]

    @property
    def gpu_us(self) -> float | None:
        """The step's GPU time over all its sites; None unless every site's is known."""
        times = [w.gpu_us for w in self.sites.values()]
        return None if not times or None in times else sum(times)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Step:
    step: int
    ranks: tuple[RankStep, ...]

    def times(self, site: str | None = None) -> dict[int, float]:
        """Each rank's known GPU time in a site (all sites: None) this step."""
        out = {}
        for r in self.ranks:
            us = r.gpu_us if site is None else (r.sites[site].gpu_us if site in r.sites else None)
            if us is not None:
                out[r.rank] = us
        return out

    def slowest(self, site: str | None = None) -> int | None:
        """The rank the others wait for, where two or more ranks' times are known."""
        t = self.times(site)
        return max(t, key=lambda r: (t[r], -r)) if len(t) > 1 else None

    def waits(self, site: str | None = None) -> dict[int, float]:
        """How long each rank waits for the slowest, in us."""
        t = self.times(site)
        if len(t) < 2:
            return {}
        top = max(t.values())
        return {r: top - us for r, us in t.items()}


@dataclass(frozen=True)
class StepTable:
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    slowest: tuple[bool, ...]
    """Per row: this rank is its step's slowest."""


@dataclass(frozen=True)
class Straggler:
    step: int
    site: str
    rank: int
    picks: tuple[int, ...]
    sizes: Mapping[str, int]
    step_us: float
    """The step's GPU time in the site: the slowest rank's."""
    cost_us: float
    """How much shorter the step would be had this rank run the fastest variants."""

    @property
    def share(self) -> float:
        return self.cost_us / self.step_us if self.step_us > 0 else 0.0


@dataclass(frozen=True)
class Divergence:
    """One site whose kernels differ between ranks: per variant that differs, which ranks
    hold which kernel."""

    site: str
    variants: tuple[int, ...]
    """The variant indices that differ (empty: the ranks do not even have the same variants)."""
    groups: tuple[tuple[tuple[int, ...], str], ...]
    """(ranks, what they hold), one entry per distinct compile of the site."""


def _spans(ranks: Sequence[int]) -> str:
    """`2, 5..1048575`: a job of 2**20 ranks given two is one short line, not 8 MB."""
    out: list[str] = []
    i = 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        out.append(str(ranks[i]) if j == i else f"{ranks[i]}, {ranks[j]}" if j == i + 1 else f"{ranks[i]}..{ranks[j]}")
        i = j + 1
    return ", ".join(out)


@dataclass
class MergedRanks:
    """Several ranks' sessions of one job, by rank."""

    sessions: tuple[Session, ...]
    ranks: tuple[int, ...]
    world_size: int
    sources: tuple[str, ...] = ()
    """Where each session was read from, for titles."""

    @cached_property
    def missing(self) -> list[int]:
        given = set(self.ranks)
        return [r for r in range(self.world_size) if r not in given]

    def session(self, rank: int) -> Session:
        return self.sessions[self.ranks.index(rank)]

    @cached_property
    def steps(self) -> list[Step]:
        per_rank = {rank: _rank_steps(rank, s) for rank, s in zip(self.ranks, self.sessions)}
        numbers = sorted({n for steps in per_rank.values() for n in steps})
        return [Step(n, tuple(per_rank[r][n] for r in self.ranks if n in per_rank[r])) for n in numbers]

    @cached_property
    def site_names(self) -> list[str]:
        """Every site of the job, in the order the ranks first name them."""
        return list(dict.fromkeys(x.name for s in self.sessions for x in s.sites))

    @cached_property
    def divergences(self) -> list[Divergence]:
        by_name = [{x.name: x for x in s.sites} for s in self.sessions]
        return [d for name in self.site_names if (d := _divergence(name, self.ranks, by_name)) is not None]

    @cached_property
    def stragglers(self) -> list[Straggler]:
        out = []
        for step in self.steps:
            for name in self.site_names:
                out += _stragglers(step, name)
        return out

    @cached_property
    def findings(self) -> list[Finding]:
        return rank_rule.derive(self)

    def lead(self) -> Session:
        """The lowest rank's session with the job's findings added: what the inspector shows
        beside the Ranks view."""
        s = self.sessions[0]
        return replace(s, findings=[f for f in s.findings if f.kind not in rank_rule.kinds] + self.findings)

    def table(self) -> StepTable:
        """Per step, a row per rank: its sizes, each site's picks (and measured µs), its GPU
        time, and how long it waits for the step's slowest rank; what explain and the
        inspector's Ranks view show."""
        columns = ("step", "rank", "sizes", *self.site_names, f"GPU {US}", f"waits {US}")
        rows, slowest = [], []
        for st in self.steps:
            top, waits = st.slowest(), st.waits()
            for r in st.ranks:
                cells = [str(st.step), str(r.rank), sizes_text(r.sizes)]
                cells += [_work_text(r.sites.get(name)) for name in self.site_names]
                cells.append(us(r.gpu_us))
                cells.append("slowest" if r.rank == top else us(waits.get(r.rank)))
                rows.append(tuple(cells))
                slowest.append(r.rank == top)
        return StepTable(columns, tuple(rows), tuple(slowest))

    def describe_ranks(self) -> list[str]:
        """One line per rank: where it ran and where it was read from."""
        out = []
        for rank, s, src in zip(self.ranks, self.sessions, self._sources()):
            env = s.environment
            device = "" if env.local_rank is None else f" (cuda:{env.local_rank})"
            out.append(f"rank {rank} of {self.world_size}: {env.gpu or 'unknown GPU'}{device}, "
                       f"{len(s.events)} dispatches, {len(s.measurements)} measurements" + (f" · {src}" if src else ""))
        if self.missing:
            out.append(f"missing: rank {_spans(self.missing)} (no session given)")
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "ranks": [{"rank": r, "gpu": s.environment.gpu, "local_rank": s.environment.local_rank,
                       "source": src} for r, s, src in zip(self.ranks, self.sessions, self._sources())],
            "world_size": self.world_size,
            "missing_ranks": self.missing,
            "steps": [{"step": st.step, "slowest": st.slowest(), "waits_us": _round_map(st.waits()),
                       "ranks": [{"rank": r.rank, "sizes": dict(r.sizes), "gpu_us": _round(r.gpu_us),
                                  "sites": {w.site: {"picks": list(w.picks), "keys": [[list(t) for t in k] for k in w.keys],
                                                     "calls": w.calls, "gpu_us": _round(w.gpu_us)}
                                            for w in r.sites.values()}}
                                 for r in st.ranks]}
                      for st in self.steps],
            "divergences": [{"site": d.site, "variants": list(d.variants),
                             "groups": [{"ranks": list(ranks), "kernels": text} for ranks, text in d.groups]}
                            for d in self.divergences],
            "stragglers": [{"step": x.step, "site": x.site, "rank": x.rank, "picks": list(x.picks),
                            "sizes": dict(x.sizes), "step_us": _round(x.step_us), "cost_us": _round(x.cost_us),
                            "share": round(x.share, 4)} for x in self.stragglers],
            "findings": [{"kind": f.kind, "severity": f.severity, "site": f.site, "message": f.message}
                         for f in self.findings],
        }

    def _sources(self) -> list[str | None]:
        return list(self.sources) if len(self.sources) == len(self.sessions) else [None] * len(self.sessions)


def merge(sessions: Sequence[Session], sources: Sequence[str] = ()) -> MergedRanks:
    """Several rank sessions of one job, by rank; one line naming the problem when they are
    not that (a session without a rank, a rank twice, different jobs)."""
    names = list(sources) if len(sources) == len(sessions) else [f"session {i + 1}" for i in range(len(sessions))]
    if len(sessions) < 2:
        raise KinspectError("merging ranks needs two or more rank sessions")
    for s, name in zip(sessions, names):
        if s.environment.rank is None:
            raise KinspectError(f"{name}: not recorded under torchrun (it names no rank): "
                                "record with torchrun --nproc-per-node N -m kinspect record model.py")
    seen: dict[int, str] = {}
    for s, name in zip(sessions, names):
        rank = s.environment.rank
        assert rank is not None
        if rank in seen:
            raise KinspectError(f"{name} and {seen[rank]} are both rank {rank}")
        seen[rank] = name
    sizes = {s.environment.world_size for s in sessions}
    if len(sizes) > 1:
        raise KinspectError(f"these sessions come from jobs of different sizes (world sizes {sorted(map(str, sizes))})")
    models = {s.model.name for s in sessions}
    if len(models) > 1:
        raise KinspectError(f"these sessions record different models ({', '.join(sorted(str(m) for m in models))})")
    order = sorted(range(len(sessions)), key=lambda i: sessions[i].environment.rank)  # type: ignore[arg-type,return-value]
    world = sizes.pop() or max(seen) + 1
    return MergedRanks(tuple(sessions[i] for i in order), tuple(sessions[i].environment.rank for i in order),  # type: ignore[misc]
                       world, tuple(names[i] for i in order))


# ------------------------------------------------------------ steps


def _rank_steps(rank: int, session: Session) -> dict[int, RankStep]:
    """What this rank ran in each workload step (the compile's and measurements' runs are
    in no step, and are left out)."""
    timings = session.timings()
    sites = {s.name: s for s in session.sites}
    namer = SizeNamer(session)
    calls: dict[int, dict[str, list[tuple[Key, int]]]] = {}
    for e in session.events:
        if e.step is None or e.site not in sites:
            continue
        calls.setdefault(e.step, {}).setdefault(e.site, []).append((e.key, e.picked))
    costs: dict[tuple[str, Key, int], tuple[float, float] | None] = {}
    out = {}
    for step, by_site in calls.items():
        sizes: dict[str, int] = {}
        work = {}
        for name, done in by_site.items():
            for key in dict.fromkeys(k for k, _ in done):
                for k, v in namer(sites[name], key).items():
                    sizes.setdefault(k, v)
            work[name] = _site_work(name, done, timings, costs)
        out[step] = RankStep(rank, sizes, work)
    return out


def _site_work(site: str, done: Sequence[tuple[Key, int]], timings: Mapping[tuple[str, Key], KeyTimings],
               costs: dict[tuple[str, Key, int], tuple[float, float] | None]) -> SiteWork:
    picks: dict[Key, int] = {}
    gpu: float | None = 0.0
    best: float | None = 0.0
    for key, picked in done:
        picks.setdefault(key, picked)
        where = (site, key, picked)
        if where not in costs:
            costs[where] = _cost(timings.get((site, key)), picked)
        cost = costs[where]
        if cost is None or gpu is None or best is None:
            gpu = best = None
            continue
        gpu += cost[0]
        best += cost[1]
    return SiteWork(site, tuple(picks), tuple(picks.values()), len(done), gpu, best)


def _cost(t: KeyTimings | None, picked: int) -> tuple[float, float] | None:
    """(the pick's median, the fastest's where the pick is slower beyond noise, else the
    pick's) at one key; None where the pick was not measured."""
    us = None if t is None else t.median(picked)
    if t is None or us is None:
        return None
    fast = t.median(t.fastest) if t.fastest is not None and t.slower(picked) else None
    return us, us if fast is None else fast


def _stragglers(step: Step, site: str) -> list[Straggler]:
    known = {r.rank: r for r in step.ranks if site in r.sites and r.sites[site].gpu_us is not None}
    if len(known) < 2:
        return []
    times = {rank: r.sites[site].gpu_us for rank, r in known.items()}
    top = max(times.values())  # type: ignore[type-var]
    out = []
    for rank, r in known.items():
        w = r.sites[site]
        if w.best_us is None or w.gpu_us is None or w.best_us >= w.gpu_us:
            continue
        without = max([w.best_us, *(us for other, us in times.items() if other != rank)])  # type: ignore[list-item]
        cost = top - without  # type: ignore[operator]
        if top > 0 and cost > STRAGGLER_SHARE * top:  # type: ignore[operator]
            out.append(Straggler(step.step, site, rank, w.picks, dict(r.sizes), top, cost))  # type: ignore[arg-type]
    return out


# ------------------------------------------------------------ divergence


_DEVICE_INDEX = re.compile(r"(DeviceProperties\(type='\w+', index=)\d+")


def _kernel(v: Variant) -> tuple[Any, ...]:
    """What makes two ranks' variants the same kernel: its config and its source, but for
    the device index its metadata names (each rank compiles for its own GPU)."""
    source = _DEVICE_INDEX.sub(r"\1_", v.source) if v.source else v.source_hash or v.kernel_name
    return tuple(sorted((k, str(x)) for k, x in v.config.items())), source


def _divergence(name: str, ranks: Sequence[int], sites_by_name: Sequence[Mapping[str, Site]]) -> Divergence | None:
    """`name`'s kernels compared across the ranks (each rank's sites by name)."""
    compiles: dict[tuple[Any, ...], list[int]] = {}
    held: dict[tuple[Any, ...], Site | None] = {}
    for rank, by_name in zip(ranks, sites_by_name):
        site = by_name.get(name)
        sig = ("none",) if site is None else tuple(_kernel(v) for v in site.variants)
        compiles.setdefault(sig, []).append(rank)
        held.setdefault(sig, site)
    if len(compiles) < 2:
        return None
    sites = [held[sig] for sig in compiles]
    present = [s for s in sites if s is not None]
    counts = {len(s.variants) for s in present}
    if len(present) < len(sites) or len(counts) > 1:
        groups = tuple((tuple(ranks), "no such site" if held[sig] is None else
                        f"{len(held[sig].variants)} variants")  # type: ignore[union-attr]
                       for sig, ranks in compiles.items())
        return Divergence(name, (), groups)
    n = counts.pop()
    differ = tuple(i for i in range(n) if len({_kernel(s.variants[i]) for s in present}) > 1)
    keys = {i: _differing_config(present, i) for i in differ}
    groups = tuple((tuple(ranks), _describe(held[sig], keys))  # type: ignore[arg-type]
                   for sig, ranks in compiles.items())
    return Divergence(name, differ, groups)


def _differing_config(sites: Sequence[Site], i: int) -> list[str]:
    """The config entries of variant `i` that differ between the ranks' compiles."""
    others = [s.variants[i] for s in sites]
    keys = sorted({k for o in others for k in o.config}, key=str)
    return [k for k in keys if len({str(o.config.get(k)) for o in others}) > 1]


def _describe(site: Site, differing: Mapping[int, Sequence[str]]) -> str:
    """What one rank's compile holds at the variants that differ: the config entries that
    differ between ranks (`differing`, per variant), else the source's hash."""
    parts = []
    for i, diff in differing.items():
        v = site.variants[i]
        text = ", ".join(f"{k}={v.config.get(k)}" for k in diff) if diff else \
            f"source {v.source_hash or v.kernel_name}"
        parts.append(f"{v.label}: {text}")
    return "; ".join(parts)


# ------------------------------------------------------------ findings


@rank_rule("rank-divergence")
def divergence_findings(job: MergedRanks) -> list[Finding]:
    out = []
    for d in job.divergences:
        held = "; ".join(f"{_ranks_text(ranks)} {'hold' if len(ranks) > 1 else 'holds'} {text}"
                         for ranks, text in d.groups)
        what = ", ".join(f"v{i}" for i in d.variants) if d.variants else "its variants"
        out.append(Finding(
            "rank-divergence",
            f"{d.site}'s {what} differ across ranks ({held}): each rank autotuned on its own, so the "
            "same size can run different kernels on different ranks (one compile per rank)",
            "warning", site=d.site, variants=d.variants,
        ))
    return out


@rank_rule("rank-hints")
def hint_findings(job: MergedRanks) -> list[Finding]:
    """Ranks compiled with different hints: their sites offer different variants at all."""
    from kinspect.core.quality.hints_effect import session_hints  # it reads output code: only when ranks merge

    ranks_by: dict[tuple[int, ...], list[int]] = {}
    for rank, s in zip(job.ranks, job.sessions):
        ranks_by.setdefault(tuple(session_hints(s)), []).append(rank)
    if len(ranks_by) < 2:
        return []
    held = "; ".join(f"{_ranks_text(ranks)} {list(hints) if hints else 'none'}" for hints, ranks in ranks_by.items())
    return [Finding("rank-hints", f"the ranks were compiled with different multi_kernel_hints ({held}): one size "
                    "dispatches among different variants on each", "warning")]


@rank_rule("straggler")
def straggler_findings(job: MergedRanks) -> list[Finding]:
    """One finding per site and rank, naming its steps and detailing the costliest."""
    grouped: dict[tuple[str, int], list[Straggler]] = {}
    for x in job.stragglers:
        grouped.setdefault((x.site, x.rank), []).append(x)
    out = []
    for (site, rank), xs in grouped.items():
        worst = max(xs, key=lambda x: (x.share, -x.step))
        sizes = sizes_text(worst.sizes)
        picks = ", ".join(f"v{p}" for p in worst.picks)
        steps = ", ".join(str(x.step) for x in xs[:8]) + (", ..." if len(xs) > 8 else "")
        out.append(Finding(
            "straggler",
            f"rank {rank}'s pick in {site} holds the other ranks up in {len(xs)} step{'s' if len(xs) > 1 else ''} "
            f"({steps}): at step {worst.step} ({sizes}) its {picks} makes the step take {us_text(worst.step_us)} "
            f"in this site, {us_text(worst.cost_us)} ({share(worst.share)}) more than with the fastest "
            "variant, which every other rank waits (measured on each rank, one compile)",
            "warning", site=site, variants=tuple(sorted({p for x in xs for p in x.picks})),
        ))
    return out


def _work_text(w: SiteWork | None) -> str:
    """`v1 50.0`: the variants a rank ran in a site this step and their summed µs."""
    if w is None:
        return "-"
    picks = ",".join(f"v{p}" for p in dict.fromkeys(w.picks))
    return picks if w.gpu_us is None else f"{picks} {us(w.gpu_us)}"


def _ranks_text(ranks: Sequence[int]) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(map(str, ranks))


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def _round_map(d: Mapping[int, float]) -> dict[str, float]:
    return {str(k): round(v, 3) for k, v in d.items()}
