"""A site's decision map: latency of every variant along a swept size, Inductor's pick
marked, decision boundaries and crossovers placed, regret at every measured size.

Built from a sweep when the session has one (its ranges say which size is x); else from
whatever was measured, when the measured sizes differ in exactly one size. Two swept
sizes give a heatmap of regret instead. The inspector's Map tab and `kinspect plot`
draw the same objects, so the terminal and the image cannot disagree.

One kernel emitted at several hints is one line (`v1 = v2`): its variants share their
measurement, and a pick of either is that kernel's point.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from kinspect.core.quality.boundaries import Boundary, Crossover, boundaries, crossovers
from kinspect.core.quality.overview import ShapePoint, site_quality
from kinspect.core.session.model import Session, Site
from kinspect.core.dispatch.shapes import Key
from kinspect.core.session.timings import KeyTimings


@dataclass(frozen=True)
class MapPoint:
    x: int
    sizes: Mapping[str, int]
    key: Key
    times: Mapping[int, float]
    """Median µs of each variant measured here (by the preferred method)."""
    point: ShapePoint
    """Pick, fastest, regret and the noise verdict at this size."""


@dataclass(frozen=True)
class DecisionMap:
    site: str
    symbol: str
    """The size along x (the user's name)."""
    fixed: Mapping[str, int]
    """The other sizes, held where the sweep held them."""
    points: tuple[MapPoint, ...]
    variants: tuple[int, ...]
    """The kernels drawn, each by its first variant."""
    labels: tuple[str, ...]
    """Per variant index: its kernel's label (`v1 = v2 (hints 256, 4096)`)."""
    boundaries: tuple[Boundary, ...] = ()
    crossovers: tuple[Crossover, ...] = ()
    span: tuple[int, int] = (1, 1)
    """The x range the boundaries were searched over (the sweep's range)."""

    @property
    def xs(self) -> list[int]:
        return [p.x for p in self.points]

    def nearest(self, x: float) -> int:
        """Index of the measured point closest to x on a log axis."""
        return min(range(len(self.points)), key=lambda i: abs(math.log2(self.points[i].x) - math.log2(max(x, 1e-9))))


@dataclass(frozen=True)
class Heatmap:
    """Regret over two swept sizes; None where nothing was measured."""

    site: str
    x_symbol: str
    y_symbol: str
    xs: tuple[int, ...]
    ys: tuple[int, ...]
    regret: tuple[tuple[float | None, ...], ...]
    """Rows by y, columns by x."""
    picked: tuple[tuple[int | None, ...], ...]
    fixed: Mapping[str, int] = field(default_factory=dict)


def decision_map(session: Session, site: Site, timings: Mapping[tuple[str, Key], KeyTimings] | None = None
                 ) -> DecisionMap | Heatmap | None:
    """The map of `site` from the latest sweep, or from its measured sizes; None when
    fewer than two sizes were measured along one size."""
    timings = timings if timings is not None else session.timings()
    q = site_quality(session, site, timings)
    points = [p for p in q.points if p.sizes]
    if len(points) < 2:
        return None
    sweep = session.sweeps[-1] if session.sweeps else None
    axes = [n for n in sweep.ranges] if sweep is not None else _varying(points)
    axes = [a for a in axes if any(a in p.sizes for p in points)]
    if len(axes) >= 2:
        return _heatmap(site, points, axes[0], axes[1])
    if len(axes) != 1:
        return None
    symbol = axes[0]
    fixed = _fixed(points, symbol)
    along = [p for p in points if symbol in p.sizes and all(p.sizes.get(k) == v for k, v in fixed.items())]
    along.sort(key=lambda p: p.sizes[symbol])
    if len(along) < 2:
        return None
    kernels = site.kernels
    drawn = tuple(dict.fromkeys(kernels))
    mpoints = tuple(
        MapPoint(p.sizes[symbol], p.sizes, p.key,
                 {v: t for v in drawn if (t := timings[(site.name, p.key)].median(v)) is not None},
                 replace(p, picked=kernels[p.picked], fastest=kernels[p.fastest]))
        for p in along
    )
    lo, hi = (sweep.ranges[symbol] if sweep is not None and symbol in sweep.ranges
              else (mpoints[0].x, mpoints[-1].x))
    found = boundaries(session, site, symbol, lo, hi, fixed) if lo < hi else []
    cross = crossovers([p.x for p in mpoints], [timings[(site.name, p.key)] for p in mpoints])
    labels = tuple(site.kernel_label(v.index) for v in site.variants)
    return DecisionMap(site.name, symbol, fixed, mpoints, drawn, labels, tuple(found), tuple(cross), (lo, hi))


def _varying(points: list[ShapePoint]) -> list[str]:
    names = sorted({n for p in points for n in p.sizes})
    return [n for n in names if len({p.sizes.get(n) for p in points}) > 1]


def _fixed(points: list[ShapePoint], symbol: str) -> dict[str, int]:
    """The other sizes, at the values most points share."""
    out: dict[str, int] = {}
    for name in sorted({n for p in points for n in p.sizes} - {symbol}):
        values = [p.sizes[name] for p in points if name in p.sizes]
        out[name] = max(set(values), key=values.count)
    return out


def _heatmap(site: Site, points: list[ShapePoint], x: str, y: str) -> Heatmap:
    xs = sorted({p.sizes[x] for p in points if x in p.sizes})
    ys = sorted({p.sizes[y] for p in points if y in p.sizes})
    at = {(p.sizes.get(x), p.sizes.get(y)): p for p in points}
    regret = tuple(tuple(at[(xv, yv)].regret if (xv, yv) in at else None for xv in xs) for yv in ys)
    picked = tuple(tuple(site.kernels[at[(xv, yv)].picked] if (xv, yv) in at else None for xv in xs) for yv in ys)
    fixed = {k: v for k, v in _fixed(points, x).items() if k != y}
    return Heatmap(site.name, x, y, tuple(xs), tuple(ys), regret, picked, fixed)
