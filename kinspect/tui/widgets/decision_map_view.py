"""The Map tab: a site's variants' latency along the swept size, drawn by plotext.

plotext (through Textualize's textual-plotext widget) draws log axes, several series with
a legend, and vertical markers, which is what a decision map needs; hand-drawn cells would
re-implement axis ticks and scaling badly. Inductor's pick is marked along each curve,
green where it is the fastest within noise and red where it is slower; decision
boundaries (where the pick changes) are red verticals, crossovers (where the fastest
changes) green ones, the cursor a white one. ←/→ (or a click) move the cursor between
measured sizes and post `SizesChosen`, so the Map pane asks for that shape and every
other tab follows. Two swept sizes show a regret heatmap instead, as a table of colored cells
(plotext's matrix plot drew one thin mark per cell).
"""

from __future__ import annotations

import math

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static

from kinspect.core.quality.comparison import Comparison
from kinspect.core.quality.decision_map import DecisionMap, Heatmap, MapPoint
from kinspect.tui.widgets.comparison_chart import comparison_chart
from kinspect.tui.text import literal
from kinspect.tui.widgets.map_plot import MapPlot

PICK_OK, PICK_SLOW, BOUNDARY, CROSSOVER, CURSOR = "green", "red", "red", "green", "white"


class DecisionMapView(Vertical, can_focus=True):
    BINDINGS = [
        Binding("left", "move(-1)", "Smaller", id="kinspect.map.left", tooltip="The next smaller measured size"),
        Binding("right", "move(1)", "Larger", id="kinspect.map.right", tooltip="The next larger measured size"),
        Binding("home", "move_to(0)", "Smallest", show=False, id="kinspect.map.first",
                tooltip="The smallest measured size"),
        Binding("end", "move_to(-1)", "Largest", show=False, id="kinspect.map.last",
                tooltip="The largest measured size"),
    ]

    class SizesChosen(Message):
        """The cursor moved to a measured size: the app makes it the typed shape."""

        def __init__(self, sizes: dict[str, int]) -> None:
            super().__init__()
            self.sizes = sizes

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.map: DecisionMap | Heatmap | None = None
        self.cursor = 0
        self._maps_shown = 0
        self._heading = 1
        """Which way ←/→ last moved the cursor: the drawing that way is built ahead first."""
        """Counts the map objects shown: with the cursor, it names a drawing of the plot."""

    def compose(self):  # type: ignore[no-untyped-def]
        yield MapPlot(id="map-plot")
        yield Static(id="map-caption")
        yield Static(id="map-compare")

    def show_comparison(self, c: Comparison | None) -> None:
        """The session's `kinspect compare` figures under the map (hidden without them)."""
        panel = self.query_one("#map-compare", Static)
        panel.display = c is not None
        if c is not None:
            panel.update(comparison_chart(c))

    def show(self, dmap: DecisionMap | Heatmap | None, empty: str, sizes: dict[str, int] | None = None) -> None:
        """Draw a map (or say why there is none); the cursor goes to the measured size
        nearest to `sizes`, the shape typed now."""
        if dmap is not self.map:
            self._maps_shown += 1
        self.map = dmap
        if isinstance(dmap, DecisionMap) and dmap.points:
            x = (sizes or {}).get(dmap.symbol)
            self.cursor = dmap.nearest(x) if x else min(self.cursor, len(dmap.points) - 1)
        self._draw(empty)

    def action_move(self, step: int) -> None:
        if isinstance(self.map, DecisionMap) and self.map.points:
            self.cursor = max(0, min(len(self.map.points) - 1, self.cursor + step))
            self._heading = step
            self._chosen()

    def action_move_to(self, index: int) -> None:
        if isinstance(self.map, DecisionMap) and self.map.points:
            self.cursor = index % len(self.map.points)
            self._chosen()

    def on_click(self, event) -> None:  # type: ignore[no-untyped-def]
        """A click on the plot moves the cursor to the measured size under it."""
        m = self.map
        plot = self.query_one(MapPlot)
        if not isinstance(m, DecisionMap) or not m.points or event.widget is not plot:
            return
        width = max(plot.size.width - 8, 1)  # plotext's y-axis labels take the left columns
        frac = min(max((event.x - 8) / width, 0.0), 1.0)
        lo, hi = math.log2(m.points[0].x), math.log2(m.points[-1].x)
        self.cursor = m.nearest(2 ** (lo + frac * (hi - lo)))
        self._chosen()

    def _chosen(self) -> None:
        """The app types the cursor's sizes and draws the map again with every other tab:
        drawing it here as well painted a frame of the plot alone first, and building the
        plot is what a keystroke here costs."""
        assert isinstance(self.map, DecisionMap)
        self.post_message(self.SizesChosen(dict(self.map.points[self.cursor].sizes)))

    # ------------------------------------------------------------ drawing

    def _draw(self, empty: str) -> None:
        plot = self.query_one(MapPlot)
        caption = self.query_one("#map-caption", Static)
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        m = self.map
        if m is None:
            plot.display = False
            caption.update(Text(empty, style="dim"))
            return
        if isinstance(m, Heatmap):  # a table of colored cells reads better than plotext's matrix plot
            plot.display = False
            caption.update(Group(_heatmap_table(m), _heatmap_caption(m)))
            return
        plot.display = True
        points = _visible(m, 2 * plot.size.width or 2 * 80)
        _curves(plt, m, points, self.cursor)
        plot.drawing = (self._maps_shown, len(points), self.cursor)
        caption.update(_caption(m, self.cursor))
        plot.refresh()
        ahead = [((self._maps_shown, len(points), c), lambda plt, c=c: _curves(plt, m, points, c))
                 for c in (self.cursor + self._heading, self.cursor - self._heading) if 0 <= c < len(m.points)]
        self.call_after_refresh(plot.build_ahead, ahead)  # after this frame: the thread takes the GIL in turns


def _curves(plt, m: DecisionMap, points: list[MapPoint], cursor: int) -> None:  # type: ignore[no-untyped-def]
    plt.theme("pro")
    plt.xscale("log")
    plt.yscale("log")  # kernel times span 100x over a sweep: small sizes stay readable
    for v, label in zip(m.variants, m.labels):
        pts = [(p.x, p.times[v]) for p in points if v in p.times]
        if pts:
            plt.plot([x for x, _ in pts], [t for _, t in pts], label=label, marker="braille")
    for slower, color, label in ((False, PICK_OK, "pick: fastest"), (True, PICK_SLOW, "pick: slower")):
        pts = [(p.x, p.times[p.point.picked]) for p in points
               if p.point.slower == slower and p.point.picked in p.times]
        if pts:
            plt.scatter([x for x, _ in pts], [t for _, t in pts], label=label, color=color, marker="●")
    for b in m.boundaries:
        plt.vline(math.sqrt(b.last * b.first), BOUNDARY)
    for c in m.crossovers:
        plt.vline(math.sqrt(c.last * c.first), CROSSOVER)
    plt.vline(m.points[cursor].x, CURSOR)
    ticks = _log_ticks(m.points[0].x, m.points[-1].x)
    plt.xticks(ticks, [_short(t) for t in ticks])
    plt.xlabel(f"{m.symbol} (log)")
    plt.ylabel("µs (log)")
    fixed = " ".join(f"{k}={v}" for k, v in m.fixed.items())
    plt.title(f"{m.site}: kernel µs by {m.symbol}" + (f" at {fixed}" if fixed else ""))


def _visible(m: DecisionMap, dots: int) -> list[MapPoint]:
    """The measured sizes to draw on a plot `dots` braille dots wide (two a character):
    all of them when they are fewer, else the last of those falling in each dot column
    of the log axis (the one plotext would have drawn over the others). plotext draws a
    line through every point it is given, and a 500-size sweep gave it more points than
    columns to show them in."""
    if len(m.points) <= dots:
        return list(m.points)
    lo, hi = math.log(m.points[0].x), math.log(m.points[-1].x)
    span = (hi - lo) or 1.0
    last = {int((math.log(p.x) - lo) / span * dots): p for p in m.points}
    return list(last.values())


def _heat_style(r: float) -> str:
    """Green at the fastest, through yellow, to red at twice its time and beyond."""
    if r < 1.05:
        return "black on green"
    if r < 1.25:
        return "black on yellow"
    if r < 1.6:
        return "black on dark_orange"
    return "white on red"


def _heatmap_table(m: Heatmap) -> Table:
    t = Table(title=Text(f"{m.site}: regret (pick / fastest) by {m.x_symbol} → and {m.y_symbol} ↓"),
              title_justify="left", box=None, padding=(0, 1), show_edge=False)
    t.add_column(Text(f"{m.y_symbol}\\{m.x_symbol}", style="dim"), justify="right")
    for x in m.xs:
        t.add_column(Text(str(x), style="bold"), justify="right")
    for y, row in zip(m.ys, m.regret):
        t.add_row(Text(str(y), style="bold"),
                  *(Text("·", style="dim") if r is None else Text(f"{r:.2f}", style=_heat_style(r)) for r in row))
    return t


def _log_ticks(lo: int, hi: int, most: int = 7) -> list[int]:
    """Powers of two inside lo..hi, thinned to at most `most`."""
    powers = [2 ** e for e in range(max(0, math.floor(math.log2(lo))), math.ceil(math.log2(hi)) + 1)
              if lo <= 2 ** e <= hi]
    step = max(1, math.ceil(len(powers) / most))
    return powers[::step] or [lo, hi]


def _short(n: int) -> str:
    return f"{n // 1024}k" if n >= 1024 and n % 1024 == 0 else str(n)


def _caption(m: DecisionMap, cursor: int) -> Text:
    p = m.points[cursor]
    q = p.point
    out = Text()
    sizes = " ".join(f"{k}={v}" for k, v in p.sizes.items())
    out.append(f"{literal(sizes)}: ", style="bold")
    out.append(f"Inductor picks {literal(m.labels[q.picked])} ({q.pick_us:.1f} µs); ")
    out.append(f"fastest {literal(m.labels[q.fastest])} ({q.best_us:.1f} µs)")
    if q.picked == q.fastest:
        out.append(" — the pick", style=PICK_OK)
    else:
        out.append(f" — regret ×{q.regret:.2f}", style=PICK_SLOW if q.slower else "yellow")
        out.append(" beyond noise" if q.slower else " (within noise)", style="dim")
    out.append("\n")
    if m.boundaries:
        out.append("pick changes at ", style="dim")
        out.append(", ".join(f"{m.symbol}={b.last}|{b.first} (v{b.before}→v{b.after})" for b in m.boundaries))
        out.append("\n")
    if m.crossovers:
        out.append("fastest changes between ", style="dim")
        shown = m.crossovers[:3]
        out.append(", ".join(f"{m.symbol}={c.last:g}..{c.first:g} (v{c.before}→v{c.after})" for c in shown))
        if len(m.crossovers) > len(shown):
            out.append(f" and {len(m.crossovers) - len(shown)} more", style="dim")
        out.append("\n")
    out.append("←/→ or a click: move along the measured sizes (the shape follows) · one compile's timings",
               style="dim")
    return out


def _heatmap_caption(m: Heatmap) -> Text:
    cells = [(r, x, y) for row, y in zip(m.regret, m.ys) for r, x in zip(row, m.xs) if r is not None]
    out = Text()
    if cells:
        worst = max(cells)
        out.append(f"worst ×{worst[0]:.2f} at {m.x_symbol}={worst[1]} {m.y_symbol}={worst[2]}; ", style="bold")
    out.append(f"{len(cells)} of {len(m.xs) * len(m.ys)} cells measured (· = not measured) · one compile's timings",
               style="dim")
    return out
