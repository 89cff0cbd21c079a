"""The Ranks tab (9): a torchrun job's ranks side by side; there only when the session is
one of several rank sessions opened together."""

from __future__ import annotations

from textual.app import ComposeResult

from kinspect.tui.panes.base import InspectorPane, PaneContext
from kinspect.tui.widgets.ranks_view import RankSteps, RanksView


class RanksPane(InspectorPane):
    FOCUS = "#ranks-steps"
    KEYED = (("ranks", RankSteps),)

    def __init__(self, title: str, ctx: PaneContext, *, id: str) -> None:
        assert ctx.ranks is not None
        self._ranks = ctx.ranks
        super().__init__(f"{title} ({len(ctx.ranks.ranks)})", ctx, id=id)

    @classmethod
    def wanted(cls, ctx: PaneContext) -> bool:
        return ctx.ranks is not None

    def content(self) -> ComposeResult:
        yield RanksView(self._ranks, id="ranks-view")
