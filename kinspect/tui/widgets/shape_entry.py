"""Where a user types a runtime shape, parsed on every keystroke with errors inline.

The parse error (or the error the current site reports, set by the app) sits on the
line below the input, so the table keeps its last valid state while the user is
mid-word; the line names that state ("showing B=1"), as the dimming alone is lost
without colour.

The app learns of a new shape by watching `shape`, not by a message: a reactive's
watchers run inside the keystroke's own call, so the app re-decides before the screen
is next idle and one frame shows the typed character with the new table. A message
arrived a few hops later, after Textual had painted a frame with the character alone,
and Textual's frame timer then held the next frame back 17 to 33 ms.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.widgets import Input, Label, Static

from kinspect.core.errors import ShapeError
from kinspect.core.dispatch.shapes import ParsedShape, parse_shape
from kinspect.tui.text import literal
from kinspect.tui.widgets.shape_input import ShapeInput, SymbolSuggester


class ShapeEntry(Vertical):
    parse_error: var[str | None] = var(None)
    """Why the typed text is not a shape; set by the entry itself on every keystroke.
    These are `var`s: the entry draws nothing itself, its status line says them."""
    site_error: var[str | None] = var(None)
    """Why the current site cannot take the last valid shape; set by the app."""
    showing: var[str | None] = var(None)
    """While the typed text is not a shape: the last valid one, which every tab still
    shows; set by the app."""
    shape: var[ParsedShape | None] = var(None)
    """The text's shape, None while it does not parse; the app watches it."""

    def __init__(self, initial: str, symbols: Sequence[Sequence[str]], id: str | None = None) -> None:
        super().__init__(id=id)
        self._initial = initial
        self._symbols = symbols
        self.set_reactive(ShapeEntry.shape, _parse(initial)[0])
        self._given: tuple[str, ParsedShape] | None = None
        self._site_title = ""
        self._status: tuple[object, ...] = ()

    def compose(self) -> ComposeResult:
        with Horizontal(id="shape-row"):
            yield Label("shape ", id="shape-label")
            yield ShapeInput(
                self._initial,
                placeholder=_placeholder(self._initial),
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
        label = self.query_one("#shape-site", Static)
        if self._site_title != title:  # its width follows the title: lay out only when that changes
            label.update(Text(" " + literal(title), style="bold"), layout=len(title) != len(self._site_title))
            self._site_title = title

    def set_shape(self, shape: ParsedShape, text: str) -> None:
        """Make `shape` the entry's shape, showing `text`, as if typed but parsed already
        (the map's cursor and the measured keys give one): every tab follows."""
        self._given = (text, shape)
        self.query_one(ShapeInput).value = text
        self._given = None

    def set_symbols(self, initial: str, symbols: Sequence[Sequence[str]]) -> None:
        """A live session's symbols, known once it compiled; an empty entry takes `initial`."""
        entry = self.query_one(ShapeInput)
        suggester = entry.suggester
        assert isinstance(suggester, SymbolSuggester)
        suggester.symbols = [list(names) for names in symbols]
        entry.placeholder = _placeholder(initial)
        if not entry.value.strip() and initial:
            entry.value = initial

    def on_mount(self) -> None:
        self._show_status()
        self.watch(self.query_one(ShapeInput), "value", self._typed, init=False)

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()  # `_typed` saw the new value already

    def _typed(self, text: str) -> None:
        if self._given is not None and self._given[0] == text:
            self.shape, self.parse_error = self._given[1], None
        else:
            self.shape, self.parse_error = _parse(text)

    def watch_parse_error(self) -> None:
        self._show_status()

    def watch_site_error(self) -> None:
        self._show_status()

    def watch_showing(self) -> None:
        self._show_status()

    def on_descendant_focus(self) -> None:
        self._show_status()

    def on_descendant_blur(self) -> None:
        self._show_status()

    def _show_status(self) -> None:
        """Errors stay until mended; the keys line says what the keys do where focus is."""
        error = self.parse_error or self.site_error
        status = self.query_one("#shape-status", Static)
        if error is None:
            editing = self.query_one(ShapeInput).has_focus
            text = Text("→ completes a symbol name · enter: back to the table" if editing
                        else "/ or a size's name edits the shape", style="dim")
        else:
            text = Text("✗ " + literal(error), style="bold red")
            if self.parse_error is not None and self.showing:
                text = Text.assemble((f"showing {literal(self.showing)} · ", "bold reverse"), text)
        said = (text.plain, str(text.style), tuple(text.spans))
        if said != self._status:  # the same words again are no repaint
            status.update(text, layout=False)  # one line, as wide as the entry, whatever it says
            self._status = said


def _parse(text: str) -> tuple[ParsedShape | None, str | None]:
    try:
        return parse_shape(text), None
    except ShapeError as e:
        return None, str(e)


def _placeholder(initial: str) -> str:
    """An example in the session's own sizes (a B-only model never shows N)."""
    key = "or the whole key, as the runtime key line shows it"
    return f"{initial}  {key}" if initial else "the whole key, as the runtime key line shows it"
