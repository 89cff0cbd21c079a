"""The debugger's breakpoints, one line each; removing one is reported, not done, here."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from kinspect.core.debugger.breakpoints import Breakpoint
from kinspect.tui.debug_text import breakpoint_prompt


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
