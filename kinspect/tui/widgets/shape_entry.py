"""Where a user types a runtime shape, parsed on every keystroke with errors inline.

The parse error (or the error the current site reports, set by the app) sits on the
line below the input, so the table keeps its last valid state while the user is
mid-word; the line names that state ("showing B=1"), as the dimming alone is lost
without colour.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Input, Label, Static

from kinspect.core.errors import ShapeError
from kinspect.core.shapes import ParsedShape, parse_shape
from kinspect.tui.present import literal
from kinspect.tui.widgets.shape_input import ShapeInput, SymbolSuggester


class ShapeEntry(Vertical):
    parse_error: reactive[str | None] = reactive(None)
    """Why the typed text is not a shape; set by the entry itself on every keystroke."""
    site_error: reactive[str | None] = reactive(None)
    """Why the current site cannot take the last valid shape; set by the app."""
    showing: reactive[str | None] = reactive(None)
    """While the typed text is not a shape: the last valid one, which every tab still
    shows; set by the app."""

    class Changed(Message):
        """A keystroke gave a new text; `shape` is None when it does not parse."""

        def __init__(self, text: str, shape: ParsedShape | None) -> None:
            super().__init__()
            self.text = text
            self.shape = shape

    class Done(Message):
        """The user finished editing (enter or escape)."""

    def __init__(self, initial: str, symbols: Sequence[Sequence[str]], id: str | None = None) -> None:
        super().__init__(id=id)
        self._initial = initial
        self._symbols = symbols

    def compose(self) -> ComposeResult:
        with Horizontal(id="shape-row"):
            yield Label("shape ", id="shape-label")
            yield ShapeInput(
                self._initial,
                placeholder="B=1000 N=64  or the whole key, as the runtime key line shows it",
                suggester=SymbolSuggester(self._symbols),
                id="shape-input",
            )
            yield Static(id="shape-site")
        yield Static(id="shape-status")

    @property
    def text(self) -> str:
        return self.query_one(ShapeInput).value

    def set_site(self, title: str) -> None:
        """Which site the tabs show, for small screens where the site list is hidden."""
        self.query_one("#shape-site", Static).update(Text(" " + literal(title), style="bold"))

    def set_text(self, text: str) -> None:
        """Put a shape in the entry as if typed (the map's cursor does): every tab follows."""
        self.query_one(ShapeInput).value = text

    def set_symbols(self, initial: str, symbols: Sequence[Sequence[str]]) -> None:
        """A live session's symbols, known once it compiled; an empty entry takes `initial`."""
        entry = self.query_one(ShapeInput)
        suggester = entry.suggester
        assert isinstance(suggester, SymbolSuggester)
        suggester.symbols = [list(names) for names in symbols]
        if not entry.value.strip() and initial:
            entry.value = initial

    def on_mount(self) -> None:
        self._show_status()

    def on_shape_input_left(self, event: ShapeInput.Left) -> None:
        event.stop()
        self.post_message(self.Done())

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        try:
            shape = parse_shape(event.value)
        except ShapeError as e:
            self.parse_error = str(e)
            shape = None
        else:
            self.parse_error = None
        self.post_message(self.Changed(event.value, shape))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Done())

    def watch_parse_error(self) -> None:
        self._show_status()

    def watch_site_error(self) -> None:
        self._show_status()

    def watch_showing(self) -> None:
        self._show_status()

    def _show_status(self) -> None:
        error = self.parse_error or self.site_error
        status = self.query_one("#shape-status", Static)
        if error is None:
            status.update(Text("→ completes a symbol name · enter: back to the table", style="dim"))
        else:
            text = Text("✗ " + literal(error), style="bold red")
            if self.parse_error is not None and self.showing:
                text = Text.assemble((f"showing {literal(self.showing)} · ", "bold reverse"), text)
            status.update(text)
        self.set_class(error is not None, "-invalid")
