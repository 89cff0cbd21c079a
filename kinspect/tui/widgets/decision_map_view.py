"""The Map tab: a site's variants' latency along the swept size, drawn by plotext.

plotext (through Textualize's textual-plotext widget) draws log axes, several series and
vertical markers, which is what a decision map needs; hand-drawn cells would re-implement
axis ticks and scaling badly. Inductor's pick is marked along each curve, `●` green where
it is the fastest within noise and `✗` red where it is slower (the glyphs differ, so
NO_COLOR keeps the difference); decision boundaries (where the pick changes) are red
verticals, crossovers (where the fastest changes) green ones, the cursor a white one. The
legend is a line under the plot: plotext's own sat over the curves on small terminals.
←/→ (or a click) move the cursor between measured sizes and post `SizesChosen`, so the
Map pane asks for that shape and every other tab follows. Two swept sizes show a regret heatmap
instead (`map_heat`), its cursor moved by ←/→ and ↑/↓ the same way.
"""

from __future__ import annotations

from kinspect.core.dispatch.shapes import sizes_text

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static

from kinspect.core.quality.comparison import Comparison
from kinspect.core.quality.decision_map import DecisionMap, Heatmap, MapPoint
from kinspect.core.quality.pick_map import SizeMaps
from kinspect.core.session.model import Site
from kinspect.tui.widgets.comparison_chart import comparison_chart
from kinspect.tui.text import literal
from kinspect.tui.widgets.map_heat import cell_sizes, heatmap, nearest
from kinspect.core import numbers

if TYPE_CHECKING:
    from kinspect.tui.widgets.map_plot import MapPlot

PICK_OK, PICK_SLOW, BOUNDARY, CROSSOVER, CURSOR = "green", "red", "red", "green", "white"
PICK_OK_MARK, PICK_SLOW_MARK = "●", "✗"
CURVES = ((0, 130, 200), (255, 225, 25), (145, 30, 180), (70, 240, 240), (240, 50, 230), (245, 130, 48),
          (250, 190, 212), (0, 128, 128), (220, 190, 255), (170, 110, 40))
"""The variants' colors: none green or red, which mark the pick."""


class DecisionMapView(Vertical, can_focus=True):
    BINDINGS = [
        Binding("left", "move(-1)", "Smaller", id="kinspect.map.left", tooltip="The next smaller measured size"),
        Binding("right", "move(1)", "Larger", id="kinspect.map.right", tooltip="The next larger measured size"),
        Binding("up", "move_y(-1)", "Row up", show=False, id="kinspect.map.up",
                tooltip="Two-size maps: the next smaller size down the side"),
        Binding("down", "move_y(1)", "Row down", show=False, id="kinspect.map.down",
                tooltip="Two-size maps: the next larger size down the side"),
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
        self.cell = (0, 0)
        """The heatmap's cursor: the column (x) and row (y) indexes."""
        self._maps_shown = 0
        """Counts the map objects shown: with the cursor, it names a drawing of the plot."""
        self._caption_lines = -1
        """The caption's lines as last shown: the screen is laid out again only when they change."""
        self._heading = 1
        """Which way ←/→ last moved the cursor: the drawing that way is built ahead first."""

    def compose(self):  # type: ignore[no-untyped-def]
        from kinspect.tui.widgets.map_plot import MapPlot  # plotext: imported with the first map, not the first screen

        yield MapPlot(id="map-plot")
        yield Static(id="map-caption")
        yield Static(id="map-compare")

    def show_comparison(self, c: Comparison | None) -> None:
        """The session's `kinspect compare` figures under the map (hidden without them)."""
        panel = self.query_one("#map-compare", Static)
        panel.display = c is not None
        if c is not None:
            panel.update(comparison_chart(c))

    def show(self, dmap: DecisionMap | Heatmap | None, empty: str | RenderableType,
             sizes: dict[str, int] | None = None) -> None:
        """Draw a map (or show `empty` in its place); the cursor goes to the measured size
        nearest to `sizes`, the shape typed now."""
        if dmap is not self.map:
            self._maps_shown += 1
        two_sizes = isinstance(dmap, Heatmap) != isinstance(self.map, Heatmap)
        self.map = dmap
        if two_sizes:  # ↑/↓ come and go with a second size; a refresh of the bindings rebuilds
            self.refresh_bindings()  # the footer and lays the screen out, so only then
        if isinstance(dmap, DecisionMap) and dmap.points:
            x = (sizes or {}).get(dmap.symbol)
            self.cursor = dmap.nearest(x) if x else min(self.cursor, len(dmap.points) - 1)
        elif isinstance(dmap, Heatmap):
            sizes = sizes or {}
            self.cell = (nearest(dmap.xs, sizes.get(dmap.x_symbol), self.cell[0]),
                         nearest(dmap.ys, sizes.get(dmap.y_symbol), self.cell[1]))
        self._draw(empty)

    def on_resize(self, event: events.Resize) -> None:
        """A two-size map shows the columns that fit: as many as the new width takes."""
        m = self.map
        if isinstance(m, Heatmap) and event.size.width:
            self.query_one("#map-caption", Static).update(heatmap(m, *self.cell, event.size.width))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """↑/↓ only where there is a second size to move along."""
        return isinstance(self.map, Heatmap) if action == "move_y" else True

    def action_move(self, step: int) -> None:
        if isinstance(self.map, DecisionMap) and self.map.points:
            self.cursor = max(0, min(len(self.map.points) - 1, self.cursor + step))
            self._heading = step
            self._chosen()
        elif isinstance(self.map, Heatmap):
            self._move_cell(step, 0)

    def action_move_y(self, step: int) -> None:
        if isinstance(self.map, Heatmap):
            self._move_cell(0, step)

    def action_move_to(self, index: int) -> None:
        if isinstance(self.map, DecisionMap) and self.map.points:
            self.cursor = index % len(self.map.points)
            self._chosen()
        elif isinstance(self.map, Heatmap):
            self._move_cell(index % len(self.map.xs) - self.cell[0], 0)

    def _move_cell(self, dx: int, dy: int) -> None:
        """The heatmap's cursor moves at once (a second key moves on from here), and the
        app types its sizes: unmeasured cells too, which the Variants tab still decides."""
        m = self.map
        assert isinstance(m, Heatmap)
        self.cell = (max(0, min(len(m.xs) - 1, self.cell[0] + dx)), max(0, min(len(m.ys) - 1, self.cell[1] + dy)))
        self.post_message(self.SizesChosen(cell_sizes(m, *self.cell)))

    def on_click(self, event) -> None:  # type: ignore[no-untyped-def]
        """A click on the plot moves the cursor to the measured size under it."""
        m = self.map
        plot = self.query_one("#map-plot")
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

    def _plot(self) -> MapPlot:
        from kinspect.tui.widgets.map_plot import MapPlot

        return self.query_one(MapPlot)

    def _draw(self, empty: str | RenderableType) -> None:
        plot = self._plot()
        caption = self.query_one("#map-caption", Static)
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        m = self.map
        if m is None:
            plot.display = False
            caption.update(Text(empty, style="dim") if isinstance(empty, str) else empty)
            return
        if isinstance(m, Heatmap):
            plot.display = False
            caption.update(heatmap(m, *self.cell, self.size.width or 80))
            return
        plot.display = True
        points = _visible(m, 2 * plot.size.width or 2 * 80)
        _curves(plt, m, points, self.cursor)
        plot.drawing = (self._maps_shown, len(points), self.cursor)
        text = _caption(m, self.cursor)
        lines = len(text.wrap(self.app.console, caption.content_size.width or 80))
        caption.update(text, layout=lines != self._caption_lines)  # most moves change numbers, not lines
        self._caption_lines = lines
        plot.refresh()
        ahead = [((self._maps_shown, len(points), c), lambda plt, c=c: _curves(plt, m, points, c))
                 for c in (self.cursor + self._heading, self.cursor - self._heading) if 0 <= c < len(m.points)]
        self.call_after_refresh(plot.build_ahead, ahead)  # after this frame: the thread takes the GIL in turns


def _curves(plt, m: DecisionMap, points: list[MapPoint], cursor: int) -> None:  # type: ignore[no-untyped-def]
    plt.theme("pro")
    plt.xscale("log")
    plt.yscale("log")  # kernel times span 100x over a sweep: small sizes stay readable
    for i, v in enumerate(m.variants):
        pts = [(p.x, p.times[v]) for p in points if v in p.times]
        if pts:
            plt.plot([x for x, _ in pts], [t for _, t in pts], marker="braille", color=CURVES[i % len(CURVES)])
    for slower, color, mark in ((False, PICK_OK, PICK_OK_MARK), (True, PICK_SLOW, PICK_SLOW_MARK)):
        pts = [(p.x, p.times[p.point.picked]) for p in points
               if p.point.slower == slower and p.point.picked in p.times]
        if pts:
            plt.scatter([x for x, _ in pts], [t for _, t in pts], color=color, marker=mark)
    for b in m.boundaries:
        plt.vline(math.sqrt(b.last * b.first), BOUNDARY)
    for c in m.crossovers:
        plt.vline(math.sqrt(c.last * c.first), CROSSOVER)
    plt.vline(m.points[cursor].x, CURSOR)
    ticks = _log_ticks(m.points[0].x, m.points[-1].x)
    plt.xticks(ticks, [_short(t) for t in ticks])
    plt.xlabel(f"{m.symbol} (log)")
    plt.ylabel("µs (log)")
    fixed = sizes_text(m.fixed)
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
    out = _legend(m)
    sizes = sizes_text(p.sizes)
    out.append(f"{literal(sizes)}: ", style="bold")
    out.append(f"Inductor picks {literal(m.labels[q.picked])} ({numbers.us_text(q.pick_us)}); ")
    out.append(f"fastest {literal(m.labels[q.fastest])} ({numbers.us_text(q.best_us)})")
    if q.picked == q.fastest:
        out.append(" — the pick", style=PICK_OK)
    else:
        out.append(f" — regret {numbers.ratio(q.regret)}", style=PICK_SLOW if q.slower else "yellow")
        out.append(" beyond noise" if q.slower else " (within noise)", style="dim")
    out.append("\n")
    if m.boundaries:
        out.append("│", style=BOUNDARY)
        out.append(" pick changes at ", style="dim")
        out.append(", ".join(f"{m.symbol}={b.last}|{b.first} (v{b.before}→v{b.after})" for b in m.boundaries))
        out.append("\n")
    if m.crossovers:
        out.append("│", style=CROSSOVER)
        out.append(" fastest changes between ", style="dim")
        shown = m.crossovers[:3]
        out.append(", ".join(f"{m.symbol}={c.last:g}..{c.first:g} (v{c.before}→v{c.after})" for c in shown))
        if len(m.crossovers) > len(shown):
            out.append(f" and {len(m.crossovers) - len(shown)} more", style="dim")
        out.append("\n")
    out.append("│", style=CURSOR)
    out.append(" cursor: ←/→ or a click moves it (the shape follows) · one compile's timings",
               style="dim")
    return out


def _legend(m: DecisionMap) -> Text:
    """What the plot's marks are, on a line of its own under it."""
    out = Text()
    for i, v in enumerate(m.variants):
        out.append("⣀⣀", style="rgb({},{},{})".format(*CURVES[i % len(CURVES)]))
        out.append(f" {literal(m.labels[v])}  ")
    out.append(PICK_OK_MARK, style=PICK_OK)
    out.append(" pick: fastest ")
    out.append(PICK_SLOW_MARK, style=PICK_SLOW)
    out.append(" slower\n")
    return out


def pick_maps_view(site: Site, maps: Sequence[SizeMaps], typed: Mapping[str, int]) -> RenderableType:
    """Where nothing is measured (a trace, a recording not swept): which variant Inductor
    runs along each of the site's sizes, with the compiled hints and each subset of them,
    the typed size's span marked."""
    labels = {v.index: v.label for v in site.variants}
    parts: list[RenderableType] = [Text.assemble(
        (site.name, "bold"), " · nothing measured along one size: which variant Inductor runs, from the compiled "
        "code, with the compiled hints (first row) and each subset of them as compiled (a compile with fewer hints "
        "may autotune other kernels)", style="dim")]
    for m in maps:
        at = " ".join(f"{k}={v}" for k, v in m.fixed.items())
        heading = Text.assemble("\n", (f"{m.symbol} = {m.lo}..{m.hi}", "bold"), f" with {at}" if at else "")
        x = typed.get(m.symbol)
        span = next((sp for sp in m.maps[0].spans if x is not None and sp.lo <= x <= sp.hi), None) if m.maps else None
        if span is not None:
            who = " = ".join(labels.get(v, f"v{v}") for v in span.variants) or "no key"
            heading.append(f" · ◀ {m.symbol}={x} runs {who}", style="bold")
        parts.append(heading)
        table = Table(box=None, show_header=True, header_style="dim", padding=(0, 1), expand=False)
        table.add_column("hints", no_wrap=True)
        table.add_column("variant run: sizes")
        for pm in m.maps:
            table.add_row(Text(", ".join(map(str, pm.hints))), Text(pm.text(labels)))
        parts.append(table)
        parts.append(Text(f"kinspect sweep PROGRAM --range {m.symbol}={m.lo}..{m.hi} measures each variant along it",
                          style="dim"))
    return Group(*parts)
