"""What the commands' flags mean, parsed once for all commands (record, explain, sweep) and
the benchmarks that take the same flags; and how a command reports progress."""

from __future__ import annotations

import os
import sys

from rich.console import Console

from kinspect.core.errors import KinspectError, echo
from kinspect.core.dispatch.shapes import SymbolShape, parse_shape


def progress(text: str) -> None:
    print(f"kinspect: {text}", file=sys.stderr, flush=True)


def parse_steps(shapes: list[str] | None) -> list[dict[str, int]] | None:
    if not shapes:
        return None
    steps = []
    for text in shapes:
        parsed = parse_shape(text)
        if not isinstance(parsed, SymbolShape):
            raise KinspectError(f"--shapes takes symbol values like B=1000, not a full key: {echo(text)}")
        steps.append(parsed.values)
    return steps


def parse_baselines(text: str | None) -> list[str]:
    from kinspect.core.session.model import BASELINE_KINDS as KINDS

    kinds = [k for k in (text or "").replace(" ", "").split(",") if k]
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise KinspectError(f"--baselines takes {', '.join(KINDS)}; not {echo(bad[0])}")
    return kinds


def parse_hints(text: str) -> list[int]:
    try:
        hints = [int(h) for h in text.replace(" ", "").split(",") if h]
    except ValueError:
        raise KinspectError(f"--hints takes comma-separated positive integers, got {echo(text)}") from None
    if not hints or any(h <= 0 for h in hints):
        raise KinspectError(f"--hints takes comma-separated positive integers, got {echo(text)}")
    return hints


def table_console() -> Console:
    """The console tables print to: the terminal's width on a terminal (or $COLUMNS);
    through a pipe or into a file, wide enough that no name is cut."""

    wide = sys.stdout.isatty() or bool(os.environ.get("COLUMNS"))
    return Console(highlight=False, width=None if wide else PIPE_WIDTH)


PIPE_WIDTH = 1000
