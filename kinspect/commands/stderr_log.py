"""Keep a live compile's messages off the inspector's screen, in a log file instead.

Textual draws on the terminal through file descriptor 2. A live session compiles and
measures in the same process, and what that prints goes to descriptor 2 as well: Dynamo
and Inductor log through handlers bound to `sys.stderr` when torch was imported (the
autotune tables), CUPTI and Triton write from C. Any of it lands in the middle of the
screen. So while the inspector runs on a live model, descriptor 2 points at a log file and
Textual draws through a duplicate of the terminal's descriptor (kinspect.tui.terminal_driver).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


@contextmanager
def stderr_to_log(path: Path) -> Iterator[IO[str]]:
    """Point descriptor 2 at `path` (appending); yields a text file on the terminal that
    descriptor 2 was. Restored on exit, whatever happened."""
    sys.stderr.flush()
    saved = os.dup(2)
    terminal = os.fdopen(os.dup(saved), "w", encoding="utf-8", errors="replace")
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(log, 2)
        yield terminal
    finally:
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os.dup2(saved, 2)
        os.close(saved)
        os.close(log)
        terminal.close()


def log_path_for(model: Path) -> Path:
    """`model.kinspect.log` beside the model, where the user will look for it."""
    return model.with_name(model.stem + ".kinspect.log")
