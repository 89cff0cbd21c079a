"""`kinspect export`: a session as JSON, a Markdown report or a Perfetto trace."""

from __future__ import annotations

from kinspect.core.export import export
from kinspect.core.sessionfile.files import load


def run(session_path: str, fmt: str, out: str) -> int:
    session = load(session_path)
    export(session, fmt, out)
    print(f"wrote {out} ({fmt}, {len(session.events)} events)")
    return 0
