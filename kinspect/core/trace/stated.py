"""What a session read from a TORCH_TRACE log says of it, wherever it is shown (the banner,
explain): its `environment.config` names the log, and the session holds compiled code only.
Light on purpose: the inspector reads it for every session it opens."""

from __future__ import annotations

from collections.abc import Mapping

TRACE_KEY = "torch_trace"
"""environment.config: the log a session was read from (its file name)."""
COMPILES_KEY = "trace_compiles"
"""environment.config: each compile the log held, with what it compiled."""
TRACE_NOTE = "read from a TORCH_TRACE log: compiled code only, no dispatch events and no measurements"
TRACE_BANNER = "compiled code only: no dispatch events, no measurements"


def from_trace(config: Mapping[str, object]) -> str | None:
    """The log a session was read from, if it was read from one."""
    value = config.get(TRACE_KEY)
    return value if isinstance(value, str) else None
