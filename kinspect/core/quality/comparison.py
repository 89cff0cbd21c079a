"""The PR's comparison, for any model: the whole model's GPU time per shape, five ways.

The PR that added size-hint dispatch justified its log2-distance heuristic with one table
on one benchmark: shape-similarity selection against full benchmarking and against a
compile whose only hint is the exact runtime size. `kinspect compare` rebuilds it from the
session's baselines at each shape:

- `hinted`: the compile under inspection, Inductor's own picks (timed in kinspect's process);
- `oracle`: the same compile with the fastest measured variant forced at every site, the
  ceiling for any selection heuristic among these kernels;
- `exact_hint`, `static`, `eager`: compiled afresh in processes of their own.

Per kind: the geometric mean, over the shapes where every shown kind was timed, of its
time over the best kind's at that shape. Times are summed CUPTI kernel time per call.
The fresh compiles autotune anew, so a gap between `hinted` and `exact_hint` at one shape
mixes the hint's effect with compile-to-compile noise; the summary says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kinspect.core.session.runtime import Baseline
from kinspect.core.session.model import Session
from kinspect.core.session.timings import geomean

KINDS = ("hinted", "oracle", "exact_hint", "static", "eager")
TITLES = {
    "hinted": "hinted (this compile)",
    "oracle": "oracle (this compile, fastest forced)",
    "exact_hint": "exact_hint (fresh compile)",
    "static": "static (fresh compile)",
    "eager": "eager",
}


@dataclass(frozen=True)
class Row:
    sizes: Mapping[str, int]
    times: Mapping[str, float | None]
    """Per kind, the whole model's GPU us per call (None: not timed, or it failed)."""
    errors: Mapping[str, str]

    @property
    def best(self) -> str | None:
        timed = {k: t for k, t in self.times.items() if t is not None and t > 0}
        return min(timed, key=lambda k: (timed[k], KINDS.index(k)), default=None)


@dataclass(frozen=True)
class Comparison:
    kinds: tuple[str, ...]
    rows: tuple[Row, ...]

    @property
    def complete(self) -> list[Row]:
        """The shapes where every kind has a time: the only ones the summary averages."""
        return [r for r in self.rows if all(r.times.get(k) for k in self.kinds)]

    def slowdown(self, kind: str) -> float | None:
        """Geometric mean over the complete shapes of this kind's time over the best's."""
        return geomean(r.times[kind] / r.times[r.best]  # type: ignore[operator]
                       for r in self.complete if r.best is not None)

    def wins(self, kind: str) -> int:
        return sum(r.best == kind for r in self.complete)


def _name(sizes: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(sizes.items()))


def comparison(session: Session) -> Comparison | None:
    """The comparison over every shape where the inspected compile was timed whole
    (`kinspect compare`); None when it never was. The latest timing of each kind counts."""
    latest: dict[tuple[tuple[str, int], ...], dict[str, Baseline]] = {}
    order: list[tuple[tuple[str, int], ...]] = []
    for b in session.baselines:
        if b.kind == "hinted" and not b.inspected:
            continue  # a fresh hinted compile is not the compile under inspection
        where = _name(b.sizes)
        if where not in latest:
            latest[where] = {}
            order.append(where)
        latest[where][b.kind] = b
    shapes = [w for w in order if any(b.inspected for b in latest[w].values())]
    if not shapes:
        return None
    kinds = tuple(k for k in KINDS if any(k in latest[w] for w in shapes))
    rows = []
    for w in sorted(shapes, key=lambda w: [v for _, v in w]):
        got = latest[w]
        rows.append(Row(dict(w), {k: got[k].gpu_us if k in got and got[k].error is None else None for k in kinds},
                        {k: got[k].error for k in kinds if k in got and got[k].error}))
    return Comparison(kinds, tuple(rows))


@dataclass(frozen=True)
class Series:
    """The comparison as a chart draws it: one line per kind along the shapes."""

    axis: str
    """The size that varies across the shapes (`B`), or `shape` when several do."""
    xs: tuple[int, ...]
    """That size at each shape (1, 2, ... when several vary)."""
    lines: Mapping[str, tuple[float | None, ...]]


def series(c: Comparison) -> Series:
    names = sorted({k for r in c.rows for k in r.sizes})
    varying = [n for n in names if len({r.sizes.get(n) for r in c.rows}) > 1]
    if len(varying) == 1:
        axis, xs = varying[0], tuple(r.sizes[varying[0]] for r in c.rows)
    else:
        axis, xs = "shape", tuple(range(1, len(c.rows) + 1))
    return Series(axis, xs, {k: tuple(r.times.get(k) for r in c.rows) for k in c.kinds})
