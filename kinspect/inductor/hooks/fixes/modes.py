"""A fix of Inductor's that kinspect turns on for a recording (`--one-size-per-symbol`,
`--fusion-per-hint`).

Its patches are installed once per process, the first time a recording asks for it, and stay:
a program may hold a compiled function from an earlier compile, and Inductor may lower or
schedule a graph on any thread. So each patch calls Inductor's own method first or alone
unless the mode is on, which a process-wide count says (two recordings in one process may
overlap).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

from kinspect.core.errors import KinspectError


class Mode:
    def __init__(self, flag: str, install: Callable[[], None], missing: Callable[[], list[str]]) -> None:
        self.flag = flag
        self._install = install
        self.missing = missing
        """What this torch lacks for the mode (empty where it has everything)."""
        self._lock = threading.Lock()
        self._installed = False
        self._count = 0

    @property
    def active(self) -> bool:
        """Whether a recording in this mode is running now."""
        return self._count > 0

    def install(self) -> None:
        """The patches, once per process; none on a torch that lacks what they patch."""
        with self._lock:
            if not self._installed and not self.missing():
                self._install()
            self._installed = True

    @contextlib.contextmanager
    def on(self) -> Iterator[None]:
        """The mode on while inside; refused in one line on a torch that lacks what it patches."""
        lacking = self.missing()
        if lacking:
            raise KinspectError(f"{self.flag} needs what this torch lacks: {', '.join(lacking)}")
        self.install()
        with self._lock:
            self._count += 1
        try:
            yield
        finally:
            with self._lock:
                self._count -= 1
