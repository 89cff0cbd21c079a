"""The Symbolic tab (4): each tensor's size expressions against each hint's key and the
runtime size at the typed shape."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from kinspect.tui.panes.base import InspectorPane, PaneContext
from kinspect.core.inspector.state import View
from kinspect.tui.widgets.symbolic_table import SYMBOLIC_LEGEND, SymbolicTable


class SymbolicPane(InspectorPane):
    FOCUS = "#symbolic-table"
    KEYED = (("symbolic", SymbolicTable),)

    def content(self) -> ComposeResult:
        yield Static(Text(SYMBOLIC_LEGEND, style="dim"), id="symbolic-legend")
        yield SymbolicTable(id="symbolic-table")

    def __init__(self, title: str, ctx: PaneContext, *, id: str) -> None:
        super().__init__(title, ctx, id=id)
        self._drawn: tuple[object, ...] = ()

    def draw(self, view: View) -> None:
        site = view.site
        if site is None:
            return
        key = view.explanation.runtime_key if view.explanation is not None else None
        drawn = (view.env, key, view.state.inductor_names)
        if self._drawn and self._drawn[0] is site and self._drawn[1:] == drawn:
            return
        self._drawn = (site, *drawn)
        aliases = None if view.state.inductor_names else view.data.session.aliases
        self.query_one(SymbolicTable).show(site, view.env, key, aliases, view.data.session.tuned_sizes(site))
