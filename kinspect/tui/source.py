"""Where the inspector's session comes from: a recording, a live compile, or a test fake.

The app takes a source as its one constructor argument, so the live pipeline can plug
in later without the UI changing, and tests drive the real app with a fake. `measure`
runs in a thread worker: it must not touch the UI, it reports through `progress` and it
stops early when `cancel` is set. It returns the measurements it made; the app adds them
to the session on its own thread, so the session is never mutated from two threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from kinspect.core.errors import KinspectError
from kinspect.core.session import Measurement, Session, Site
from kinspect.core.shapes import Key

ProgressCallback = Callable[[int, int, str], None]
"""`progress(done, total, what)`: `what` is a short phrase such as "v1 (hint 256)"."""


class SessionSource(Protocol):
    @property
    def session(self) -> Session: ...

    @property
    def live(self) -> bool:
        """True when the session comes from a model running on this machine."""
        ...

    @property
    def can_measure(self) -> bool:
        """Whether `measure` can run here (a GPU and the compiled model are at hand)."""
        ...

    def banner(self) -> str:
        """One line saying what the user is looking at; shown as plain text."""
        ...

    def measure(
        self, site: Site, key: Key, progress: ProgressCallback, cancel: threading.Event
    ) -> list[Measurement]:
        """Time every variant of `site` at `key`; called from a thread worker."""
        ...


class RecordedSource:
    """A session file opened on any machine: everything is shown, nothing is measured."""

    live = False
    can_measure = False

    def __init__(self, session: Session, path: str | Path | None = None) -> None:
        self._session = session
        self.path = None if path is None else Path(path)

    @property
    def session(self) -> Session:
        return self._session

    def banner(self) -> str:
        env = self._session.environment
        parts = [f"Recording made on {env.gpu or 'an unknown GPU'}", f"torch {env.torch or 'unknown'}", env.created]
        if self.path is not None:
            parts.append(str(self.path))
        text = " · ".join(parts)
        if self._session.truncated:
            text += f" · truncated: {self._session.truncated}"
        return text

    def measure(
        self, site: Site, key: Key, progress: ProgressCallback, cancel: threading.Event
    ) -> list[Measurement]:
        raise KinspectError(
            "a recorded session cannot measure: open the model itself on a CUDA machine"
        )
