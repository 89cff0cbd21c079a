"""Messages that reach the app from outside its panes: what thread workers post (a worker
never touches widgets), and the marker that a key has passed its widget."""

from __future__ import annotations

from textual.message import Message

from kinspect.core.session.runtime import Baseline, DispatchEvent, Measurement
from kinspect.core.dispatch.shapes import Key


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


class BaselinesFinished(Message):
    def __init__(self, baselines: list[Baseline], cancelled: bool) -> None:
        super().__init__()
        self.baselines = baselines
        self.cancelled = cancelled


class PrepareProgress(Message):
    """What the live source is doing now: which graph compiles, which hint autotunes."""

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what


class LivePaused(Message):
    """The model's thread is blocked before this dispatch (posted from that thread)."""

    def __init__(self, event: DispatchEvent) -> None:
        super().__init__()
        self.event = event


class LiveActivity(Message):
    """What the live source said during the debugger's run (Dynamo recompiling for a step),
    sent on to the run's host, where the step reports posted before it are already queued."""

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what


class LiveStepDone(Message):
    """A workload step of the debugger's run finished; the session has grown."""

    def __init__(self, step: int | None, error: str | None) -> None:
        super().__init__()
        self.step = step
        self.error = error


class KeyPassed(Message):
    """Posted to the focused widget right behind a key the app handed it: back at the app,
    that key has been handled, and the next may go."""

    def __init__(self, token: int, rounds: int = 1) -> None:
        super().__init__()
        self.token = token
        self.rounds = rounds
