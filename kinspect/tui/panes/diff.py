"""The Diff tab (3): a unified diff between two variants of the site.

A new site starts at its chosen variant against the next one; `d` (anywhere) asks for
the selected variant against the chosen one (`compare`). The selectors cost a rebuild
per site, so the diff is drawn when the tab is shown, and the user's own choice of
variants there stays until the site changes or `d` asks again.
"""

from __future__ import annotations

from textual.app import ComposeResult

from kinspect.core.session.model import Site
from kinspect.tui.panes.base import InspectorPane, PaneContext
from kinspect.core.inspector.state import View
from kinspect.tui.widgets.diff_view import DiffView


class DiffPane(InspectorPane):
    def __init__(self, title: str, ctx: PaneContext, *, id: str) -> None:
        super().__init__(title, ctx, id=id)
        self._site: Site | None = None
        self._pair: tuple[int, int] | None = None
        """The variants to show next time the tab is drawn."""

    def content(self) -> ComposeResult:
        yield DiffView(id="diff-view")

    def compare(self, site: Site, a: int, b: int) -> None:
        """Diff `a` against `b` of `site` when next shown (at once if shown now)."""
        self._site, self._pair = site, (a, b)
        if self.display and self.view is not None:
            self.draw(self.view)

    def draw(self, view: View) -> None:
        site = view.site
        if site is None:
            return
        if site is not self._site:
            chosen = view.chosen or 0
            self._site, self._pair = site, (chosen, (chosen + 1) % len(site.variants))
        if self._pair is not None:
            self.query_one(DiffView).show(site, *self._pair)
            self._pair = None
