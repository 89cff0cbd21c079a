"""The debugger tab's parts: the current event, the breakpoints, the condition entry.

The widgets only report what the user did (a breakpoint removed, a condition typed or
submitted); the app parses conditions against the session and says back what is wrong,
so the entry shows the parser's one-line error, column included, under the input.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.suggester import Suggester
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from kinspect.core.breakpoints import Breakpoint
from kinspect.tui.debug_text import breakpoint_prompt
from kinspect.tui.present import literal

_TAIL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


class EventPanel(Static, can_focus=True):
    """Where the debugger's keys go in this tab: it binds none of its own."""


class BreakpointList(OptionList):
    BINDINGS = [
        Binding("delete,x", "remove", "Remove breakpoint", id="kinspect.breakpoints.remove",
                tooltip="Remove the highlighted breakpoint"),
        Binding("j", "cursor_down", "Next breakpoint", show=False, id="kinspect.breakpoints.down",
                tooltip="Move to the next breakpoint"),
        Binding("k", "cursor_up", "Previous breakpoint", show=False, id="kinspect.breakpoints.up",
                tooltip="Move to the previous breakpoint"),
    ]

    class Removed(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def show(self, breakpoints: Sequence[Breakpoint]) -> None:
        keep = self.highlighted
        self.clear_options()
        if breakpoints:
            self.add_options([Option(breakpoint_prompt(b), id=str(i)) for i, b in enumerate(breakpoints)])
            self.highlighted = min(keep or 0, len(breakpoints) - 1)
        else:
            self.add_option(Option(Text("no breakpoints: b at the selected site, B on a cache miss, "
                                        "f when slower than the fastest, w when a condition holds", style="dim"),
                                   disabled=True))

    def action_remove(self) -> None:
        option = self.highlighted_option
        if option is not None and option.id is not None:
            self.post_message(self.Removed(int(option.id)))


class FieldSuggester(Suggester):
    """Completes the field name being typed (a symbol, `miss`, `t0d1`...)."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.fields: list[str] = []

    async def get_suggestion(self, value: str) -> str | None:
        m = _TAIL_NAME.search(value)
        if m is None or value[m.start() - 1:m.start()] in ("'", '"'):
            return None
        for name in self.fields:
            if name.startswith(m.group(0)) and name != m.group(0):
                return value[: m.start()] + name
        return None


class ConditionInput(Input):
    BINDINGS = [
        Binding("escape", "done", "Back", show=False, id="kinspect.condition.done",
                tooltip="Leave the condition entry without adding a breakpoint"),
    ]

    def action_done(self) -> None:
        self.post_message(ConditionEntry.Done())


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

    def set_fields(self, names: list[str]) -> None:
        suggester = self.query_one(ConditionInput).suggester
        assert isinstance(suggester, FieldSuggester)
        suggester.fields = names

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
        self.set_class(self.error is not None, "-invalid")
