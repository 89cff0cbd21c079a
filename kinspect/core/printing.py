"""One plain line to the user, with the outside text in it shown escaped.

The commands print through it, and so does `kinspect.recording()`, which runs inside a
user's program with no command around it: the library reaches it without the CLI.
"""

from __future__ import annotations

import sys

from kinspect.core.errors import shown


def say(line: str, err: bool = False) -> None:
    """A plain line to stdout (or stderr, flushed) with the outside text in it shown escaped."""
    print(shown(line), file=sys.stderr if err else sys.stdout, flush=err)


def progress(text: str) -> None:
    """What a compile, a recording or a measurement is doing, on stderr."""
    say(f"kinspect: {text}", err=True)
