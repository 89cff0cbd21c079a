"""The debugger's state: one cursor over dispatch events, recorded or live, and its breakpoints.

A recording steps a `Replay` over its events in both directions; a live model steps the
model itself through a `PauseGate`, forwards only. One object holds either, with the
breakpoints both share, so the Debugger and Timeline tabs map the same keys to the same
methods in both modes and draw what `current` says. Nothing here touches widgets or
starts threads: the Debugger pane's worker runs the model and reports pauses back
through `on_paused`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kinspect.core.debugger.breakpoints import Breakpoint, EventContext
from kinspect.core.errors import KinspectError
from kinspect.core.debugger.replay import Replay
from kinspect.core.session.runtime import DispatchEvent
from kinspect.core.session.model import Session
from kinspect.core.debugger.stepping import PauseGate
from kinspect.core.debugger.timeline import Timeline

IDLE, RUNNING, PAUSED = "idle", "running", "paused"


@dataclass(frozen=True)
class Current:
    """The event the debugger shows, and where it stands."""

    event: DispatchEvent
    index: int | None
    """Its position in `session.events`; None for a live dispatch not yet recorded."""
    total: int
    matched: tuple[Breakpoint, ...]
    """The breakpoints that stop here."""
    stopped: bool = False
    """A continue (either way) stopped here at `matched`; a step or a jump that lands on
    a breakpoint's event did not stop by it."""


class Debugger:
    def __init__(self, session: Session, live: bool) -> None:
        self.live = live
        self.breakpoints: list[Breakpoint] = []
        self.state = IDLE
        """Live only: whether a run of the workload is going on, and paused."""
        self.gate: PauseGate | None = None
        self.paused: DispatchEvent | None = None
        self.pending_override: int | None = None
        """The variant the user forced for the paused dispatch, until it runs."""
        self.runs = 0
        self.continuing = False
        """The last move ran on to a breakpoint (c, C, or a live run let go)."""
        self.replay: Replay | None = None
        self._timeline: Timeline | None = None
        self.load(session)

    # ------------------------------------------------------------ session

    def load(self, session: Session) -> None:
        """Take a new or grown session (a live one grows after every workload step)."""
        self.session = session
        self.ctx = EventContext(session)
        self._timeline = None
        if not self.live:
            index = self.replay.index if self.replay is not None else -1
            self.replay = Replay(session, self.ctx)
            self.replay.index = min(index, len(session.events) - 1)
        self._sync()

    @property
    def timeline(self) -> Timeline:
        """Built on first use after each load (45 ms for 100,000 events)."""
        if self._timeline is None:
            self._timeline = Timeline(self.session)
        return self._timeline

    @property
    def current(self) -> Current | None:
        if self.replay is not None:
            e = self.replay.current
            if e is None:
                return None
            matched = tuple(self.replay.matching())
            return Current(e, self.replay.index, len(self.replay.events), matched, self.continuing and bool(matched))
        if self.paused is None:
            return None
        e = self.paused
        matched = tuple(b for b in self.breakpoints if b.matches(e, self.ctx))
        return Current(e, None, len(self.session.events), matched, self.continuing and bool(matched))

    # ------------------------------------------------------------ breakpoints

    def toggle_site(self, site: str) -> bool:
        """Add a breakpoint on `site`, or remove the one there; True when added."""
        return self._toggle(lambda b: b.kind == "site" and b.site == site and b.condition is None,
                            lambda: Breakpoint.on_site(site, self.ctx))

    def toggle_miss(self) -> bool:
        return self._toggle(lambda b: b.kind == "miss" and b.condition is None,
                            lambda: Breakpoint.on_miss(self.ctx))

    def toggle_not_fastest(self) -> bool:
        return self._toggle(lambda b: b.kind == "not_fastest" and b.condition is None,
                            lambda: Breakpoint.on_not_fastest(self.ctx))

    def check_condition(self, text: str) -> Breakpoint:
        """The breakpoint a typed condition makes; a ConditionError names the column."""
        return Breakpoint.when(text, self.ctx)

    def add(self, bp: Breakpoint) -> None:
        self.breakpoints.append(bp)
        self._sync()

    def remove(self, index: int) -> Breakpoint:
        bp = self.breakpoints.pop(index)
        self._sync()
        return bp

    def _toggle(self, same: Callable[[Breakpoint], bool], make: Callable[[], Breakpoint]) -> bool:
        for i, b in enumerate(self.breakpoints):
            if same(b):
                self.remove(i)
                return False
        self.add(make())
        return True

    def _sync(self) -> None:
        if self.replay is not None:
            self.replay.set_breakpoints(self.breakpoints)
        if self.gate is not None:
            self.gate.set_breakpoints(self.breakpoints, self.ctx)

    # ------------------------------------------------------------ replay moves

    def move(self, how: str) -> bool:
        """step, back, cont, reverse, first or last; False when the cursor stayed."""
        assert self.replay is not None
        moved = getattr(self.replay, how)() is not None
        if moved:
            self.continuing = how in ("cont", "reverse")
        return moved

    def goto_seq(self, seq: int) -> bool:
        assert self.replay is not None
        self.continuing = False
        return self.replay.goto_seq(seq) is not None

    def goto_index(self, index: int) -> bool:
        assert self.replay is not None
        self.continuing = False
        return self.replay.goto(index) is not None

    # ------------------------------------------------------------ live run

    def start_run(self, stepping: bool, on_pause: Callable[[DispatchEvent], None]) -> PauseGate:
        """A gate for a new run of the workload; the app's worker installs it."""
        self.gate = PauseGate(on_pause, stepping=stepping)
        self.gate.set_breakpoints(self.breakpoints, self.ctx)
        self.state = RUNNING
        self.paused = None
        self.continuing = not stepping
        self.runs += 1
        return self.gate

    def on_paused(self, event: DispatchEvent) -> None:
        self.paused = event
        self.pending_override = None
        self.state = PAUSED

    def step(self) -> None:
        """Run the paused dispatch and pause before the next (while running: pause)."""
        assert self.gate is not None
        self.gate.step()
        self.state = RUNNING
        self.continuing = False

    def cont(self) -> None:
        assert self.gate is not None
        self.gate.cont()
        self.state = RUNNING
        self.continuing = True

    def restart(self) -> None:
        assert self.gate is not None
        self.gate.restart()
        self.state = RUNNING
        self.continuing = False

    def override(self, variant: int) -> None:
        if self.gate is None or self.state != PAUSED:
            raise KinspectError("nothing is paused: an override applies to a paused dispatch")
        self.gate.override(variant)
        self.pending_override = variant

    def run_ended(self) -> None:
        self.gate = None
        self.state = IDLE
        self.paused = None
        self.pending_override = None

    def close(self) -> None:
        if self.gate is not None:
            self.gate.close()
