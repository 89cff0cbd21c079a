"""The Map tab's plot, each drawing built by plotext once and kept.

plotext takes about 20 ms to build a map of eight curves, more than a frame, and every
move of the cursor is a new drawing. So each drawing is kept once built, and the ones a
keystroke may ask for next (the cursor one measured size either side) are built in a
thread while the user looks at this one: ←/→ then paint from what was kept. Turning a
drawing into the lines Textual paints takes as long again, so those are kept (and built
ahead) beside it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence

from rich.text import Text
from textual import work
from textual.app import RenderResult
from textual.content import Content
from textual.strip import Strip
from textual.style import Style
from textual.visual import Visual
from textual.worker import get_current_worker
from textual_plotext import PlotextPlot
from textual_plotext.plot import Plot

Drawing = tuple[Hashable, Callable[[Plot], None]]
"""A drawing's key (what it shows) and what draws it on an empty plot."""

KEPT = 32
"""Drawings kept: a few sites' cursors and their neighbours."""


class MapPlot(PlotextPlot):
    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.drawing: Hashable = None
        """The key of what `plt` holds now; the view sets both."""
        self._built: dict[tuple[Hashable, int, int, str], Content] = {}
        self._lines: dict[tuple[tuple[Hashable, int, int, str], Style], list[Strip]] = {}
        self._lock = threading.Lock()

    def render(self) -> RenderResult:
        if self.drawing is None:  # nothing drawn yet
            return super().render()
        key = self._key(self.drawing)
        with self._lock:
            built = self._built.get(key)
        if built is None:
            text = super().render()
            assert isinstance(text, Text)
            built = self._keep(key, text)
        return built

    def render_line(self, y: int) -> Strip:
        lines = self._kept_lines()
        if lines is None:
            return super().render_line(y)
        return lines[y] if 0 <= y < len(lines) else Strip.blank(self.size.width, self.visual_style.rich_style)

    def _kept_lines(self) -> list[Strip] | None:
        """The painted lines of the drawing shown, made once from its kept drawing."""
        if self.drawing is None:
            return None
        key = self._key(self.drawing)
        style = self.visual_style
        with self._lock:
            lines, built = self._lines.get((key, style)), self._built.get(key)
        if lines is None and built is not None:
            lines = Visual.to_strips(self, built, key[1], key[2], style)
            with self._lock:
                self._lines[(key, style)] = lines
        return lines

    def build_ahead(self, drawings: Sequence[Drawing]) -> None:
        """Build these drawings in a thread, unless kept already (a newer call cancels it)."""
        todo = [(self._key(k), draw) for k, draw in drawings]
        style = self.visual_style
        with self._lock:
            todo = [(key, draw) for key, draw in todo if (key, style) not in self._lines]
        if todo and self.size.width and self.size.height:
            self._build(todo, style)

    @work(thread=True, exclusive=True, group="map-ahead", exit_on_error=False)
    def _build(self, todo: list[tuple[tuple[Hashable, int, int, str], Callable[[Plot], None]]], style: Style) -> None:
        worker = get_current_worker()
        for key, draw in todo:
            if worker.is_cancelled:
                return
            _, width, height, theme = key
            with self._lock:
                kept = self._built.get(key)
            if kept is None:
                plt = Plot()
                draw(plt)
                plt.plotsize(width, height)
                plt._set_size(width, height)  # as PlotextPlot.render does: plotsize alone does not always take
                plt.theme(theme)
                kept = self._keep(key, Text.from_ansi(plt.build()))
            lines = Visual.to_strips(self, kept, width, height, style)
            with self._lock:
                self._lines[(key, style)] = lines

    def _key(self, drawing: Hashable) -> tuple[Hashable, int, int, str]:
        return drawing, self.size.width, self.size.height, self._get_plotext_theme_name(self.app.theme)

    def _keep(self, key: tuple[Hashable, int, int, str], text: Text) -> Content:
        """Keep a drawing as Textual's own Content: Textual converts a Text to it each
        frame, styling each of a plot's hundreds of runs (15 ms)."""
        kept = Content.from_rich_text(text)
        with self._lock:
            self._built[key] = kept
            while len(self._built) > KEPT:
                del self._built[next(iter(self._built))]
            while len(self._lines) > KEPT:
                del self._lines[next(iter(self._lines))]
        return kept
