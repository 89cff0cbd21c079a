"""The `?` screen: every key of the inspector, what it does, and how shapes are typed."""

from __future__ import annotations

from collections.abc import Iterable

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

INTRO = (
    "Type a runtime shape by symbol names (B=1000 N=64), or as the whole key the site "
    "sees, one size tuple per tensor as the runtime key line under the decision shows it "
    "((4096,),(1000,1024),(4096,1024),(1000,4096) for samples/mlp.py's first Linear); a key "
    "that starts a shape (B, or a parenthesis) typed on the table starts one in the entry. "
    "Every valid keystroke re-decides the current site with "
    "kinspect's model of Inductor's dispatch. → accepts a suggested symbol name; enter "
    "or escape returns to the table. The palette (ctrl+p) lists every action.\n\n"
    "The Debugger and Timeline tabs (6, 7) step through dispatch events: over a recording "
    "both ways; over a live model forwards, pausing the model before the dispatch, where o "
    "then a variant's number forces the variant that runs. Their keys act in those two tabs. "
    "Conditions read like site == \"multi_kernel_0\" and B > 512 (docs/breakpoints.md)."
)


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,question_mark,q", "dismiss", "Close help", id="kinspect.help.close",
                tooltip="Close this help screen"),
    ]

    def __init__(self, bindings: Iterable[tuple[str, Binding]]) -> None:
        super().__init__()
        self._keys = list(bindings)

    def compose(self) -> ComposeResult:
        table = Table(box=None, expand=True, show_header=True, header_style="bold")
        table.add_column("key", no_wrap=True)
        table.add_column("where", no_wrap=True)
        table.add_column("action")
        for where, b in self._keys:
            keys = b.key_display or ", ".join(self.app.get_key_display(b.with_key(k)) for k in b.key.split(","))
            table.add_row(Text(keys), Text(where, style="dim"), Text(f"{b.description}: {b.tooltip}"))
        with VerticalScroll(id="help-body"):
            yield Static(Text("kinspect inspector — keys", style="bold"))
            yield Static(Text(INTRO), classes="intro")
            yield Static(table)
