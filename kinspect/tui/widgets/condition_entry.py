"""The condition entry under the breakpoints: the input and the parser's verdict below it.

The entry only reports what the user typed; the app parses conditions against the
session and says back what is wrong, so the entry shows the parser's one-line error,
column included, under the input.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Input, Label, Static

from kinspect.tui.text import literal
from kinspect.tui.widgets.condition_input import ConditionInput, FieldSuggester


class ConditionEntry(Vertical):
    error: reactive[str | None] = reactive(None)
    """Why the typed condition is not one; set by the app on every keystroke."""

    class Changed(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Done(Message):
        """The user left the entry."""

    def compose(self) -> ComposeResult:
        with Horizontal(id="condition-row"):
            yield Label("when ", id="condition-label")
            yield ConditionInput(placeholder='B > 512 and miss   ·   site == "multi_kernel_1"',
                                 suggester=FieldSuggester(), id="condition-input")
        yield Static(id="condition-status")

    def on_mount(self) -> None:
        self._show_status()

    def on_condition_input_left(self, event: ConditionInput.Left) -> None:
        event.stop()
        self.post_message(self.Done())

    def set_fields(self, names: list[str], example: str | None = None) -> None:
        """The fields a condition may name, and an example made of this session's own
        names (a site it has, a size it has), for the empty entry to show."""
        entry = self.query_one(ConditionInput)
        suggester = entry.suggester
        assert isinstance(suggester, FieldSuggester)
        suggester.fields = names
        if example is not None:
            entry.placeholder = example

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Changed(event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Submitted(event.value))

    def clear(self) -> None:
        self.query_one(ConditionInput).value = ""
        self.error = None

    def watch_error(self) -> None:
        self._show_status()

    def _show_status(self) -> None:
        status = self.query_one("#condition-status", Static)
        if self.error is None:
            status.update(Text("w: type a condition · enter adds it as a breakpoint · escape: back", style="dim"))
        else:
            status.update(Text("✗ " + literal(self.error), style="bold red"))
