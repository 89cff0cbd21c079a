"""Decision maps as image files (PNG, SVG), drawn with matplotlib.

For pull requests and bug reports people would rather look at a picture than a terminal
screenshot. The maps are the core's `DecisionMap` / `Heatmap` objects, the same the
inspector's Map tab draws, so the picture and the terminal agree. matplotlib is an
optional extra (`pip install 'kinspect[plot]'`); without it this module says so in one
line instead of failing on import.
"""

from __future__ import annotations

import math
from typing import Any
from pathlib import Path

from kinspect.core.quality.comparison import TITLES, comparison, series
from kinspect.core.quality.decision_map import DecisionMap, Heatmap, decision_map
from kinspect.core.dispatch.shapes import sizes_text
from kinspect.core.errors import KinspectError
from kinspect.core.numbers import US, ratio
from kinspect.core.session.model import Session
from kinspect.core.store import write_with

FORMATS = (".png", ".svg")
UNMEASURED = "#d9d9d9"
"""A heatmap cell without a measurement: grey, apart from every regret's red."""


def _pyplot():  # type: ignore[no-untyped-def]
    try:
        import matplotlib
    except ImportError:
        raise KinspectError("drawing images needs matplotlib: pip install 'kinspect[plot]'") from None
    matplotlib.use("Agg")
    # Site names, symbols and sizes come from a session: `$\\foo$` in one must be drawn as
    # the characters it is, never parsed as mathtext (a ParseException) or handed to TeX.
    matplotlib.rcParams.update({"text.parse_math": False, "text.usetex": False})
    import matplotlib.pyplot as plt

    return plt


def maps(session: Session) -> list[DecisionMap | Heatmap]:
    timings = session.timings()
    return [m for s in session.sites if (m := decision_map(session, s, timings)) is not None]


def draw(session: Session, out: str | Path, site: str | None = None) -> int:
    """Write every site's map (or one site's) into one figure; returns how many maps."""
    out = Path(out)
    if out.suffix.lower() not in FORMATS:
        raise KinspectError(f"{out.name}: an image file ends in {' or '.join(FORMATS)}")
    found = [m for m in maps(session) if site is None or m.site == site]
    if site is not None and not any(s.name == site for s in session.sites):
        session.site(site)  # raises the one-line "no site named" error
    if not found:
        raise KinspectError("no map to draw: measure at two or more sizes first (kinspect sweep model.py --range ...)")
    plt = _pyplot()
    fig, axes = plt.subplots(len(found), 1, figsize=(9, 3.6 * len(found)), squeeze=False)
    for ax, m in zip(axes[:, 0], found):
        if isinstance(m, Heatmap):
            _heatmap(fig, ax, m)
        else:
            _curves(ax, m)
    _save(plt, fig, out)
    return len(found)


def draw_comparison(session: Session, out: str | Path) -> None:
    """The `kinspect compare` figures as one chart: the whole model's GPU time per kind
    along the shapes (log axes), the per-kind geometric-mean slowdown in the legend."""
    out = Path(out)
    if out.suffix.lower() not in FORMATS:
        raise KinspectError(f"{out.name}: an image file ends in {' or '.join(FORMATS)}")
    c = comparison(session)
    if c is None:
        raise KinspectError("no comparison to draw: run kinspect compare model.py first")
    chart = series(c)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.2))
    for kind, times in chart.lines.items():
        pts = [(x, t) for x, t in zip(chart.xs, times) if t is not None]
        slow = c.slowdown(kind)
        label = TITLES[kind] + ("" if slow is None else f": {ratio(slow)}")
        ax.plot([x for x, _ in pts], [t for _, t in pts], marker="o", linewidth=1.2, label=label)
    if chart.axis != "shape":
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(lambda v, _pos: f"{v:g}")
    ax.set_xlabel(chart.axis)
    ax.set_yscale("log")
    ax.set_ylabel(f"whole model, GPU {US} per call (log)")
    ax.set_title("the whole model five ways (×: geomean slowdown vs the best per shape; fresh compiles autotune anew)",
                 fontsize="medium")
    ax.legend(fontsize="small")
    ax.grid(True, which="both", alpha=0.3)
    _save(plt, fig, out)


def _curves(ax, m: DecisionMap) -> None:  # type: ignore[no-untyped-def]
    for v in m.variants:
        label = m.labels[v]
        pts = [(p.x, p.times[v]) for p in m.points if v in p.times]
        ax.plot([x for x, _ in pts], [t for _, t in pts], marker=".", linewidth=1.2, label=label)
    for slower, color, label in ((False, "tab:green", "Inductor's pick (fastest within noise)"),
                                 (True, "tab:red", "Inductor's pick (slower beyond noise)")):
        pts = [(p.x, p.times[p.point.picked]) for p in m.points
               if p.point.slower == slower and p.point.picked in p.times]
        if pts:
            ax.scatter([x for x, _ in pts], [t for _, t in pts], s=36, color=color, zorder=3, label=label)
    for i, b in enumerate(m.boundaries):
        ax.axvline(math.sqrt(b.last * b.first), color="tab:red", linestyle="--", linewidth=0.8,
                   label="pick changes" if i == 0 else None)
    for i, c in enumerate(m.crossovers):
        ax.axvline(math.sqrt(c.last * c.first), color="tab:green", linestyle=":", linewidth=0.8,
                   label="fastest changes" if i == 0 else None)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(lambda v, _pos: f"{v:g}")
    ax.set_xlabel(f"{m.symbol}" + (f" ({sizes_text(m.fixed)})" if m.fixed else ""))
    ax.set_yscale("log")
    ax.set_ylabel(f"kernel {US} (log)")
    worst = max(m.points, key=lambda p: p.point.regret)
    ax.set_title(f"{m.site}: worst pick {ratio(worst.point.regret)} at {m.symbol}={worst.x} (one compile)")
    ax.legend(fontsize="small")
    ax.grid(True, which="both", alpha=0.3)


def _heatmap(fig, ax, m: Heatmap) -> None:  # type: ignore[no-untyped-def]
    """Regret cells on log axes (a cell spans the sizes nearer its own than its neighbours',
    so gaps in a sweep show as what they are), coloured on a scale anchored at ×1: green the
    fastest, yellow about ×1.4, red ×2 and beyond (the inspector's map reads alike); an
    unmeasured cell grey and hatched (left blank it read as ×1.00)."""
    import matplotlib
    import numpy as np
    from matplotlib.colors import LogNorm
    from matplotlib.patches import Patch, Rectangle

    data = np.ma.masked_invalid([[math.nan if r is None else r for r in row] for row in m.regret])
    cmap = matplotlib.colormaps["RdYlGn_r"].with_extremes(bad=UNMEASURED)
    xs, ys = _edges(m.xs), _edges(m.ys)
    im = ax.pcolormesh(xs, ys, data, cmap=cmap, norm=LogNorm(vmin=1.0, vmax=2.0, clip=True), edgecolors="white",
                       linewidth=0.5)
    for y, row in enumerate(m.regret):
        for x, r in enumerate(row):
            if r is None:
                ax.add_patch(Rectangle((xs[x], ys[y]), xs[x + 1] - xs[x], ys[y + 1] - ys[y], fill=False,
                                       hatch="///", edgecolor="grey", linewidth=0))
    if any(r is None for row in m.regret for r in row):
        ax.legend(handles=[Patch(facecolor=UNMEASURED, hatch="///", edgecolor="grey", label="not measured")],
                  fontsize="small", loc="upper left", bbox_to_anchor=(1.3, 1.0))
    for axis, values in ((ax.xaxis, m.xs), (ax.yaxis, m.ys)):
        (ax.set_xscale if axis is ax.xaxis else ax.set_yscale)("log", base=2)
        axis.set_major_formatter(lambda v, _pos: f"{v:g}")
        axis.set_minor_formatter(lambda v, _pos: "")
    ax.set_xlabel(f"{m.x_symbol} (log)")
    ax.set_ylabel(f"{m.y_symbol} (log)")
    ax.set_title(f"{m.site}: regret (pick / fastest), one compile")
    bar = fig.colorbar(im, ax=ax, extend="max")
    ticks = (1.0, 1.1, 1.25, 1.5, 2.0)
    bar.set_ticks(ticks, labels=[ratio(t) for t in ticks[:-1]] + [f"≥{ratio(2.0)}"])
    bar.minorticks_off()


def _edges(values: list[int]) -> list[float]:
    """Cell edges on a log axis: the geometric middles between sizes, and as far past the
    first and last as the nearest middle is (a single size: a factor of 2 around it)."""
    if len(values) == 1:
        return [values[0] / math.sqrt(2), values[0] * math.sqrt(2)]
    mids = [math.sqrt(a * b) for a, b in zip(values, values[1:])]
    return [values[0] ** 2 / mids[0], *mids, values[-1] ** 2 / mids[-1]]


def _save(plt: Any, fig: Any, out: Path) -> None:
    """Write the figure as every file kinspect writes (`write_with`: whole or not at all, a
    file that is there replaced only where it may be); the figure is freed either way."""
    fig.tight_layout()
    try:
        write_with(out, lambda f: fig.savefig(f, format=out.suffix.lower()[1:]))
    finally:
        plt.close(fig)
