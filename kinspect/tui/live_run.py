"""Thread plumbing between the app and a live source: stopping runs, closing the source.

The model runs in thread workers (compile, measure, the debugger's run), and quitting
must neither leave one blocked at a breakpoint nor close the source under one that is
still running: the last worker out closes it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from kinspect.core.debugger.stepping import PauseGate


class RunStop(threading.Event):
    """The `cancel` a debugger run passes to `run_workload`.

    Set when the app quits; it also reads as set while a restart waits to be taken, so
    the abandoned run stops at its next workload step instead of finishing the workload.
    """

    def __init__(self, gate: PauseGate) -> None:
        super().__init__()
        self._gate = gate

    def is_set(self) -> bool:
        return super().is_set() or self._gate.restarting

    @property
    def quitting(self) -> bool:
        return super().is_set()


class SourceGuard:
    """Counts the workers using a source; `close` runs once, after the last one leaves."""

    def __init__(self, close: Callable[[], None] | None) -> None:
        self._close = close
        self._lock = threading.Lock()
        self._users = 0
        self._closing = False

    @contextmanager
    def using(self) -> Iterator[None]:
        with self._lock:
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                now = self._closing and self._users == 0
            if now:
                self._run_close()

    def close(self) -> None:
        """Close now if no worker uses the source, else when the last one is done."""
        with self._lock:
            if self._closing:
                return
            self._closing = True
            now = self._users == 0
        if now:
            self._run_close()

    def _run_close(self) -> None:
        with self._lock:
            close, self._close = self._close, None
        if close is not None:
            close()
