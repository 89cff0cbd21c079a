"""A terminal for the TUI benchmarks that notes when each frame reaches it.

Under `run_test` Textual's headless driver makes `App._display` return before it turns
a frame into terminal text, so a frame "shown" there is a frame composed, not painted.
This driver says it is not headless: Textual renders every frame to the escape
sequences a terminal would get, writes them and flushes, and the flush is the moment
the benchmarks call painted.
"""

from __future__ import annotations

import time

from textual.drivers.headless_driver import HeadlessDriver


def timed_terminal(painted: list[float]) -> type[HeadlessDriver]:
    """A driver class appending the time of each flushed frame to `painted`; pass it to
    the app and run it with `run_test(headless=False)`."""

    class TimedTerminal(HeadlessDriver):
        @property
        def is_headless(self) -> bool:
            return False

        def flush(self) -> None:
            painted.append(time.perf_counter())

    return TimedTerminal
