"""Progress of a measurement or a compile running in a thread worker."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import ProgressBar, Static

from kinspect.tui.text import literal


class MeasureBar(Horizontal):
    def compose(self) -> ComposeResult:
        yield Static(classes="what")
        yield ProgressBar(show_eta=False)

    def start(self, what: str) -> None:
        self.query_one(".what", Static).update(Text(literal(what)))
        self.query_one(ProgressBar).update(total=None, progress=0)
        self.add_class("-running")

    def advance(self, done: int, total: int, what: str) -> None:
        self.query_one(".what", Static).update(Text(literal(what)))
        self.query_one(ProgressBar).update(total=total, progress=done)

    def say(self, what: str) -> None:
        """New text, the bar still running without a total (a compile has none)."""
        self.query_one(".what", Static).update(Text(literal(what)))

    def cancelling(self) -> None:
        self.query_one(".what", Static).update(Text("cancelling…", style="yellow"))

    def stop(self) -> None:
        self.remove_class("-running")
