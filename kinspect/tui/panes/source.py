"""The Source tab (2): the selected variant's configuration and generated Triton source."""

from __future__ import annotations

from textual.app import ComposeResult

from kinspect.tui.panes.base import InspectorPane
from kinspect.core.inspector.state import View
from kinspect.tui.widgets.source_view import SourceView


class SourcePane(InspectorPane):
    FOCUS = "#source-view"
    KEYED = (("source", SourceView),)

    def content(self) -> ComposeResult:
        yield SourceView(id="source-view")

    def draw(self, view: View) -> None:
        if view.site is not None:
            self.query_one(SourceView).show(view.site, view.selected)
