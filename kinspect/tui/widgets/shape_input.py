"""Where a runtime shape is typed, with symbol names completed as they are typed."""

from __future__ import annotations

import re
from collections.abc import Sequence

from textual.binding import Binding
from textual.geometry import Size
from textual.reactive import Reactive
from textual.suggester import Suggester
from textual.widgets import Input

_TAIL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
_ASSIGNED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*=")


class SymbolSuggester(Suggester):
    """Completes the symbol name being typed, or offers the next symbol not yet given.

    `symbols` holds each symbol's names (its alias first, then Inductor's), so giving
    `B` stops `s0`, the same symbol, from being offered.
    """

    def __init__(self, symbols: Sequence[Sequence[str]]) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.symbols = [list(names) for names in symbols]

    async def get_suggestion(self, value: str) -> str | None:
        if value.lstrip().startswith(("(", "[")):
            return None
        m = _TAIL_NAME.search(value)
        partial = m.group(0) if m else ""
        before = value[: len(value) - len(partial)]
        if before and not (before[-1].isspace() or before[-1] == ","):
            return None
        used = set(_ASSIGNED.findall(value))
        for names in self.symbols:
            if used.intersection(names):
                continue
            for name in names:
                if name.startswith(partial):
                    return before + name + "="
        return None


class ShapeInput(Input):
    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)
    """Input's scroll extent (the text's width) changes with every key typed; the entry's
    own box is one line of fixed width, so that calls for no layout of the screen, which
    costs more than the rest of a keystroke put together."""

    BINDINGS = [
        # The app's action, run within the key's own handling: focus is back on the table
        # before the next key typed goes anywhere (a message would arrive after it).
        Binding("escape,enter", "app.leave_shape", "Back to table", show=False, id="kinspect.shape.done",
                tooltip="Leave the shape entry and return to the variants table"),
    ]

    def begin(self, text: str) -> None:
        """Make `text` the shape, typed while focus was elsewhere: the keys that follow go
        on after it (focus would otherwise select it, and the next key replace it)."""
        self.select_on_focus = False
        self.value = text
        self.cursor_position = len(text)
        self.screen.set_focus(self)  # at once, not after a refresh: the keys typed next are already queued

    def on_blur(self) -> None:
        self.select_on_focus = True  # `/` selects the shape, so typing replaces it
