"""One row per site across the workload: which variant ran where, misses and overrides.

Clicking a column, or ←/→ on the focused timeline, asks the app to move the cursor to
that column's first event (of the clicked site, where it ran there); ↑/↓ select a site.
Each key moves from where the previous one asked to go, not from where the app has drawn
the cursor so far: keys that arrive together (held, or typed fast) all count.
"""

from __future__ import annotations

from bisect import bisect_left

from rich.console import Group, RenderableType
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget

from kinspect.core.debugger.timeline import Timeline
from kinspect.tui.debug_text import label_width, timeline_lines

MARKER_ROWS = 1
"""Rows above the first site's row (the current-event marker)."""


class TimelineView(Widget, can_focus=True):
    BINDINGS = [
        Binding("left", "column(-1)", "Earlier", id="kinspect.timeline.left",
                tooltip="Move the cursor to the previous column's first event (replay)"),
        Binding("right", "column(1)", "Later", id="kinspect.timeline.right",
                tooltip="Move the cursor to the next column's first event (replay)"),
        Binding("up", "site(-1)", "Site above", show=False, id="kinspect.timeline.up",
                tooltip="Select the site on the row above"),
        Binding("down", "site(1)", "Site below", show=False, id="kinspect.timeline.down",
                tooltip="Select the site on the row below"),
    ]

    class Jump(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    class SiteChosen(Message):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self._tl: Timeline | None = None
        self._current: int | None = None
        self._selected: str | None = None
        self._jumpable = False
        self._label = ""

    def show(self, tl: Timeline, current: int | None, selected: str | None, jumpable: bool,
             label: str = "") -> None:
        """`jumpable`: the cursor can move anywhere (a recording; a live run only goes on)."""
        self._label = label
        grew = self._tl is None or len(tl.sites) != len(self._tl.sites)
        if jumpable != self._jumpable:
            self._jumpable = jumpable
            self.refresh_bindings()
        self._tl, self._current, self._selected = tl, current, selected
        self.refresh(layout=grew)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return None if action == "column" and not self._jumpable else True

    def get_content_height(self, container, viewport, width: int) -> int:  # type: ignore[no-untyped-def]
        """A row per site, the marker and the axis, and the legend as it wraps on narrow screens."""
        if self._tl is None or not self._tl.total:
            return 1
        legend = timeline_lines(self._tl, width, None, None)[len(self._tl.sites) + 2:]
        return len(self._tl.sites) + 2 + sum(len(line.wrap(self.app.console, max(width, 1))) for line in legend)

    def render(self) -> RenderableType:
        if self._tl is None:
            return Text("")
        return Group(*timeline_lines(self._tl, self.content_size.width, self._current, self._selected,
                                     self._label))

    # ------------------------------------------------------------ choosing

    def _cells_width(self) -> int:
        assert self._tl is not None
        return max(1, self.content_size.width - label_width(self._tl.sites) - 1)

    def _first_in_column(self, column: int, site: str | None) -> int:
        """The column's first event of `site` if it ran there, else the column's first event."""
        tl = self._tl
        assert tl is not None
        cols = tl.columns(self._cells_width())
        lo = -(-column * tl.total // cols)
        hi = -(-(column + 1) * tl.total // cols)
        if site is not None:
            mine = tl.indices.get(site, [])
            j = bisect_left(mine, lo)
            if j < len(mine) and mine[j] < hi:
                return mine[j]
        return lo

    def on_click(self, event: events.Click) -> None:
        tl = self._tl
        at = event.get_content_offset(self)
        if tl is None or not tl.total or at is None:
            return
        x = at.x - label_width(tl.sites) - 1
        row = at.y - MARKER_ROWS
        site = tl.sites[row] if 0 <= row < len(tl.sites) else None
        if site is not None:
            self.post_message(self.SiteChosen(site))
        if self._jumpable and 0 <= x < tl.columns(self._cells_width()):
            self.post_message(self.Jump(self._first_in_column(x, site)))

    def action_column(self, step: int) -> None:
        tl = self._tl
        if tl is None or not tl.total:
            return
        width = self._cells_width()
        here = tl.column(self._current, width) if self._current is not None else -1
        column = min(max(here + step, 0), tl.columns(width) - 1)
        self._current = self._first_in_column(column, None)
        self.post_message(self.Jump(self._current))

    def action_site(self, step: int) -> None:
        tl = self._tl
        if tl is None or not tl.sites:
            return
        i = tl.sites.index(self._selected) if self._selected in tl.sites else -1
        self._selected = tl.sites[min(max(i + step, 0), len(tl.sites) - 1)]
        self.post_message(self.SiteChosen(self._selected))
