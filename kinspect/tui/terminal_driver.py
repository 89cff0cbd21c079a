"""Textual drawing on a terminal given to it, for a live session whose descriptor 2 is a log.

`kinspect.commands.stderr_log` points descriptor 2, where Textual draws, at a log file
while a live model compiles and runs; the inspector then draws through this driver on a
duplicate of the terminal. It lives here because only kinspect.tui imports textual.
"""

from __future__ import annotations

import sys
from typing import IO, Any


def driver_drawing_to(terminal: IO[str]) -> type[Any] | None:
    """Textual's Linux driver, drawing on `terminal` instead of `sys.__stderr__` (None
    where that driver does not apply)."""
    if sys.platform == "win32":
        return None
    from textual.drivers.linux_driver import LinuxDriver

    class TerminalDriver(LinuxDriver):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._file = terminal  # what the driver's writer thread writes to

    return TerminalDriver
