"""The Timeline tab (7): which variant each site ran along the workload, the debugger's
cursor marked; a click or ←/→ moves the cursor, and the debugger's keys act here too."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical

from kinspect.tui.panes.debug_keys import DebugPane
from kinspect.tui.panes.requests import SiteRequested
from kinspect.core.inspector.state import View
from kinspect.tui.widgets.timeline_view import TimelineView


class TimelinePane(DebugPane):
    FOCUS = "#timeline-view"
    KEYED = (("timeline", TimelineView),)

    def content(self) -> ComposeResult:
        with Vertical(id="timeline-box"):
            yield TimelineView(id="timeline-view")

    def draw(self, view: View) -> None:
        d = self.debug.debugger
        cur = d.current
        index, label = None, ""
        if cur is not None and cur.index is not None:
            index = cur.index
        elif cur is not None:  # a live pause, before a dispatch the session has not yet
            index, label = d.timeline.total - 1, f"paused before dispatch {cur.event.seq}"
        self.query_one(TimelineView).show(d.timeline, index, view.state.site,
                                          jumpable=not d.live and not view.preparing, label=label)

    @on(TimelineView.Jump)
    def _jump(self, event: TimelineView.Jump) -> None:
        self.moved(self.debug.debugger.goto_index(event.index), "already there")

    @on(TimelineView.SiteChosen)
    def _site_chosen(self, event: TimelineView.SiteChosen) -> None:
        view = self.view
        if view is not None and view.state.site != event.name and any(s.name == event.name for s in view.data.session.sites):
            self.post_message(SiteRequested(event.name))
