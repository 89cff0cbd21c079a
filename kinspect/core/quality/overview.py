"""Dispatch quality over the measured shapes: how often Inductor's pick costs, where, how much.

A user opens kinspect with one question: over the shapes my model sees, how much does
the dispatch cost me? At every runtime key where a site's variants were measured, the
pick is compared with the fastest by the one rule in `kinspect.core.session.timings` (preferred
method, fastest, regret, noise), and the points are summed up per site and for the whole
model:

- the share of shapes where the pick is the fastest *within noise*;
- the geometric mean and the worst of pick/fastest (the worst with its sizes);
- weighted by the workload: GPU time lost over the calls the recording made (or the
  model file's workload, when no call was recorded), as a share of the fastest possible.

Every figure comes from one compile: autotuning differs between compiles, so the
summaries say so wherever they are shown.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from operator import attrgetter
from typing import Any

from kinspect.core.dispatch.batch import layout_of, of_layout, score_keys
from kinspect.core.errors import KinspectError
from kinspect.core.numbers import ratio
from kinspect.core.quality.model_calls import ModelCalls
from kinspect.core.session.model import Session, Site
from kinspect.core.dispatch.shapes import Key, SymbolShape, sizes_or_key, sizes_text
from kinspect.core.session.records import build, collector_paused
from kinspect.core.session.timings import KeyTimings, per_site


@dataclass(frozen=True)
class ShapePoint:
    """One measured runtime key of a site, decided and compared."""

    key: Key
    sizes: Mapping[str, int]
    """The user's sizes that give this key, where they are known."""
    picked: int
    fastest: int
    regret: float
    slower: bool
    """The pick is slower than the fastest beyond noise."""
    pick_us: float
    best_us: float


class SiteQuality:
    """A site's dispatch quality over its measured keys. The figures come straight from the
    measured points; the points are named by the user's sizes and sorted only when read
    (explain's table of a 300,000-key sweep needs the name of its worst point alone)."""

    def __init__(self, site: str, measured: Sequence[Measured], namer: Callable[[Key], Mapping[str, int]],
                 order: Callable[[Key], tuple[Any, ...]], lost_us: float = 0.0, best_us: float = 0.0,
                 workload_calls: int = 0, workload_source: str = "") -> None:
        self.site = site
        self._measured = measured
        self._namer = namer
        self._order = order
        """A key's place in the points' order (`SizeNamer.order`: known without naming it)."""
        self.lost_us = lost_us
        """GPU time lost over the workload's calls (pick minus fastest, summed)."""
        self.best_us = best_us
        """The fastest possible GPU time over the same calls."""
        self.workload_calls = workload_calls
        """How many of the workload's calls had measurements to weigh."""
        self.workload_source = workload_source
        """`recorded calls` or `model workload`: what the weights came from."""

    @cached_property
    def points(self) -> tuple[ShapePoint, ...]:
        """Every measured key, named and in the order of its sizes."""
        points = self._named(self._measured)
        points.sort(key=_point_order)
        return tuple(points)

    def _named(self, measured: Iterable[Measured]) -> list[ShapePoint]:
        return build(ShapePoint, [
            {"key": key, "sizes": self._namer(key), "picked": picked, "fastest": t.fastest, "regret": at[0] / at[1],
             "slower": at[2], "pick_us": at[0], "best_us": at[1]}
            for key, t, picked, at in measured])

    @property
    def shapes(self) -> int:
        return len(self._measured)

    @property
    def workload_lost(self) -> float | None:
        """GPU time lost over the workload's calls, as a share of the fastest possible."""
        return self.lost_us / self.best_us if self.best_us > 0 else None

    @cached_property
    def fastest_picked(self) -> float | None:
        return self._fastest / self.shapes if self.shapes else None

    @cached_property
    def _fastest(self) -> int:
        """Shapes where the pick is the fastest within noise."""
        return sum(not at[2] for *_, at in self._measured)

    @cached_property
    def geomean_regret(self) -> float | None:
        return math.exp(self._logs[0] / self._logs[1]) if self._logs[1] else None

    @cached_property
    def _regrets(self) -> list[float]:
        return [at[0] / at[1] for *_, at in self._measured]

    @cached_property
    def _logs(self) -> tuple[float, int]:
        """The sum of the regrets' logs and their count (`geomean`), which the whole model adds up."""
        logs = [math.log(r) for r in self._regrets if r > 0]
        return sum(logs), len(logs)

    @property
    def worst_slower(self) -> float:
        """The highest regret among the picks slower beyond noise; 1.0 where there is none."""
        return max((r for r, (*_, at) in zip(self._regrets, self._measured) if at[2]), default=1.0)

    @cached_property
    def worst(self) -> ShapePoint | None:
        """The highest regret; of equals, the first in the points' order (read off the
        points where they are named already; else only the tied keys are named, and only
        the winner made a point: a sweep can tie at ×1.00 at every one of 300,000 keys)."""
        if not self._measured:
            return None
        if "points" in self.__dict__:
            return max(self.points, key=attrgetter("regret"))
        top = max(self._regrets)
        tied = [m for m, r in zip(self._measured, self._regrets) if r == top]
        order = self._order
        first = min(tied, key=lambda m: order(m[0]))
        return self._named([first])[0]

    def to_json(self) -> dict[str, Any]:
        worst = self.worst
        return {
            "site": self.site,
            "shapes": self.shapes,
            "fastest_picked": _round(self.fastest_picked),
            "slower_shapes": self.shapes - self._fastest,
            "geomean_regret": _round(self.geomean_regret),
            "worst_regret": _round(worst.regret if worst else None),
            "worst_sizes": dict(worst.sizes) if worst else {},
            "worst_key": [list(t) for t in worst.key] if worst else None,
            "workload_lost": _round(self.workload_lost),
            "workload_calls": self.workload_calls,
            "workload_source": self.workload_source,
        }


@dataclass(frozen=True)
class ModelQuality:
    """All sites together: each shape of each site counts once; every figure is derived
    from the sites'."""

    sites: tuple[SiteQuality, ...]

    @property
    def shapes(self) -> int:
        return sum(q.shapes for q in self.sites)

    @property
    def shapes_text(self) -> str:
        """The measured points as the whole model's row counts them: a site at a shape each,
        so 35 shapes at 4 sites read `35 × 4 sites`, not an unexplained 140."""
        counts = [s.shapes for s in self.sites if s.shapes]
        if len(counts) > 1 and len(set(counts)) == 1:
            return f"{counts[0]} × {len(counts)} sites"
        return f"{self.shapes} over {len(counts)} sites" if len(counts) > 1 else str(self.shapes)

    @cached_property
    def fastest_picked(self) -> float | None:
        return sum(q._fastest for q in self.sites) / self.shapes if self.shapes else None

    @cached_property
    def geomean_regret(self) -> float | None:
        total, count = sum(q._logs[0] for q in self.sites), sum(q._logs[1] for q in self.sites)
        return math.exp(total / count) if count else None

    @cached_property
    def worst(self) -> tuple[str, ShapePoint] | None:
        """The worst point of the worst site: each site's is kept, and the first of equals wins, as over all points."""
        worst = max((q for q in self.sites if q.worst is not None), key=lambda q: q.worst.regret, default=None)
        return None if worst is None else (worst.site, worst.worst)

    @cached_property
    def worst_site(self) -> SiteQuality | None:
        """The site whose measured keys have the highest geometric-mean regret (the goal's
        per-site figure), the first of equals."""
        return max((q for q in self.sites if q.geomean_regret is not None), key=lambda q: q.geomean_regret or 0.0,
                   default=None)

    @property
    def workload_lost(self) -> float | None:
        best = sum(q.best_us for q in self.sites)
        return sum(q.lost_us for q in self.sites) / best if best > 0 else None


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def known_sizes(session: Session) -> list[dict[str, int]]:
    """Every set of the user's sizes the session knows was run or measured: sweeps' points,
    the model's workload, baselines; used to name a key by sizes the user typed."""
    out: list[dict[str, int]] = []
    for sweep in session.sweeps:
        out += [dict(p) for p in sweep.points]
    out += [dict(w) for w in session.model.distinct_steps]
    out += [dict(b.sizes) for b in session.baselines]
    return out


class SizeNamer:
    """Names a site's runtime key by the user's sizes: from a known run that gives that key,
    else from the dims that are one symbol each where the key lines up with the site's
    tensors (else it is named by the key itself)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._known = list({tuple(sorted(s.items())): s for s in known_sizes(session)}.values())
        """Each set of sizes once: a long workload repeats its few sizes."""
        self._by_site: dict[str, tuple[dict[Key, dict[str, int]], tuple[tuple[str, int, int], ...],
                                       tuple[int, ...]]] = {}
        self._model_calls: ModelCalls | None = None

    def __call__(self, site: Site, key: Key) -> dict[str, int]:
        table, read_off, ranks = self._known_at(site)
        if key in table:
            return dict(table[key])
        if layout_of(key) != ranks or len(read_off) < len(site.symbols):
            # its dims are not where the sizes would be, or not every size is one: named by the call it came in
            called = self._calls().sizes_at(site, key)
            if called or layout_of(key) != ranks:
                return called
        return {label: key[i][j] for label, i, j in read_off}

    def _calls(self) -> ModelCalls:
        """The recorded model calls, read only where a key needs them."""
        if self._model_calls is None:
            self._model_calls = ModelCalls(self.session)
        return self._model_calls

    def order(self, site: Site) -> Callable[[Key], tuple[Any, ...]]:
        """`_order` of a key's name at `site` (its sizes, then the key) without naming it:
        the worst point of a sweep that ties at every one of 300,000 keys is the first of them."""
        table, read_off, ranks = self._known_at(site)
        labels = tuple({label: (label, i, j) for label, i, j in read_off}.values())  # one dim per name, as a name has

        def order(key: Key) -> tuple[Any, ...]:
            if key in table:
                return _order(table[key], key)
            if layout_of(key) != ranks or len(read_off) < len(site.symbols):
                called = self._calls().sizes_at(site, key)
                if called or layout_of(key) != ranks:
                    return tuple(called.items()), key
            return tuple([(label, key[i][j]) for label, i, j in labels]), key
        return order

    def _known_at(self, site: Site) -> tuple[dict[Key, dict[str, int]], tuple[tuple[str, int, int], ...],
                                             tuple[int, ...]]:
        known = self._by_site.get(site.name)
        if known is None:
            known = self._by_site[site.name] = (self._table(site), self._read_off(site), site.runtime_ranks)
        return known

    def _table(self, site: Site) -> dict[Key, dict[str, int]]:
        table: dict[Key, dict[str, int]] = {}
        for sizes in self._known:
            try:
                k = self.session.runtime_key(site, SymbolShape(sizes))
            except KinspectError:
                continue
            table.setdefault(k, self.session.in_order(sizes))
        return table

    def _read_off(self, site: Site) -> tuple[tuple[str, int, int], ...]:
        """Where a key of the site's layout holds each symbol: `symbol_values`'s first dim of
        each, by symbol name, with the user's label (a sweep names 300,000 keys this way)."""
        first: dict[str, tuple[int, int]] = {}
        for name, i, j in site.symbol_dims:
            first.setdefault(name, (i, j))
        rank = {s.name: n for n, s in enumerate(self.session.symbols)}  # the batch before the sequence
        return tuple((self.session.label_of(name), i, j)
                     for name, (i, j) in sorted(first.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))


def session_namer(session: Session) -> SizeNamer:
    """One `SizeNamer` while the measurements, the names and the known sizes stand: each
    keystroke in the inspector names the measured keys near an unmeasured shape."""
    known = (tuple(s.label for s in session.symbols), len(session.baselines), len(session.sweeps),
             len(session.model.workload))
    return session.from_timings(("size namer", known), lambda: SizeNamer(session))


Measured = tuple[Key, KeyTimings, int, tuple[float, float, bool]]
"""A measured key, its timings, the pick there and `KeyTimings.against_fastest` of it."""


def measured_points(site: Site, timings: Mapping[tuple[str, Key], KeyTimings], heuristic: str = "inductor",
                    variants: Sequence[int] | None = None) -> list[Measured]:
    """Each key of `site` where the pick and the fastest were both timed, in the timings'
    order: a site's quality points before they are named and sorted, which is all the
    slow-pick rule needs at a site where no pick is slower (a sweep has 300,000)."""
    mine = [(key, t) for (name, key), t in timings.items() if name == site.name and t.fastest is not None]
    chosen = picks(site, [key for key, _ in mine], heuristic, variants)
    timed = map(KeyTimings.against_fastest, [t for _, t in mine], chosen)
    return [(key, t, picked, at) for (key, t), picked, at in zip(mine, chosen, timed) if at is not None]


def session_quality(session: Session, site: Site, namer: SizeNamer | None = None) -> SiteQuality:
    """`site_quality` of the session's own timings by Inductor's rule, worked out once while
    the measurements stand and no dispatch is added (its workload weighs the recorded calls)."""
    return session.from_timings(("site quality", site.name, len(session.events)), lambda: site_quality(
        session, site, session.site_timings(site.name), namer=namer, measured=session_points(session, site)))


def session_points(session: Session, site: Site) -> list[Measured]:
    """`measured_points` of the session's own timings by Inductor's rule, worked out once
    while the measurements stand: the slow-pick rule at load and explain's table ask alike."""
    return session.from_timings(("measured points", site.name),
                                lambda: measured_points(site, session.site_timings(site.name)))


def site_quality(session: Session, site: Site, timings: Mapping[tuple[str, Key], KeyTimings] | None = None,
                 heuristic: str = "inductor", namer: SizeNamer | None = None,
                 variants: Sequence[int] | None = None, measured: list[Measured] | None = None) -> SiteQuality:
    """Every measured key of `site`, decided by `heuristic` (among `variants` only, for a
    what-if on a subset of the hints) and compared with the fastest of all variants;
    `measured`: its `measured_points`, where they are worked out already."""
    timings = timings if timings is not None else session.timings()
    namer = namer or SizeNamer(session)
    measured = measured if measured is not None else measured_points(site, timings, heuristic, variants)
    lost, best, calls, source = _workload_lost(session, site, timings, heuristic, variants)
    return SiteQuality(site.name, measured, functools.partial(namer, site), namer.order(site), lost, best, calls,
                       source)


def _point_order(p: ShapePoint) -> tuple[Any, ...]:
    return _order(p.sizes, p.key)


def _order(sizes: Mapping[str, int], key: Key) -> tuple[Any, ...]:
    """Points go by their sizes (in the order of the session's symbols), then their keys."""
    return tuple(sizes.items()), key


def pick(site: Site, key: Key, heuristic: str = "inductor", variants: Sequence[int] | None = None) -> int:
    """The variant a heuristic picks at `key`, among `variants` only when given."""
    if variants is None:
        return site.decide(key, heuristic).chosen
    from kinspect.core.dispatch.decision import decide

    sub = decide([site.variants[v].key for v in variants], key, heuristic)
    return variants[sub.chosen]


def picks(site: Site, keys: Sequence[Key], heuristic: str = "inductor",
          variants: Sequence[int] | None = None) -> list[int]:
    """`pick` at each of many keys, in their order: Inductor's rule in one numpy pass per key
    layout (a sweep or a recording may measure 300,000 keys; one `decide` each takes
    seconds), the others and any key whose layout a variant does not share one at a time."""
    subset = list(range(len(site.variants))) if variants is None else list(variants)
    hint_keys = [site.variants[v].key for v in subset]
    out: list[int | None] = [None] * len(keys)
    if heuristic == "inductor" and len(keys) > 1:
        groups: dict[tuple[int, ...], list[int] | None] = {}
        if of_layout(keys, layout_of(keys[0])).all():
            groups[layout_of(keys[0])] = None  # every key: a sweep's usual case
        else:
            for i, layout in enumerate(map(layout_of, keys)):
                groups.setdefault(layout, []).append(i)  # type: ignore[union-attr]
        for layout, where in groups.items():
            if all(h is not None and layout_of(h) == layout for h in hint_keys):
                chosen = score_keys(keys if where is None else [keys[i] for i in where], hint_keys).chosen.tolist()
                if where is None:
                    out = [subset[c] for c in chosen]
                else:
                    for i, c in zip(where, chosen):
                        out[i] = subset[c]
    return [pick(site, k, heuristic, variants) if c is None else c for k, c in zip(keys, out)]


def workload_calls(session: Session, site: Site) -> tuple[dict[Key, int], str]:
    """Calls per key at `site` and where they come from: the recorded workload's calls when
    there are any (what Inductor really ran; the compile's and measurements' runs are not
    the workload), else the model file's workload."""
    calls = _recorded_calls(session, site.name)
    if calls:
        return calls, "recorded calls"
    for sizes, n in session.model.distinct_steps.items():
        try:
            key = session.runtime_key(site, SymbolShape(dict(sizes)))
        except KinspectError:
            continue
        calls[key] = calls.get(key, 0) + n
    return calls, "model workload"


def _workload_lost(session: Session, site: Site, timings: Mapping[tuple[str, Key], KeyTimings],
                   heuristic: str, variants: Sequence[int] | None) -> tuple[float, float, int, str]:
    """(GPU us lost, fastest possible us, weighed calls, source) over the workload's calls;
    a what-if re-decides each call."""
    calls, source = workload_calls(session, site)
    lost = best = 0.0
    weighed = 0
    timed = [(key, t) for key in calls if (t := timings.get((site.name, key))) is not None and t.fastest is not None]
    for (key, t), picked in zip(timed, picks(site, [key for key, _ in timed], heuristic, variants)):
        n = calls[key]
        mine, fastest = t.median(picked), t.median(t.fastest)
        if mine is None or fastest is None:
            continue
        lost += n * (mine - fastest)
        best += n * fastest
        weighed += n
    return lost, best, weighed, source


def _recorded_calls(session: Session, site: str) -> dict[Key, int]:
    from kinspect.core.session.eventlog import EventLog

    events = session.events
    if isinstance(events, EventLog):
        return events.calls_per_key(site)
    out: dict[Key, int] = {}
    for e in events:
        if e.site == site and e.step is not None:
            out[e.key] = out.get(e.key, 0) + 1
    return out


def model_quality(session: Session, heuristic: str = "inductor",
                  timings: Mapping[tuple[str, Key], KeyTimings] | None = None) -> ModelQuality:
    namer = SizeNamer(session)
    with collector_paused():
        if timings is None:
            return ModelQuality(tuple(
                session_quality(session, s, namer) if heuristic == "inductor" else
                site_quality(session, s, session.site_timings(s.name), heuristic, namer) for s in session.sites))
        by_site = per_site(timings)
        return ModelQuality(tuple(site_quality(session, s, by_site.get(s.name, {}), heuristic, namer)
                                  for s in session.sites))


def worst_regrets(session: Session, timings: Mapping[tuple[str, Key], KeyTimings] | None = None
                  ) -> dict[str, float]:
    """Each measured site's worst pick/fastest (for the inspector's site list), counting
    only picks slower beyond noise: within noise a site shows none."""
    out = {}
    for q in model_quality(session, timings=timings).sites:
        if q.shapes:
            out[q.site] = q.worst_slower
    return out


def ranges_text(points: Sequence[ShapePoint], site: Site, labels: Sequence[str]) -> list[str]:
    """The runs of consecutive points (in size order) where the pick is slower beyond
    noise, each as `B=100..128: v0 runs, v1 is fastest (worst ×1.33 at B=100)`."""
    runs: list[list[ShapePoint]] = []
    current: list[ShapePoint] = []
    for p in points:
        if current and (not p.slower or (p.picked, p.fastest) != (current[-1].picked, current[-1].fastest)
                        or _head(p) != _head(current[-1])):
            runs.append(current)
            current = []
        if p.slower:
            current.append(p)
    if current:
        runs.append(current)
    out = []
    for run in runs:
        worst = max(run, key=lambda p: p.regret)
        span = _span(run[0], run[-1])  # a run has one pick and one fastest: a change starts the next
        out.append(f"{span}: {labels[run[0].picked]} runs, {labels[run[0].fastest]} is fastest "
                   f"(worst {ratio(worst.regret)} at {_sizes_text(worst)})")
    return out


def _head(p: ShapePoint) -> tuple[tuple[str, int], ...]:
    """Every size of a point but the last in its order: a run spans the last size alone
    (`S=100..102 (B=3)`), never from one batch into the next."""
    return tuple(p.sizes.items())[:-1]


def _sizes_text(p: ShapePoint) -> str:
    return sizes_or_key(p.sizes, p.key)


def _span(first: ShapePoint, last: ShapePoint) -> str:
    if first is last:
        return _sizes_text(first)
    a, b = dict(first.sizes), dict(last.sizes)
    if a and a.keys() == b.keys():
        differ = [k for k in a if a[k] != b[k]]
        if len(differ) == 1:
            k = differ[0]
            same = sizes_text({n: v for n, v in a.items() if n != k})
            return f"{k}={a[k]}..{b[k]}" + (f" ({same})" if same else "")
    return f"{_sizes_text(first)} .. {_sizes_text(last)}"
