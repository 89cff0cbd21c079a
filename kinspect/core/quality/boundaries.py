"""Where a site's pick changes along one size: the decision boundaries a sweep must straddle.

Regret concentrates next to the boundaries (the H200's Linear picks v0 up to B=128 and
v1 from B=129), so a sweep measures both sides of each, found with the heuristic itself
rather than assumed: for Inductor's rule they fall at the geometric midpoints of adjacent
hints, ties going to the first variant, but keys with several symbolic dims, constant
dims or a product (B*S) move them. A dense log-spaced scan finds each interval where the
pick differs, then bisection on integers finds the exact last size of one pick and the
first of the next.

A pick that moves between variants running one kernel (two hints whose autotuning
emitted the same config) changes nothing, so it is no boundary: picks are compared as
kernels (`Site.kernels`), each named by its first variant.

Also here: the grid itself (log-spaced integer sizes) and crossovers, the sizes between
which the *fastest* measured kernel changes beyond noise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from kinspect.core.errors import KinspectError
from kinspect.core.session.model import Session, Site
from kinspect.core.dispatch.shapes import SymbolShape
from kinspect.core.session.timings import KeyTimings

_SCAN = 512


@dataclass(frozen=True)
class Boundary:
    """Between `last` (the last size picking `before`) and `first` (picking `after`)."""

    symbol: str
    last: int
    first: int
    before: int
    after: int


def log_grid(lo: int, hi: int, points: int) -> list[int]:
    """`points` integer sizes spaced evenly in log2 from lo to hi inclusive (fewer where
    they round to the same integer)."""
    if lo < 1 or hi < lo:
        raise KinspectError(f"a size range needs 1 <= lo <= hi, got {lo}..{hi}")
    if points < 2 or lo == hi:
        return [lo] if lo == hi else [lo, hi]
    a, b = math.log2(lo), math.log2(hi)
    out = {lo, hi}
    for i in range(points):
        out.add(min(hi, max(lo, round(2 ** (a + (b - a) * i / (points - 1))))))
    return sorted(out)


def _picker(session: Session, site: Site, fixed: Mapping[str, int], symbol: str,
            heuristic: str) -> Callable[[int], int | None]:
    cache: dict[int, int | None] = {}

    def pick(x: int) -> int | None:
        if x not in cache:
            try:
                key = session.runtime_key(site, SymbolShape({**fixed, symbol: x}))
            except KinspectError:
                cache[x] = None
            else:
                cache[x] = site.kernels[site.decide(key, heuristic).chosen]
        return cache[x]

    return pick


def boundaries(session: Session, site: Site, symbol: str, lo: int, hi: int,
               fixed: Mapping[str, int] | None = None, heuristic: str = "inductor") -> list[Boundary]:
    """Every size in lo..hi where the site's picked kernel changes as `symbol` grows, the
    other sizes held at `fixed`."""
    pick = _picker(session, site, dict(fixed or {}), symbol, heuristic)
    grid = log_grid(lo, hi, _SCAN)
    out = []
    for a, b in zip(grid, grid[1:]):
        pa, pb = pick(a), pick(b)
        if pa is None or pb is None or pa == pb:
            continue
        while b - a > 1:  # invariant: pick(a) == pa != pick(b)
            mid = (a + b) // 2
            if pick(mid) == pa:
                a = mid
            else:
                b = mid
        out.append(Boundary(symbol, a, b, pa, pick(b)))  # type: ignore[arg-type]
    return out


@dataclass(frozen=True)
class Crossover:
    """Between two measured sizes the fastest variant changes from `before` to `after`."""

    last: float
    first: float
    before: int
    after: int


def crossovers(xs: Sequence[float], timings: Sequence[KeyTimings]) -> list[Crossover]:
    """Where the fastest kernel changes along the measured sizes, by the noise rule: the
    kernel that was fastest stays so until, at some size, it is slower than the new fastest
    beyond noise (`KeyTimings.slower`). Two kernels trading places inside their spread, or
    one kernel's copies at two hints, make no crossover."""
    out = []
    leader: int | None = None
    last: float | None = None
    for x, t in zip(xs, timings):
        if t.fastest is None:
            continue
        if leader is None:
            leader = t.fastest
        elif not t.is_fastest(leader) and (t.median(leader) is None or t.slower(leader)):
            assert last is not None
            out.append(Crossover(last, x, t.kernel(leader), t.fastest))
            leader = t.fastest
        last = x
    return out
