"""Under the table: why the chosen variant, what it costs, what other rules would pick."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class DecisionSummary(Static):
    def show(self, text: Text) -> None:
        self.update(text)
