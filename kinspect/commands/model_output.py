"""What a model file prints while kinspect loads it, kept from burying kinspect's answer.

Checking a model file imports it and runs its input builder in kinspect's process. A
file that prints a lot there (a progress bar, a warning per layer, 100 MB of debug
output) would scroll kinspect's one-line error out of sight, or, written to a buffered
stdout, flush after it. So for that time everything it prints, through Python's streams
or straight to file descriptors 1 and 2 from C, goes into a pipe; afterwards its first
and last `KEEP` bytes come out on stderr (stdout stays kinspect's: `explain --json`
stays JSON), saying how much was left out between them, and the error comes after.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from typing import IO

KEEP = 8 * 1024
"""Bytes kept from each end of what a model file prints while it loads."""
_CHUNK = 64 * 1024
_DRAIN_S = 2.0
"""How long to wait for the pipe's end once loading is over: a process the model started
may hold it open for good."""


class _Tap(threading.Thread):
    """Reads the pipe as the model writes into it, keeping its head and its tail."""

    def __init__(self, fd: int) -> None:
        super().__init__(name="kinspect-model-output", daemon=True)
        self.fd = fd
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def run(self) -> None:
        while chunk := os.read(self.fd, _CHUNK):
            self.total += len(chunk)
            room = KEEP - len(self.head)
            if room > 0:
                self.head += chunk[:room]
                chunk = chunk[room:]
            self.tail += chunk
            if len(self.tail) > 2 * KEEP:
                del self.tail[:-KEEP]
        os.close(self.fd)

    def text(self, name: str) -> str:
        tail = bytes(self.tail[-KEEP:])
        left_out = self.total - len(self.head) - len(tail)
        out = self.head.decode("utf-8", "replace")
        if left_out > 0:
            out += f"\n[kinspect: {left_out:,} bytes that {name} printed while loading are left out here]\n"
        out += tail.decode("utf-8", "replace")
        return out if not out or out.endswith("\n") else out + "\n"


@contextlib.contextmanager
def model_output(name: str, into: IO[str] | None = None) -> Iterator[None]:
    """Within the block, what is printed goes to a pipe; after it (raised or not), at
    most 2 * KEEP bytes of it are written to `into` (stderr when None), named `name`."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    read_fd, write_fd = os.pipe()
    tap = _Tap(read_fd)
    tap.start()
    saved = os.dup(1), os.dup(2)
    streams = sys.stdout, sys.stderr
    text = open(write_fd, "w", encoding="utf-8", errors="backslashreplace", buffering=1)
    os.dup2(write_fd, 1)
    os.dup2(write_fd, 2)
    sys.stdout = sys.stderr = text
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            text.flush()
        sys.stdout, sys.stderr = streams
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)
        with contextlib.suppress(Exception):
            text.close()
        tap.join(_DRAIN_S)
        out = into if into is not None else sys.stderr
        out.write(tap.text(name))
        out.flush()
