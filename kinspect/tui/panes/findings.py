"""The Findings tab (5): the session's findings, one sentence each; enter goes to a
finding's site in the Variants tab. Its label counts them, on screen in every tab."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.widgets import TabbedContent

from kinspect.core.session.model import Session
from kinspect.tui.panes.base import InspectorPane, PaneContext
from kinspect.tui.panes.requests import SiteRequested
from kinspect.core.inspector.state import Inspection, View
from kinspect.tui.widgets.findings_list import FindingsList


class FindingsPane(InspectorPane):
    FOCUS = "#findings-list"
    KEYED = (("findings", FindingsList),)

    def __init__(self, title: str, ctx: PaneContext, *, id: str) -> None:
        super().__init__(title, ctx, id=id)
        self._tab_title = title
        self._findings = ctx.data.session.findings

    @classmethod
    def label(cls, title: str, data: Inspection) -> str:
        return _label(title, data.session)

    def content(self) -> ComposeResult:
        yield FindingsList(self._findings, id="findings-list")

    def watch_view(self, view: View | None) -> None:
        if view is not None and view.data.session.findings is not self._findings:
            self._findings = view.data.session.findings
            self._new_session(view.data.session)
        super().watch_view(view)

    def _new_session(self, session: Session) -> None:
        """A live session's findings come with its compile, a renamed size's are said
        again: the list and the label follow."""
        if self.opened:  # else its list is composed with them
            self.query_one(FindingsList).set_findings(session.findings)
        self.query_ancestor(TabbedContent).get_tab(self).label = _label(self._tab_title, session)

    @on(FindingsList.SiteRequested)
    def _finding_chosen(self, event: FindingsList.SiteRequested) -> None:
        event.stop()
        self.post_message(SiteRequested(event.site, tab="variants"))


def _label(title: str, session: Session) -> str:
    return f"{title} ({len(session.findings)})"
