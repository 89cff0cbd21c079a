"""A terminal for the TUI tests and benchmarks that is told of each frame Textual paints.

Under `run_test` Textual's headless driver makes `App._display` return before it turns
a frame into terminal text, so a frame "shown" there was composed, not painted. This
driver says it is not headless: Textual renders every frame to the escape sequences a
terminal would get, writes them and flushes, and the flush is the moment it reports.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.drivers.headless_driver import HeadlessDriver


def painting_terminal(on_frame: Callable[[], None]) -> type[HeadlessDriver]:
    """A driver class calling `on_frame` as each frame is flushed; give it to the app and
    run it with `run_test(headless=False)`."""

    class PaintingTerminal(HeadlessDriver):
        @property
        def is_headless(self) -> bool:
            return False

        def flush(self) -> None:
            on_frame()

    return PaintingTerminal
