"""One plain line to the user, with the outside text in it shown escaped.

The commands print through it, and so does `kinspect.recording()`, which runs inside a
user's program with no command around it: the library reaches it without the CLI.

A long compile or measurement reports far more than anyone reads (a timing round, a key, a
config autotuned): such a text is `Passing`. On a terminal each passing line is written over
the last, so the user sees one line of progress; through a pipe or into a log only the lines
that stay are written, and a passing one where none was for a minute (a ResNet's compile
autotunes for ten), so a log still says what a long compile is doing.
"""

from __future__ import annotations

import sys
import time

QUIET_S = 60.0
"""Through a pipe, the longest a compile or measurement goes without a line."""

from kinspect.core.errors import shown


class Passing(str):
    """A progress text the next one replaces."""


_open = False
"""A passing line is on the terminal now, not yet ended by a newline."""
_last_line = time.monotonic()
"""When the last line that stays was written (through a pipe, a passing one too)."""


def say(line: str, err: bool = False) -> None:
    """A plain line to stdout (or stderr, flushed) with the outside text in it shown escaped."""
    print(shown(line), file=sys.stderr if err else sys.stdout, flush=err)


def progress(text: str) -> None:
    """What a compile, a recording or a measurement is doing, on stderr."""
    global _open
    stream = sys.stderr
    tty = bool(getattr(stream, "isatty", lambda: False)())
    global _last_line
    if isinstance(text, Passing):
        if tty:
            stream.write("\r\x1b[K" + shown(f"kinspect: {text}")[:_columns() - 1])
            stream.flush()
            _open = True
        elif time.monotonic() - _last_line >= QUIET_S:
            _last_line = time.monotonic()
            say(f"kinspect: {text}", err=True)
        return
    if _open and tty:
        stream.write("\r\x1b[K")
    _open = False
    _last_line = time.monotonic()
    say(f"kinspect: {text}", err=True)


def _columns() -> int:
    import shutil

    return max(20, shutil.get_terminal_size((100, 24)).columns)
