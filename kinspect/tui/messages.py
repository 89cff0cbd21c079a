"""Messages a measurement worker posts to the app (the worker never touches widgets)."""

from __future__ import annotations

from textual.message import Message

from kinspect.core.session import Measurement
from kinspect.core.shapes import Key


class MeasureProgress(Message):
    def __init__(self, done: int, total: int, what: str) -> None:
        super().__init__()
        self.done = done
        self.total = total
        self.what = what


class MeasureFinished(Message):
    def __init__(self, site: str, key: Key, measurements: list[Measurement], cancelled: bool) -> None:
        super().__init__()
        self.site = site
        self.key = key
        self.measurements = measurements
        self.cancelled = cancelled
