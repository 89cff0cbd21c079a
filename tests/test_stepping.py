"""The live pause gate with real threads: a worker dispatching, the test thread as the UI."""

from __future__ import annotations

import queue
import threading
import time

import pytest
from synthetic import synthetic_session

from kinspect.core.debugger.breakpoints import Breakpoint, EventContext
from kinspect.core.errors import KinspectError
from kinspect.core.session.runtime import DispatchEvent
from kinspect.core.debugger.stepping import PauseGate

WAIT = 10.0
"""Generous upper bound for a thread handoff; only reached when the gate is broken."""


@pytest.fixture(scope="module")
def session():
    return synthetic_session(sites=2, variants=3, events=12, seed=5)


@pytest.fixture(scope="module")
def ctx(session):
    return EventContext(session)


class Recorder(threading.Thread):
    """Stands in for the live recorder: runs the workload, calling the gate before each dispatch."""

    def __init__(self, gate: PauseGate, events: list[DispatchEvent]) -> None:
        super().__init__(daemon=True)
        self.gate, self.events = gate, events
        self.runs: list[list[tuple[int, int | None]]] = []
        self.done = threading.Event()

    def run(self) -> None:
        while True:
            dispatched: list[tuple[int, int | None]] = []
            self.runs.append(dispatched)
            restarted = False
            for e in self.events:
                dispatched.append((e.seq, self.gate.before(e)))
                if self.gate.take_restart():
                    restarted = True
                    break
            if not restarted:
                break
        self.done.set()


def start(gate_kwargs: dict, session, ctx, breakpoints=()) -> tuple[PauseGate, Recorder, queue.Queue]:
    pauses: queue.Queue = queue.Queue()
    gate = PauseGate(on_pause=pauses.put, **gate_kwargs)
    gate.set_breakpoints(breakpoints, ctx)
    worker = Recorder(gate, session.events)
    worker.start()
    return gate, worker, pauses


def next_pause(pauses: queue.Queue) -> int:
    return pauses.get(timeout=WAIT).seq


def finish(gate: PauseGate, worker: Recorder) -> None:
    gate.cont()
    assert worker.done.wait(WAIT), "the recorder did not finish after continue"
    worker.join(WAIT)


def test_breakpoint_pauses_the_recorder_and_step_moves_one_dispatch(session, ctx):
    gate, worker, pauses = start({}, session, ctx, [Breakpoint.when("seq == 5", ctx)])
    assert next_pause(pauses) == 5
    assert gate.paused_at.seq == 5
    assert [seq for seq, _ in worker.runs[0]] == [0, 1, 2, 3, 4]  # blocked before dispatching 5
    gate.step()
    assert next_pause(pauses) == 6
    assert [seq for seq, _ in worker.runs[0]] == [0, 1, 2, 3, 4, 5]
    finish(gate, worker)
    assert [seq for seq, _ in worker.runs[0]] == list(range(12))
    assert pauses.empty()


def test_an_override_is_returned_for_the_paused_dispatch_only(session, ctx):
    gate, worker, pauses = start({}, session, ctx, [Breakpoint.when("seq == 3 or seq == 4", ctx)])
    assert next_pause(pauses) == 3
    gate.override(2)
    gate.cont()
    assert next_pause(pauses) == 4
    finish(gate, worker)
    assert [forced for _, forced in worker.runs[0]] == [None, None, None, 2] + [None] * 8


def test_override_needs_a_paused_dispatch_and_a_real_variant(session, ctx):
    gate = PauseGate()
    with pytest.raises(KinspectError, match="nothing is paused"):
        gate.override(1)
    gate, worker, pauses = start({"stepping": True}, session, ctx)
    next_pause(pauses)
    with pytest.raises(KinspectError, match="multi_kernel_0 has no variant 3 \\(it has 3\\)"):
        gate.override(3)
    finish(gate, worker)


def test_pause_before_the_next_dispatch_and_continue_to_a_breakpoint(session, ctx):
    gate, worker, pauses = start({"stepping": True}, session, ctx, [Breakpoint.on_site("multi_kernel_1", ctx)])
    assert next_pause(pauses) == 0
    gate.cont()
    assert next_pause(pauses) == 1  # the next multi_kernel_1 dispatch
    gate.pause()  # while paused: the next step pauses again, even without a breakpoint
    gate.step()
    assert next_pause(pauses) == 2
    gate.set_breakpoints([], ctx)
    finish(gate, worker)
    assert len(worker.runs[0]) == 12


def test_the_pause_callback_may_drive_the_gate_itself(session):
    """on_pause runs without the lock held; calling back in must not deadlock."""
    seen: list[int] = []
    gate = PauseGate(stepping=True)

    def on_pause(e: DispatchEvent) -> None:
        seen.append(e.seq)
        if e.seq < 4:
            gate.step()
        else:
            gate.cont()

    gate.on_pause = on_pause
    worker = Recorder(gate, session.events)
    worker.start()
    assert worker.done.wait(WAIT)
    assert seen == [0, 1, 2, 3, 4]


def test_close_releases_a_paused_recorder_for_good(session, ctx):
    gate, worker, pauses = start({"stepping": True}, session, ctx)
    assert next_pause(pauses) == 0
    gate.close()
    assert worker.done.wait(WAIT)
    assert len(worker.runs[0]) == 12 and pauses.empty()


def test_restart_reruns_the_workload_and_pauses_at_its_first_dispatch(session, ctx):
    gate, worker, pauses = start({"stepping": True}, session, ctx)
    assert next_pause(pauses) == 0
    gate.step()
    assert next_pause(pauses) == 1
    gate.restart()
    assert next_pause(pauses) == 0
    assert len(worker.runs) == 2 and [s for s, _ in worker.runs[0]] == [0, 1]
    finish(gate, worker)
    assert [s for s, _ in worker.runs[1]] == list(range(12))


@pytest.mark.skipif(not hasattr(time, "pthread_getcpuclockid"), reason="needs per-thread CPU clocks")
def test_a_paused_recorder_uses_no_cpu(session, ctx):
    gate, worker, pauses = start({"stepping": True}, session, ctx)
    assert next_pause(pauses) == 0
    clock = time.pthread_getcpuclockid(worker.ident)
    before = time.clock_gettime(clock)
    time.sleep(0.5)
    used = time.clock_gettime(clock) - before
    assert worker.is_alive() and gate.paused_at is not None
    assert used < 0.02, f"paused recorder thread used {used:.3f} s of CPU in 0.5 s"
    finish(gate, worker)
