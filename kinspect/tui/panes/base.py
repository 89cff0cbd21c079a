"""What every tab's pane shares: the view handed down, and drawing only while shown.

The app sets `view` on every pane after each change. A pane on screen draws it at once;
a hidden one only remembers that it is behind and draws on its next `on_show`, so a
keystroke costs the tab the user looks at, not all nine.

A pane's widgets (`content`) are composed when its tab is first wanted, not with the
app: composing and styling nine tabs' widgets made the first screen wait for eight the
user had not asked for. The app `open`s a pane before showing it, so the frame that
first shows a tab shows it drawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.reactive import var
from textual.css.query import NoMatches
from textual.widgets import TabbedContent, TabPane

from kinspect.core.ranks.merged import MergedRanks
from kinspect.core.inspector.state import Inspection, View

if TYPE_CHECKING:
    from textual.widget import AwaitMount

    from kinspect.tui.panes.debug_control import DebugControl


@dataclass(frozen=True)
class PaneContext:
    """What the app gives every pane when it builds the tabs."""

    data: Inspection
    ranks: MergedRanks | None
    """A torchrun job's ranks, when the session is one of several opened together."""
    debug: DebugControl


class InspectorPane(TabPane):
    FOCUS: ClassVar[str | None] = None
    """The widget the tab's number key focuses."""
    KEYED: ClassVar[tuple[tuple[str, type], ...]] = ()
    """The widgets in this tab whose keys the help lists, by where they act."""

    view: var[View | None] = var(None, init=False, always_update=True)

    def __init__(self, title: str, ctx: PaneContext, *, id: str) -> None:
        super().__init__(self.label(title, ctx.data), id=id)
        self._behind = False
        self._opening: AwaitMount | None = None
        self.opened = False
        """Its widgets are mounted (`open`), or come with the pane (the tab shown first)."""

    @classmethod
    def wanted(cls, ctx: PaneContext) -> bool:
        """Whether the tab is there at all for this session."""
        return True

    @classmethod
    def label(cls, title: str, data: Inspection) -> str:
        """The tab's label for this session (with a count, where it has one)."""
        return title

    @classmethod
    def own_bindings(cls) -> list[Binding]:
        """The keys this pane binds itself, for the help and the palette."""
        return [b for b in cls.BINDINGS if isinstance(b, Binding)]

    def compose(self) -> ComposeResult:
        if self.opened:
            yield from self.content()

    def content(self) -> ComposeResult:
        """The pane's widgets, made when the tab is first shown (`open`), not with the app."""
        yield from ()

    async def open(self) -> None:
        """Compose the pane's widgets if they are not yet, and wait until they are mounted;
        then draw what it missed, if it is on screen by now."""
        if self.opened:
            return
        if self._opening is None:
            self._opening = self.mount_compose(self.content())
        await self._opening
        if not self.opened:
            self.opened = True
            self.on_show()

    def on_mount(self) -> None:
        self.watch(self.query_ancestor(TabbedContent), "active", self._tab_activated, init=False)

    def _tab_activated(self, active: str) -> None:
        """Drawn as the tab is chosen, before the frame that first shows it: waiting for
        `on_show` alone would paint that frame with what the pane showed last. A tab chosen
        before it was opened (a click on its label) is drawn as soon as its widgets are."""
        if active != self.id:
            return
        if self.opened:
            self.on_show()
        else:
            self.call_next(self.open)

    def watch_view(self, view: View | None) -> None:
        if view is None:
            return
        if self.display and self.opened:
            self._behind = False
            self.draw(view)
        else:
            self._behind = True

    def on_show(self) -> None:
        if self._behind and self.view is not None and self.opened and self.display:
            self._behind = False
            self.draw(self.view)

    def draw(self, view: View) -> None:
        """Show the view; called only while the pane is on screen."""

    def active_tab(self) -> str:
        """The id of the tab on screen, this one or another."""
        try:
            return self.query_ancestor(TabbedContent).active
        except NoMatches:
            return ""

