"""Under the table: why the chosen variant, what it costs, what other rules would pick."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class DecisionSummary(Static):
    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self._height = -1

    def show(self, text: Text) -> None:
        """Show new text; lay the screen out again only when its height changes.

        A relayout costs more than the rest of a keystroke put together, and most
        keystrokes change the numbers in the summary, not its number of lines.
        """
        width = self.content_size.width
        height = len(text.wrap(self.app.console, width)) if width else -1
        self.update(text, layout=height != self._height)
        self._height = height
