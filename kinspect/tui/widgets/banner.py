"""The first line: what the user is looking at (a recording, and where it was made), and
what is wrong with the model file behind a recording, once its check in the background
has found it."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from kinspect.tui.text import literal


RECORDED = "m, a, o need the live model on a CUDA GPU"
"""What a recording cannot do, said where the user first looks."""


class Banner(Static):
    def __init__(self, text: str, *, live: bool, truncated: bool, id: str | None = None) -> None:
        super().__init__(id=id)
        self._live = live
        self._said = text
        self.set_class(not live, "-recorded")
        self.say(text, truncated)

    def say(self, text: str, truncated: bool) -> None:
        self._said = text
        out = Text(literal(text))
        if not self._live:
            out.append(" · " + RECORDED, style="bold")
        self.update(out)
        self.set_class(truncated, "-truncated")

    def failed(self, error: str) -> None:
        """The model file behind the recording does not load: say so first, in red."""
        self.update(Text(literal(f"{error} · still showing {self._said}")))
        self.add_class("-failed")
