"""Which hints to set: the subset of candidate hints that costs a workload the least.

Compiled once with many candidate hints (every power of two in the range), each hint's
autotuned kernel is a variant of every site, timed at every size the workload needs. What
a compile with only some of those hints would run at a size is then Inductor's decision
among that subset's variants, which the core reproduces exactly; its cost against the
fastest candidate kernel at that size (the oracle) is read off the measurements. The
search tries every subset of at most k hints (16 candidates, k = 4: 2,516 subsets), so it
is exact, not a greedy guess.

The prediction assumes a compile with fewer hints autotunes each hint to the same kernel;
autotuning differs between compiles, so `kinspect advise` verifies the proposal by
compiling it, and a prediction is never reported without saying it is one.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from kinspect.core.quality.boundaries import log_grid
from kinspect.core.errors import KinspectError, ShapeError, echo
from kinspect.core.numbers import ratio, ratio_range
from kinspect.core.session.runtime import Measurement, Recompile
from kinspect.core.session.model import Session, Site
from kinspect.core.dispatch.shapes import MAX_SIZE, Key, format_key, sizes_text
from kinspect.core.session.timings import NOISE_RATIO, KeyTimings, first_of_kernel, geomean, key_timings
from kinspect.core.quality.model_calls import ModelCalls
from kinspect.core.quality.side_by_side import site_labels
from kinspect.core.quality.ties import between_hint, least_ties
from kinspect.core.quality.whatif import decided_among, distance_matrix

DEFAULT_HINTS = (64, 256, 4096)
"""Inductor's documented example, what a user without advice sets."""

PROGRAM_CANDIDATES = (16, 64, 256, 1024, 4096)
"""A program's default candidates (`kinspect advise --run`, which has no range to take
powers of two from): every fourth power of two from 16, the default hints among them, so
the default is predicted from the same compile. Each is one more autotuning of every GEMM:
five where the default hints make three."""


@dataclass(frozen=True)
class Workload:
    """The sizes advice is weighed over, each with its weight (calls), and where they came from."""

    points: tuple[tuple[Mapping[str, int], float], ...]
    source: str


LEAST = 2
"""Dynamo specialises sizes 0 and 1 into a graph of their own, without size-hint dispatch:
a hint or a workload size below 2 never reaches the graph being advised on."""


def candidate_hints(lo: int, hi: int) -> list[int]:
    """Every power of two in lo..hi from 2 (the range's ends when no power of two lies inside)."""
    lo = max(lo, LEAST)
    out = [1 << e for e in range(lo.bit_length() - 1, hi.bit_length()) if lo <= 1 << e <= hi]
    return out or sorted({lo, max(hi, lo)})


def grid_candidates(spans: Mapping[str, tuple[int, int]]) -> list[int]:
    """Every power of two in any of the ranges. A hint is one value Inductor puts in for
    every dynamic dim (B, S and B*S alike), so each range's sizes want their own powers."""
    return sorted({h for lo, hi in spans.values() for h in candidate_hints(lo, hi)})


def uniform_grid(spans: Mapping[str, tuple[int, int]], points: int) -> Workload:
    """One range: log-spaced sizes over it; several: the product of log-spaced sizes per
    range (about `points` in all), one call each: uniform in log space over the grid."""
    if len(spans) == 1:
        (name, (lo, hi)), = spans.items()
        return uniform_workload(name, lo, hi, points)
    per_axis = max(2, round(points ** (1 / len(spans))))
    axes = [[(name, s) for s in log_grid(max(lo, LEAST), max(hi, lo, LEAST), per_axis)] for name, (lo, hi) in spans.items()]
    sizes = [dict(p) for p in itertools.product(*axes)]
    ranges = " × ".join(f"{n}={max(lo, LEAST)}..{hi}" for n, (lo, hi) in spans.items())
    return Workload(tuple((s, 1.0) for s in sizes),
                    f"uniform over the grid {ranges} in log space ({len(sizes)} sizes, one call each)")


def within_all(workload: Workload, spans: Mapping[str, tuple[int, int]]) -> Workload:
    """`within` every range: a grid's sizes inside each of its ranges."""
    for name, span in spans.items():
        workload = within(workload, name, span)
    return workload


def uniform_workload(name: str, lo: int, hi: int, points: int) -> Workload:
    """Log-spaced sizes over the range (from 2), one call each: uniform in log space."""
    lo = max(lo, LEAST)
    sizes = log_grid(lo, max(hi, lo), points)
    return Workload(tuple(({name: s}, 1.0) for s in sizes),
                    f"uniform over {name}={lo}..{hi} in log space ({len(sizes)} sizes, one call each)")


def steps_workload(steps: Sequence[Mapping[str, int]], source: str) -> Workload:
    """A sequence of steps (the model file's `workload`): each distinct size weighs its calls."""
    counts: dict[tuple[tuple[str, int], ...], float] = {}
    for step in steps:
        k = tuple(sorted(step.items()))
        counts[k] = counts.get(k, 0.0) + 1.0
    if not counts:
        raise KinspectError(f"{source} has no sizes")
    return Workload(tuple((dict(k), w) for k, w in counts.items()), f"{source} ({len(steps)} calls, {len(counts)} sizes)")


_LINE = re.compile(r"^\s*((?:[A-Za-z_][A-Za-z0-9_]*\s*=\s*\d+[\s,]*)+?)(?:\s*[x*]\s*(\d+))?\s*$")
_SIZE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(\d+)")


def parse_workload_file(text: str, name: str) -> Workload:
    """One size per line (`B=1000`, or `B=1000 S=128`), an optional count after it
    (`B=1000 x40`); `#` starts a comment. A bad line is one error naming its number."""
    counts: dict[tuple[tuple[str, int], ...], float] = {}
    calls = 0
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = _LINE.match(line)
        if m is None:
            raise ShapeError(f"{name}:{n}: a line reads B=1000 or B=1000 x40 (a count); got {echo(line[:60])}")
        sizes = {k: _number(v, f"{name}:{n}") for k, v in _SIZE.findall(m[1])}
        count = _number(m[2], f"{name}:{n}") if m[2] else 1
        if count < 1 or any(v < 1 for v in sizes.values()):
            raise ShapeError(f"{name}:{n}: sizes and counts are positive; got {echo(line[:60])}")
        k = tuple(sorted(sizes.items()))
        counts[k] = counts.get(k, 0.0) + count
        calls += count
    if not counts:
        raise ShapeError(f"{name}: no sizes (one per line, e.g. B=1000 x40)")
    return Workload(tuple((dict(k), w) for k, w in counts.items()), f"the file {name} ({calls} calls, {len(counts)} sizes)")


def _number(digits: str, where: str) -> int:
    """A size or a count of the file, at most 2**62 as every size is (refused before
    `int()`, which refuses more than 4,300 digits with a traceback of its own)."""
    value = int(digits) if len(digits.lstrip("0")) <= len(str(MAX_SIZE)) else MAX_SIZE + 1
    if value > MAX_SIZE:
        raise ShapeError(f"{where}: sizes and counts are at most 2**62; got {echo(digits)}")
    return value


def within(workload: Workload, name: str, span: tuple[int, int]) -> Workload:
    """The workload's sizes inside the range (advice is for the range) and from 2 (see
    `LEAST`); says how many were not."""
    lo = max(span[0], LEAST)
    inside = tuple((s, w) for s, w in workload.points if lo <= s.get(name, lo) <= span[1])
    if not inside:
        raise KinspectError(f"no size of {workload.source} lies in {name}={span[0]}..{span[1]}")
    left = len(workload.points) - len(inside)
    note = f"; {left} of its sizes outside {name}={lo}..{span[1]} left out" if left else ""
    return Workload(inside, workload.source + note)


@dataclass
class SiteTable:
    """One site at the workload's sizes: every candidate variant's time (P x V), each
    variant's hint and Inductor's distances (P x V), a row per key the site sees (P: a
    size's keys, size by size); the fastest (P) and the weights (P) follow from them."""

    site: str
    keys: list[Key]
    times: np.ndarray
    hints: list[int | None]
    distances: np.ndarray
    points: list[int]
    """Per row, the workload size it is at (an index into `point_sizes`)."""
    calls: list[float]
    """Per row, how often one model call dispatches its key."""
    point_sizes: list[Mapping[str, int]]
    """Per workload size, the sizes it was weighed at (the model's examples filled in)."""
    point_weights: list[float]
    """Per workload size, the workload's calls there."""
    misaligned: tuple[str, ...] = ()
    """Call sites whose keys do not line up with the site's tensors, weighed at the keys
    they were recorded with."""
    stands_for: tuple[frozenset[int], ...] = ()
    """Per variant, the hints it stands for where several share it (`Session.stands_for`)."""
    best: np.ndarray = field(init=False)
    weights: np.ndarray = field(init=False)
    """Per row, the workload's calls at its size times its calls per model call."""

    def __post_init__(self) -> None:
        self.best = self.times.min(axis=1)
        self.weights = np.array(self.point_weights)[self.points] * np.array(self.calls)

    def allowed(self, subset: set[int]) -> list[int]:
        """The variants Inductor decides among with these hints compiled."""
        return decided_among(self.hints, self.stands_for, subset)


@dataclass(frozen=True)
class Tables:
    sites: list[SiteTable]
    missing: list[Mapping[str, int]]
    """Workload sizes without a time for every variant at some site: left out of the figures."""
    left_out: dict[str, str] = field(default_factory=dict)
    """Sites timed for every variant at no workload size, each with why (at its first size):
    left out of the figures rather than taking every size with them."""
    untimed_keys: int = 0
    """A recorded program's (site, key) pairs without a time for every variant: left out."""


def _timed(session: Session, site: Site, sizes: Mapping[str, int], calls: ModelCalls,
           timings: Mapping[tuple[str, Key], KeyTimings]) -> list[tuple[Key, list[float], float]] | str:
    """Each key the site sees in one model call at these sizes, with every variant's time
    there and how often a call dispatches it; else why there is none (the one rule both
    the tables and the one-line error read)."""
    at = sizes_text(sizes)
    try:
        seen = calls.keys(site, sizes)
    except KinspectError as e:
        return f"its key cannot be worked out at {at}: {e}"
    out = []
    for key, count in seen.items():
        t = timings.get((site.name, key))
        if t is None:
            return f"nothing was timed at {at} (key {format_key(key)})"
        times = []
        for v in site.variants:
            us = t.median(v.index)
            if us is not None and us > 0:
                times.append(us)
                continue
            m = t.measured.get(v.index)
            name = f"v{v.index} (hint {v.hint})"
            if m is not None and m.error:
                return f"{name} failed at {at}: {m.error}"
            if us is not None:  # CUDA events less the gap between launches floor at 0, and no CUPTI time read instead
                return f"{name} timed 0 µs at {at}: shorter than the launch gap the timing takes off"
            return f"{name} has no timing at {at} (key {format_key(key)})"
        out.append((key, times, count))
    return out


def tables(session: Session, workload: Workload,
           timings: Mapping[tuple[str, Key], KeyTimings] | None = None) -> Tables:
    """The candidate compile's measurements at each workload size, per site: a row per key
    the site sees in one model call there, weighed by the workload's calls times how often
    one model call dispatches that key (`ModelCalls`)."""
    timings = timings if timings is not None else session.timings()
    calls = ModelCalls(session)
    full = {s.label: s.example for s in session.symbols if s.example is not None}
    points = [({**full, **sizes}, weight, sizes) for sizes, weight in workload.points]
    rows: dict[str, list[list[tuple[Key, list[float], float]] | None]] = {}
    left_out: dict[str, str] = {}
    for site in session.sites:
        found = [_timed(session, site, at, calls, timings) for at, _, _ in points]
        if points and all(isinstance(f, str) for f in found):
            left_out[site.name] = found[0]
        else:
            rows[site.name] = [f if isinstance(f, list) else None for f in found]
    missing = [dict(sizes) for i, (_, _, sizes) in enumerate(points) if any(r[i] is None for r in rows.values())]
    complete = [i for i in range(len(points)) if all(r[i] is not None for r in rows.values())]
    out = []
    for site in session.sites:
        if site.name not in rows or not complete:
            continue
        kept = [(i, row) for i in complete for row in rows[site.name][i] or ()]
        keys = [k for _, (k, _, _) in kept]
        times = np.array([t for _, (_, t, _) in kept], dtype=np.float64)
        out.append(SiteTable(site.name, keys, times, [v.hint for v in site.variants],
                             distance_matrix(keys, site.keys, "inductor"), [i for i, _ in kept],
                             [n for _, (_, _, n) in kept], [at for at, _, _ in points], [w for _, w, _ in points],
                             calls.misaligned(site), tuple(session.stands_for(site))))
    return Tables(out, missing, left_out)


def recorded_tables(session: Session) -> Tables:
    """A recorded program's own dispatches as the workload (`kinspect advise --run`): per
    site, a row per distinct key the program ran, weighed by how often it ran it, with every
    variant's time there (`kinspect run --measure` times each). A key without a time for
    every variant is left out and counted."""
    timings = session.timings()
    calls = Counter((e.site, e.key) for e in session.events)
    out, untimed, left_out = [], 0, {}
    for site in session.sites:
        rows = []
        for (name, key), n in calls.items():
            if name != site.name:
                continue
            t = timings.get((name, key))
            times = [t.median(v.index) if t is not None else None for v in site.variants]
            if all(us is not None and us > 0 for us in times):
                rows.append((key, times, n))
            else:
                untimed += 1
        if not rows:
            left_out[site.name] = "no key it ran has every variant timed"
            continue
        keys = [k for k, _, _ in rows]
        out.append(SiteTable(site.name, keys, np.array([t for _, t, _ in rows], dtype=np.float64),
                             [v.hint for v in site.variants], distance_matrix(keys, site.keys, "inductor"),
                             list(range(len(rows))), [1.0] * len(rows), [{} for _ in rows],
                             [float(n) for _, _, n in rows], stands_for=tuple(session.stands_for(site))))
    return Tables(out, [], left_out, untimed)


@dataclass(frozen=True)
class RunRegret:
    """A verification run held against the candidate run (`kinspect advise --run`)."""

    regret: float | None
    """The GPU time of the variant Inductor picked at each dispatch, timed in that run, over
    the candidate run's fastest kernel at the same site and key; None where no dispatch of
    the run could be held against one."""
    sites: int
    """The candidate run's sites the figure weighs."""
    unmatched: tuple[str, ...] = ()
    """The candidate run's sites (as the user calls them) that were no size-hint
    multi-kernel in this run: Inductor compiled that GEMM otherwise, so it is left out."""
    untimed: int = 0
    """Dispatches left out because the variant they ran got no time in this run."""

    def gaps(self) -> list[str]:
        """What the figure leaves out, in words; nothing where it weighs every dispatch."""
        out = []
        if self.unmatched:
            n = len(self.unmatched)
            out.append(f"{n} of the candidate run's {self.sites + n} sites {'was' if n == 1 else 'were'} no size-hint "
                       f"multi-kernel in this run and {'is' if n == 1 else 'are'} left out: "
                       + "; ".join(self.unmatched))
        if self.untimed:
            out.append(f"{self.untimed} dispatch{'es' if self.untimed != 1 else ''} whose variant got no time in this "
                       "run left out")
        return out


def recorded_regret(candidate: Session, tabs: Sequence[SiteTable], run: Session) -> RunRegret:
    """A verification run's regret, its sites matched to the candidate run's by what the user
    calls them (another compile numbers its multi-kernels apart)."""
    theirs = {label: name for name, label in site_labels(run).items()}
    labels = site_labels(candidate)
    timings = run.timings()
    picks = Counter((e.site, e.key, e.picked) for e in run.events)
    spent = best = 0.0
    unmatched, untimed, weighed = [], 0, 0
    for t in tabs:
        name = theirs.get(labels[t.site])
        if name is None:
            unmatched.append(labels[t.site])
            continue
        weighed += 1
        fastest = dict(zip(t.keys, t.best))
        for (site, key, picked), n in picks.items():
            if site != name or key not in fastest:
                continue
            timed = timings.get((site, key))
            us = timed.median(picked) if timed is not None else None
            if us is None:
                untimed += n
                continue
            spent += n * us
            best += n * float(fastest[key])
    return RunRegret(spent / best if best > 0 else None, weighed, tuple(unmatched), untimed)


def untimed_reasons(session: Session, workload: Workload, limit: int = 3) -> list[str]:
    """Why no workload size could be weighed: per site, what is missing at its first size
    that lacks a time (for the one-line error when nothing is left to advise on)."""
    timings = session.timings()
    calls = ModelCalls(session)
    full = {s.label: s.example for s in session.symbols if s.example is not None}
    out = []
    for site in session.sites:
        why = next((got for sizes, _ in workload.points
                    if isinstance(got := _timed(session, site, {**full, **sizes}, calls, timings), str)), None)
        if why is not None:
            out.append(f"{site.name}: {why}")
        if len(out) == limit:
            break
    return out


def workload_regret(tabs: Sequence[SiteTable], subset: Sequence[int]) -> float | None:
    """The workload's GPU time at these sites when Inductor decides among `subset`'s
    variants, over the fastest candidate kernel's (1.0: the oracle); None when a site has
    no variant for the subset."""
    proposal = _proposal(tabs, tuple(subset))
    return None if proposal is None else proposal.regret


def _site_times(tabs: Sequence[SiteTable], subset: Sequence[int]) -> list[tuple[str, float, float]] | None:
    """Per site, its weighed GPU time with Inductor's picks among `subset`'s variants and
    with the fastest candidate kernel at every row; None when a site has no variant for
    the subset."""
    allowed = set(subset)
    out = []
    for t in tabs:
        cols = t.allowed(allowed)
        if not cols:
            return None
        pick = np.asarray(cols)[np.argmin(t.distances[:, cols], axis=1)]  # the first minimum, as Inductor
        out.append((t.site, float((t.weights * t.times[np.arange(len(pick)), pick]).sum()),
                    float((t.weights * t.best).sum())))
    return out


@dataclass(frozen=True)
class Proposal:
    hints: tuple[int, ...]
    regret: float
    """Predicted: the workload's GPU time with these hints over the oracle's (one compile)."""
    worst_site: str | None = None
    worst: float | None = None
    """Predicted: the site that fares worst with these hints, and its GPU time over the
    oracle's there (the goal holds every site, not the sum alone)."""


def _proposal(tabs: Sequence[SiteTable], hints: tuple[int, ...]) -> Proposal | None:
    times = _site_times(tabs, hints)
    best = 0.0 if times is None else sum(b for _, _, b in times)
    if times is None or best <= 0:
        return None
    worst, site = max(((s / b, site) for site, s, b in times if b > 0), default=(None, None))
    return Proposal(hints, sum(s for _, s, _ in times) / best, site, worst)


@dataclass(frozen=True)
class Tie:
    """A key at which the hints' variants tie at Inductor's least distance and the one its
    rule runs (the first) is slower than another tied one (`equally-near`, on the tables)."""

    site: str
    key: Key
    runs: int
    """The hint whose variant Inductor runs."""
    faster: int
    """The hint of the fastest variant tied with it."""
    slower_by: float


def ties(tabs: Sequence[SiteTable], subset: Sequence[int]) -> list[Tie]:
    """Every such key at these sites with `subset` compiled, worst first. The tables hold
    medians without spreads, so slower means by the noise rule's least ratio."""
    out = []
    for t in tabs:
        cols = t.allowed(set(subset))
        if len(cols) < 2:
            continue
        for r, tied in least_ties(t.distances[:, cols]):
            runs, best = cols[tied[0]], min((cols[c] for c in tied), key=lambda c: t.times[r, c])
            first, other = t.hints[runs], t.hints[best]
            if first is not None and other is not None and t.times[r, runs] >= NOISE_RATIO * t.times[r, best]:
                out.append(Tie(t.site, t.keys[r], first, other, float(t.times[r, runs] / t.times[r, best])))
    return sorted(out, key=lambda x: -x.slower_by)


def ties_note(found: Sequence[Tie], hints: Sequence[int], labels: Mapping[str, str]) -> str | None:
    """One line on the proposal's ties, with the hints between the tied ones in log2 to try
    as candidates; None where it leaves none."""
    if not found:
        return None
    worst = found[0]
    between = sorted({m for t in found if (m := between_hint(t.runs, t.faster)) is not None})
    sites = len({t.site for t in found})
    text = (f"with hints {', '.join(map(str, hints))}, Inductor's rule breaks a tie toward the slower variant at "
            f"{len(found)} key{'s' if len(found) != 1 else ''} ({sites} site{'s' if sites != 1 else ''}; the worst: "
            f"{labels.get(worst.site, worst.site)} at {format_key(worst.key)} runs hint {worst.runs}'s variant, "
            f"{ratio(worst.slower_by)} slower than hint {worst.faster}'s)")
    if between:
        text += (f"; {'hint' if len(between) == 1 else 'hints'} {', '.join(map(str, between))}, between the tied "
                 "ones in log2, may decide them: --candidates with "
                 f"{'it' if len(between) == 1 else 'them'} measures that")
    return text


def default_prediction(tabs: Sequence[SiteTable]) -> Proposal | None:
    """The default hints' prediction, where each of them has a candidate variant at every
    site (its own, or one it shares with a hint tuned at the same sizes)."""
    if not all(t.allowed({h}) for t in tabs for h in DEFAULT_HINTS):
        return None
    return _proposal(tabs, DEFAULT_HINTS)


def search(tabs: Sequence[SiteTable], max_hints: int) -> list[Proposal]:
    """Every subset of at most `max_hints` of the compiled hints, best first (lowest
    predicted regret, then fewer hints, then smaller hints)."""
    if max_hints < 1:
        raise KinspectError(f"--max-hints takes 1 or more, got {max_hints}")
    hints = sorted({h for t in tabs for h in t.hints if h is not None})
    out = []
    for r in range(1, min(max_hints, len(hints)) + 1):
        for subset in itertools.combinations(hints, r):
            proposal = _proposal(tabs, subset)
            if proposal is not None:
                out.append(proposal)
    out.sort(key=lambda p: (round(p.regret, 9), len(p.hints), p.hints))
    return out


def hint_key(site: Site, hint: int) -> Key:
    """The key Inductor gives the variant for `hint`: the compiled variant's where there is
    one, else each tensor's sizes with the hint substituted."""
    for v in site.variants:
        if v.hint == hint and v.key is not None:
            return v.key
    return tuple(t.key_at_hint(hint) for t in site.tensors)


def measured_regret(session: Session, tabs: Sequence[SiteTable], recompile: Recompile,
                    own: Session | None = None) -> float | None:
    """A verification compile's workload regret: at each size, the variant Inductor picks
    among that compile's hints (decided exactly as Inductor does), timed in that compile,
    over the candidate compile's fastest kernel; None where a size was not timed there.
    With that compile's own session (`own`), each site is weighed at the keys that
    compile's calls had at each size, which need not be the candidate's (a fresh compile
    may lower a GEMM with other arguments: a Llama's rotary GEMM keyed on two tensors in
    one compile, three in another); else at the candidate's keys."""
    groups: dict[tuple[str, Key], list[Measurement]] = {}
    for m in recompile.measurements:
        groups.setdefault((m.site, m.key), []).append(m)
    theirs = ModelCalls(own) if own is not None else None
    spent = best = 0.0
    for t in tabs:
        variants = recompile.variants.get(t.site)
        if not variants:
            return None
        kernels = first_of_kernel([ident for _, ident in variants])
        fresh_site = next((s for s in own.sites if s.name == t.site), None) if own is not None else None
        if theirs is not None and fresh_site is not None:
            keys: list[Key | None] = list(fresh_site.keys)
            try:
                rows = [(i, theirs.keys(fresh_site, t.point_sizes[i])) for i in dict.fromkeys(t.points)]
            except KinspectError:
                return None
        else:
            site = session.site(t.site)
            keys = [None if h is None else hint_key(site, h) for h, _ in variants]
            rows = [(i, {key: n}) for i, key, n in zip(t.points, t.keys, t.calls)]
        for i, seen in rows:
            picks = np.argmin(distance_matrix(list(seen), keys, "inductor"), axis=1)  # the first minimum, as Inductor
            for (key, n), pick in zip(seen.items(), picks):
                mine = key_timings(groups.get((t.site, key), ()), kernels=kernels).median(int(pick))
                if mine is None:
                    return None
                spent += t.point_weights[i] * n * mine
        best += float((t.weights * t.best).sum())
    return spent / best if best > 0 else None


@dataclass(frozen=True)
class RunDispatch:
    """A verification run's own dispatch, as `explain` reads it: Inductor's pick over the
    fastest of that run's variants at every key the program ran, the geometric mean over the
    whole model and the worst site's. Beside the workload regret (over the candidates'
    fastest kernels), it says whether the runtime rule picks well among the hints' own kernels."""

    geomean: float
    worst_site: str
    worst: float
    one_variant: bool
    """One hint: each site has one variant, its pick is its fastest by definition."""


def dispatch_text(runs: Sequence[RunDispatch]) -> str:
    """`×1.06, worst ×1.17 (multi_kernel_0)`; over compiles, each figure's range
    (`×1.05–×1.06, worst ×1.17–×1.29 over 2 compiles`)."""
    if not runs:
        return "n/a"
    if any(r.one_variant for r in runs):
        return "one variant"
    if len(runs) == 1:
        r = runs[0]
        return f"{ratio(r.geomean)}, worst {ratio(r.worst)} ({r.worst_site})"

    def span(values: list[float]) -> str:
        low, high = min(values), max(values)
        return ratio(low) if ratio(low) == ratio(high) else ratio_range(low, high)

    return (f"{span([r.geomean for r in runs])}, worst {span([r.worst for r in runs])} "
            f"over {len(runs)} compiles")


def spread_text(values: Sequence[float]) -> str:
    """`×1.04` for one compile, `×1.04 (×1.02–×1.09 over 3 compiles)` for several."""
    if not values:
        return "n/a"
    mid = geomean(values)
    if len(values) == 1:
        return f"{ratio(mid)} (one compile)"
    return f"{ratio(mid)} ({ratio_range(min(values), max(values))} over {len(values)} compiles)"
