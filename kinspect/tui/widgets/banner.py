"""The first line: what the user is looking at (a recording, and where it was made)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from kinspect.tui.present import literal


class Banner(Static):
    def __init__(self, text: str, *, live: bool, truncated: bool, id: str | None = None) -> None:
        super().__init__(Text(literal(text)), id=id)
        self.set_class(not live, "-recorded")
        self.set_class(truncated, "-truncated")

    def say(self, text: str, truncated: bool) -> None:
        self.update(Text(literal(text)))
        self.set_class(truncated, "-truncated")
