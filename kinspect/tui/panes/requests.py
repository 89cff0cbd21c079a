"""What a pane asks of the app, by message: the app owns the state, so a pane that wants
another site, shape or tab says so and the app hands every pane the new view."""

from __future__ import annotations

from textual.message import Message

from kinspect.core.dispatch.shapes import ParsedShape


class SiteRequested(Message):
    """Show this site (and, with `tab`, that tab)."""

    def __init__(self, name: str, tab: str | None = None) -> None:
        super().__init__()
        self.name = name
        self.tab = tab


class ShapeRequested(Message):
    """Make this the shape, already parsed; the entry shows `text`."""

    def __init__(self, shape: ParsedShape, text: str) -> None:
        super().__init__()
        self.shape = shape
        self.text = text


class VariantRequested(Message):
    """Show this variant in the source tabs."""

    def __init__(self, index: int) -> None:
        super().__init__()
        self.index = index


class TabRequested(Message):
    """Show this tab, and focus `focus` (a selector) in it rather than its usual widget."""

    def __init__(self, tab: str, focus: str | None = None) -> None:
        super().__init__()
        self.tab = tab
        self.focus = focus


class ReloadRequested(Message):
    """The source's session grew (a live run's step): read it again."""


class DebuggerMoved(Message):
    """The debugger's cursor or breakpoints changed; `site` is its current event's site."""

    def __init__(self, site: str | None) -> None:
        super().__init__()
        self.site = site
