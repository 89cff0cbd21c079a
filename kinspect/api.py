"""`kinspect.recording()`: record the dispatches of a block of code, for notebooks and
servers where `kinspect run` cannot start the program.

Importing kinspect stays cheap (a server imports it at start-up): torch and Inductor are
imported when the first block starts.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


class recording(contextlib.ContextDecorator):  # noqa: N801 - used as `with kinspect.recording(...)`
    """`with kinspect.recording("run.session.json"):` or `@kinspect.recording(...)` on a
    function: what Inductor compiles inside and every size-hint dispatch made inside are
    saved as a session when the block ends, however it ends (its exception propagates).

    `measure=True` times every variant at each key the block ran, after it (CUDA GPU);
    `hints` compiles with those multi_kernel_hints where the code sets none. Under
    torchrun each rank saves its own file (`run.rank0.session.json`)."""

    def __init__(self, path: str | os.PathLike[str], measure: bool = False,
                 hints: Sequence[int] | None = None, *, _program: str | None = None) -> None:
        self.path = Path(path)
        self.measure = measure
        self.hints = list(hints) if hints else None
        self.program = _program or _caller_file()
        self._active: Any = None
        self.session: Any = None
        """The session saved when the last block ended."""

    def _recreate_cm(self) -> recording:
        """Each call of a decorated function records a session of its own."""
        return recording(self.path, self.measure, self.hints, _program=self.program)

    def __enter__(self) -> recording:
        from kinspect.core.printing import progress
        from kinspect.core.recording_files import recording_files
        from kinspect.inductor import torchrun, ProgramRecording, RunOptions

        rank = torchrun.from_environment()
        files = recording_files(str(self.path), self.path, rank=None if rank is None else rank.rank)
        self._active = ProgramRecording(RunOptions(files, self.program, self.hints, self.measure, rank, progress))
        self._active.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        active, self._active = self._active, None
        active.__exit__(*exc)
        self.session = active.finish()
        if active.forked:
            return
        shown = active.options.files.shown
        if active.kept:
            active.options.say(f"recorded nothing: no session saved, {shown} is as it was")
        else:
            active.options.say(f"saved {shown}: {len(self.session.sites)} sites, "
                               f"{len(self.session.events)} dispatches, {len(self.session.measurements)} measurements")
        reason = active.no_site_reason()
        if reason is not None:
            active.options.say(f"no size-hint multi-kernel: {reason}")
        died = active.compile_died()
        if died is not None:
            active.options.say(died)


def _caller_file() -> str:
    """The file of the code that made the recording (a notebook has none)."""
    frame = sys._getframe(2)
    return str(frame.f_globals.get("__file__") or "<interactive>")
