"""The line `explain` opens with for any session: did the hints take effect (and, for a
session read from a TORCH_TRACE log, that it holds compiled code only)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from kinspect.core.quality.hints_effect import hints_effect
from kinspect.core.session.model import Session
from kinspect.core.trace.stated import TRACE_NOTE, from_trace


def print_hints(session: Session, console: Console) -> None:
    effect = hints_effect(session)
    console.print(Text(effect.line(), style="bold" if effect.sites else "bold yellow"))
    trace = from_trace(session.environment.config)
    if trace is not None:
        console.print(Text(f"{trace}: {TRACE_NOTE}", style="dim"))


def with_hints(data: dict[str, Any], session: Session) -> dict[str, Any]:
    """`explain --json`'s output with a top-level "hints" object (`line`, `hints`, `sites`,
    `graphs_with_sites`, `graphs`, `without_multi_kernel`: [{graph, name, op, line, reason}])
    and, for a trace, "torch_trace": the log's name."""
    out = {"hints": hints_effect(session).to_json(), **data}
    trace = from_trace(session.environment.config)
    if trace is not None:
        out["torch_trace"] = trace
    return out
