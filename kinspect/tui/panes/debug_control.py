"""The debugger the Debugger and Timeline tabs share: its cursor, breakpoints and live run.

One `Debugger` (the cursor over a recording, or a live model paused through a gate) sits
behind both tabs, so a step in either shows in both. This object holds it with the live
model it steps, and runs that model's workload in a thread worker of the Debugger pane
(`attach`), which receives the run's reports. It touches no widget; the panes draw what
it says and tell the app by message (`DebuggerMoved`).

One set of keys serves both kinds of session: over a recording they move a replay cursor
both ways; over a live model they pause the model's thread before a dispatch
(`PauseGate`) and may force the variant that runs.
"""

from __future__ import annotations

import functools

from textual.widget import Widget

from kinspect.core.debugger.stepping import PauseGate
from kinspect.core.session.model import Session
from kinspect.core.source import SteppableSource
from kinspect.core.debugger.cursor import Debugger
from kinspect.tui.live_run import RunStop, SourceGuard
from kinspect.tui.messages import LiveActivity, LivePaused, LiveStepDone


class DebugControl:
    def __init__(self, debugger: Debugger, steppable: SteppableSource | None, guard: SourceGuard) -> None:
        self.debugger = debugger
        self._steppable = steppable
        self._guard = guard
        self._run_stop: RunStop | None = None
        self._host: Widget | None = None
        self.activity: str | None = None
        """What the live source last said during the run (a recompile's progress)."""
        self.changes = 0
        """Counts what changed the debugger's picture (a move, a breakpoint, a report):
        a pane that drew this many changes need not draw again."""
        self.keys_state: tuple[object, ...] = ()
        """The debugger keys' states the footer last showed."""

    def attach(self, host: Widget) -> None:
        """The widget whose worker runs the live model, and to which its reports go."""
        self._host = host

    def changed(self) -> None:
        self.changes += 1

    def load(self, session: Session) -> None:
        """Take the app's new or grown session."""
        self.debugger.load(session)
        self.changed()

    def report(self, what: str) -> None:
        """The live source's progress during the run (Dynamo recompiling for a step), told to
        the run's host. The run posts a step's end there and then the next step's progress
        to the app; the two queues are read in no set order, so told here directly, a step's
        end could wipe what the next one is doing (the compile's line gone for its minutes).
        Behind the step reports already queued there, it comes after them."""
        if self._host is None:
            self.say(what)
        else:
            self._host.post_message(LiveActivity(what))

    def say(self, what: str) -> None:
        """The live source's progress during the run: a step, or Dynamo recompiling for one."""
        self.activity = what
        self.changed()

    @property
    def quitting(self) -> bool:
        return self._run_stop is not None and self._run_stop.quitting

    @property
    def recorded_events(self) -> int:
        """Dispatches the live source has recorded so far."""
        return len(self._steppable.session.events) if self._steppable is not None else 0

    # ------------------------------------------------------------ the live run

    def start_run(self, stepping: bool) -> None:
        host = self._host
        assert self._steppable is not None and host is not None
        self.activity = None
        gate = self.debugger.start_run(stepping, lambda e: host.post_message(LivePaused(e)))
        self._run_stop = RunStop(gate)
        self.changed()
        host.run_worker(functools.partial(self._live_run, self._steppable, gate, self._run_stop, host),
                        name="live_run", group="live-run", exclusive=True, exit_on_error=False, thread=True)

    def _live_run(self, source: SteppableSource, gate: PauseGate, stop: RunStop, host: Widget) -> None:
        """Run the workload with the gate installed, again after each restart; the gate
        blocks this thread at a pause (no CPU), and quitting releases it."""
        with self._guard.using():
            source.set_gate(gate.before)
            try:
                while True:
                    source.run_workload(lambda r: host.post_message(LiveStepDone(r.step, r.error)), stop)
                    if stop.quitting or not gate.take_restart():
                        return
            finally:
                source.set_gate(None)

    def run_ended(self) -> None:
        self.activity = None
        self.debugger.run_ended()
        self.changed()

    def close(self) -> None:
        """The app is going: release a run paused at a breakpoint."""
        if self._run_stop is not None:
            self._run_stop.set()
        self.debugger.close()
