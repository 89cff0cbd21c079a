"""Where the inspector's session comes from: a recording, a live compile, or a test fake.

The contract lives in the core because three layers meet at it: `kinspect.inductor`
implements it (LiveSource), `kinspect.commands` picks a source, and `kinspect.tui` drives
one, and none of them may import another for it. The app takes a source as its one
constructor argument, so the live pipeline plugs in without the UI importing it, and
tests drive the real app with a fake. The slow methods
(`prepare`, `measure`, `run_workload`) run in thread workers: they must not touch the
UI, they report through callbacks the app turns into messages, and they stop early when
`cancel` is set.

A source owns its session: `measure` and `baselines` add what they made to it, under the
source's own lock, and return it for the app's report. The app never writes the session;
it reads it, and reads it again when a worker is done.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from kinspect.core.errors import KinspectError
from kinspect.core.session.compile_changes import CompileChanges
from kinspect.core.ranks.merged import MergedRanks
from kinspect.core.session.runtime import Baseline, DispatchEvent, Measurement
from kinspect.core.session.model import Session, Site
from kinspect.core.trace.stated import TRACE_BANNER, from_trace
from kinspect.core.dispatch.shapes import Key

ProgressCallback = Callable[[int, int, str], None]
"""`progress(done, total, what)`: `what` is a short phrase such as "v1 (hint 256)"."""


class SessionSource(Protocol):
    @property
    def session(self) -> Session: ...

    @property
    def live(self) -> bool:
        """True when the session comes from a model running on this machine."""
        ...

    @property
    def can_measure(self) -> bool:
        """Whether `measure` can run here (a GPU and the compiled model are at hand)."""
        ...

    @property
    def prepared(self) -> bool:
        """False until `prepare` has run; a recording is ready at once."""
        ...

    def banner(self) -> str:
        """One line saying what the user is looking at; shown as plain text."""
        ...

    def prepare(self, progress: Callable[[str], None], cancel: threading.Event) -> None:
        """Make the session (a live source compiles: minutes under max-autotune).

        Called from a thread worker right after the app starts when `prepared` is False;
        `progress` gets a phrase such as which graph or hint is autotuning. The app reads
        `session` again when it returns.
        """
        ...

    def measure(
        self, site: Site, key: Key, progress: ProgressCallback, cancel: threading.Event
    ) -> list[Measurement]:
        """Time every variant of `site` at `key`; called from a thread worker."""
        ...


EventGate = Callable[[DispatchEvent], "int | None"]
"""Called on the model's thread before each dispatch; may block; returns a variant to force."""


@runtime_checkable
class SteppableSource(Protocol):
    """A live source whose workload the debugger runs, pausing before dispatches.

    `run_workload` runs in a thread worker, calls `on_step` after each workload step and
    checks `cancel` between steps; `set_gate` installs the callable the model's thread
    calls before each dispatch (None removes it).
    """

    def run_workload(self, on_step: Callable[[Any], None] | None = None,
                     cancel: threading.Event | None = None) -> list[Any]: ...

    def set_gate(self, gate: EventGate | None) -> None: ...


@runtime_checkable
class BaselineSource(Protocol):
    """A live source that can time the whole model at a shape compiled other ways (eager,
    static, with the exact size as its only hint, hinted), each afresh: minutes a kind.
    Called from a thread worker; `cancel` is checked between kinds."""

    def baselines(self, site: Site, key: Key, progress: Callable[[str], None],
                  cancel: threading.Event) -> list[Baseline]: ...


@runtime_checkable
class CheckedSource(Protocol):
    """A source whose session stands for a file that is checked while it is shown: a
    model's recording opened without a GPU, whose model file takes seconds to load
    (it imports torch). `check` runs in a thread worker, raises the file's one-line
    KinspectError, and returns early once `cancel` is set."""

    def check(self, cancel: threading.Event) -> None: ...


class RecordedSource:
    """A session file opened on any machine: everything is shown, nothing is measured."""

    live = False
    can_measure = False
    prepared = True

    def __init__(self, session: Session, path: str | Path | None = None, ranks: MergedRanks | None = None) -> None:
        self._session = session
        self.path = None if path is None else Path(path)
        self.ranks = ranks
        """A torchrun job's ranks, `session` being the lowest rank's: the Ranks tab shows them."""

    @property
    def session(self) -> Session:
        return self._session

    def banner(self) -> str:
        env = self._session.environment
        trace = from_trace(env.config)
        if trace is not None:
            parts = [f"TORCH_TRACE log {trace}", f"torch {env.torch or 'unknown'}", env.created,
                     f"compiled for {env.gpu}" if env.gpu else "", TRACE_BANNER]
            parts = [p for p in parts if p]
        else:
            parts = [f"Recording made on {env.gpu or 'an unknown GPU'}", f"torch {env.torch or 'unknown'}", env.created]
        if self.path is not None and trace is None:
            parts.append(str(self.path))
        text = " · ".join(parts)
        if self.ranks is not None:
            others = self.ranks.ranks[1:]
            text += (f" · rank {self.ranks.ranks[0]} of {self.ranks.world_size}; "
                     f"{'rank' if len(others) == 1 else 'ranks'} {', '.join(map(str, others))} "
                     "beside it in the Ranks tab (9)")
        if self._session.truncated:
            text += f" · truncated: {self._session.truncated}"
        changed = CompileChanges.stated(env.config).banner()
        if changed:
            text += f" · {changed}"
        return text

    def prepare(self, progress: Callable[[str], None], cancel: threading.Event) -> None:
        """Nothing to do: the file was read before the app started."""

    def measure(
        self, site: Site, key: Key, progress: ProgressCallback, cancel: threading.Event
    ) -> list[Measurement]:
        raise KinspectError(
            "a recorded session cannot measure: open the model itself on a CUDA machine"
        )
