"""Which sizes a sweep measures: a log-spaced grid, both sides of every decision
boundary, and the workload's own sizes.

A grid alone misses what matters most: regret piles up right below a boundary (the last
size still picking the smaller hint's kernel), so the core finds each boundary with the
heuristic and adds the size on either side of it. With two swept sizes the grid is their
product (a heatmap), and boundaries are found along each axis at each grid value of the
other. A size the model names but the sweep does not vary stays at its example value.

When a key's dim is a product of sizes (B*S rows of a transformer's GEMM), a sweep of B
moves that product with S held at its example: the map's x is B, the key sees B*S.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from kinspect.core.quality.boundaries import boundaries, log_grid
from kinspect.core.errors import ShapeError
from kinspect.core.session.model import Session
from kinspect.core.dispatch.shapes import MAX_SIZE

_RANGE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(\d+)\s*\.\.\s*(\d+)\s*$")
MAX_POINTS = 4096


def parse_range(text: str) -> tuple[str, tuple[int, int]]:
    """`B=1..16384` -> ("B", (1, 16384)); anything else is one line saying what is expected."""
    m = _RANGE.match(text)
    shown = text if len(text) <= 60 else text[:57] + "..."
    if m is None:
        raise ShapeError(f"a range reads NAME=LO..HI, e.g. B=1..16384; got {shown!r}")
    if max(len(m[2]), len(m[3])) > len(str(MAX_SIZE)):  # before int(): Python refuses > 4300 digits
        raise ShapeError(f"range {shown!r}: need 1 <= LO <= HI <= 2**62")
    lo, hi = int(m[2]), int(m[3])
    if not 1 <= lo <= hi <= MAX_SIZE:
        raise ShapeError(f"range {shown!r}: need 1 <= LO <= HI <= 2**62")
    return m[1], (lo, hi)


def parse_ranges(texts: Sequence[str]) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for text in texts:
        name, span = parse_range(text)
        if name in out:
            raise ShapeError(f"{name} has two ranges; give one per size")
        out[name] = span
    if not out:
        raise ShapeError("give at least one range, e.g. --range B=1..16384")
    return out


def axis_points(points: int, dims: int) -> int:
    """Points per axis for `points` in all: a 2-D sweep of 48 measures about 7 x 7."""
    return max(2, round(points ** (1 / dims)))


def plan(session: Session, ranges: Mapping[str, tuple[int, int]], points: int,
         examples: Mapping[str, int], workload: Sequence[Mapping[str, int]] = ()) -> list[dict[str, int]]:
    """The sizes to measure, each a full set of the user's sizes, in increasing order."""
    if not 2 <= points <= MAX_POINTS:
        raise ShapeError(f"--points takes 2..{MAX_POINTS}, got {points}")
    names = list(ranges)
    base = {k: v for k, v in examples.items() if k not in ranges}
    grids = {n: log_grid(*ranges[n], axis_points(points, len(names))) for n in names}
    out: set[tuple[tuple[str, int], ...]] = set()

    def add(sizes: Mapping[str, int]) -> None:
        out.add(tuple(sorted({**base, **sizes}.items())))

    for combo in _product([grids[n] for n in names]):
        add(dict(zip(names, combo)))
    for n in names:
        others = [m for m in names if m != n]
        for combo in _product([grids[m] for m in others]) if others else [()]:
            fixed = {**base, **dict(zip(others, combo))}
            for site in session.sites:
                for b in boundaries(session, site, n, *ranges[n], fixed):
                    add({**fixed, n: b.last})
                    add({**fixed, n: b.first})
    for step in workload:
        if all(lo <= step.get(n, lo) <= hi for n, (lo, hi) in ranges.items()):
            add(dict(step))
    order = names + sorted(base)
    return [dict(p) for p in sorted(out, key=lambda p: [dict(p).get(n, 0) for n in order])]


def _product(axes: Sequence[Sequence[int]]) -> list[tuple[int, ...]]:
    combos: list[tuple[int, ...]] = [()]
    for axis in axes:
        combos = [c + (x,) for c in combos for x in axis]
    return combos


def describe(ranges: Mapping[str, tuple[int, int]], sizes: int) -> str:
    spans = ", ".join(f"{n}={lo}..{hi}" for n, (lo, hi) in ranges.items())
    return f"{sizes} sizes over {spans} (log-spaced, plus both sides of each decision boundary and the workload)"

