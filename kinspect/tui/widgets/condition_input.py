"""Where a breakpoint condition is typed, with the field name being typed completed."""

from __future__ import annotations

import re

from textual.binding import Binding
from textual.message import Message
from textual.suggester import Suggester
from textual.widgets import Input

_TAIL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


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

    class Left(Message):
        """Escape: the user left the input; the entry around it says so to the app."""

    def action_done(self) -> None:
        self.post_message(self.Left())
