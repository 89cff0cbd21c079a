"""The console every headless command prints through.

What a command prints holds text from outside kinspect (session strings, file names, a
model's messages). A render hook passes every piece of text through `shown` after Rich
has laid it out and before it styles it, so no table cell or line, wherever it was
built, can carry an escape sequence or a bidi override to the terminal; Rich's own
styling is added after, untouched.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType, RenderHook, RenderResult
from rich.segment import Segment

from kinspect.core.errors import shown


class _Shown:
    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for seg in console.render(self.renderable, options):
            yield seg if seg.control else Segment(shown(seg.text, lines=True), seg.style)


class _Hook(RenderHook):
    def process_renderables(self, renderables: list[RenderableType]) -> list[RenderableType]:
        return [_Shown(r) for r in renderables]


def console(**options: Any) -> Console:
    """A Rich console (no highlighting) whose output shows outside text escaped."""
    out = Console(highlight=False, **options)
    out.push_render_hook(_Hook())
    return out


def table_console() -> Console:
    """The console tables print to: the terminal's width on a terminal (or $COLUMNS);
    through a pipe or into a file, wide enough that no name is cut."""
    wide = sys.stdout.isatty() or bool(os.environ.get("COLUMNS"))
    return console(width=None if wide else PIPE_WIDTH)


PIPE_WIDTH = 1000
"""Columns of a table written to a pipe or a file: wider than any row kinspect prints."""
