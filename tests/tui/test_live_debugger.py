"""The debugger over a live model: Inductor's runtime class runs stand-in kernels on the
CPU while the app pauses, steps, breaks, forces a variant and restarts it."""

from __future__ import annotations

import time

import pytest
from synthetic import synthetic_session
from tui_helpers import footer_dimmed, screen_text, toasts, wait_until

from kinspect.tui.app import InspectorApp
from kinspect.tui.messages import LiveStepDone, PrepareProgress
from kinspect.tui.panes.debugger import DebuggerPane
from kinspect.core.debugger.cursor import IDLE, PAUSED

fake_live = pytest.importorskip("fake_live")

WORKLOAD = [{"B": 64, "N": 64}, {"B": 100, "N": 64}, {"B": 5000, "N": 64}]
"""Each step calls multi_kernel_0 then multi_kernel_1: six dispatches per run."""


def source() -> "fake_live.FakeLiveSource":
    return fake_live.FakeLiveSource(synthetic_session(sites=2, variants=3, events=0, measured=False), WORKLOAD)


async def paused_at(pilot, app: InspectorApp, seq: int) -> str:
    await wait_until(pilot, lambda: app.debugger.state == PAUSED and app.debugger.paused.seq == seq)
    return screen_text(app)


async def test_the_app_is_usable_while_the_model_compiles_and_shows_sites_when_done():
    src = source()
    src.hold.set()
    app = InspectorApp(src)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await wait_until(pilot, lambda: "autotuning graph_0 at hint 256" in screen_text(app))
        text = screen_text(app)
        assert "compiling: fake model on the CPU" in text
        assert "compiling… the sites appear when the model has compiled and run" in text
        await wait_until(pilot, lambda: footer_dimmed(app, "m") is True)
        await pilot.press("6")
        assert "compiling… the debugger starts once the model has run" in screen_text(app)
        await pilot.press("question_mark")
        assert "kinspect inspector — keys" in screen_text(app)
        await pilot.press("escape")

        src.hold.clear()
        await wait_until(pilot, lambda: not app.preparing)
        text = screen_text(app)
        assert "live: fake model on the CPU" in text
        assert "multi_kernel_0" in text and "multi_kernel_1" in text
        assert "the model is ready: n steps through its workload" in text
        await wait_until(pilot, lambda: "ready: 2 sites, 2 dispatches recorded" in toasts(app))
        await wait_until(pilot, lambda: footer_dimmed(app, "m") is False)
    assert src.closed


async def test_pause_step_break_override_restart_and_run_to_the_end():
    src = source()
    app = InspectorApp(src)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await wait_until(pilot, lambda: not app.preparing)
        base = len(app.session.events)  # the compile's run of the workload
        await pilot.press("6", "n")
        text = await paused_at(pilot, app, base)
        assert f"paused before dispatch {base} · workload step 0" in text
        assert "multi_kernel_0 at B=64 · key ((4096,), (64, 1024), (4096, 1024), (64, 4096))" in text
        assert "cache hit: Inductor will run v0 (hint 64)" in text
        await wait_until(pilot, lambda: footer_dimmed(app, "m") is True)  # the paused run holds the model
        await wait_until(pilot, lambda: footer_dimmed(app, "p") is True)  # a live run only goes forwards
        ran = len(src.ran)

        await pilot.press("n")
        text = await paused_at(pilot, app, base + 1)
        assert src.ran[ran:] == ["multi_kernel_0_k0"]
        assert "multi_kernel_1 at B=64" in text and "key ((64, 4096), (4096, 128), (64, 128))" in text

        await pilot.press("left_square_bracket", "b", "c")  # break at multi_kernel_0, continue
        text = await paused_at(pilot, app, base + 2)
        assert "stopped by: at multi_kernel_0" in text
        assert "workload step 1" in text

        await pilot.press("o", "2")
        assert "v2 (hint 1024) runs instead (forced), when you step or continue" in screen_text(app)
        await pilot.press("n")
        await paused_at(pilot, app, base + 3)
        assert src.ran[-1] == "multi_kernel_0_k2"  # the model really ran the forced kernel
        forced = [e for e in src.recorder.dispatch_events() if e.override is not None]
        assert [(e.seq, e.site, e.picked, e.predicted, e.override) for e in forced] == [
            (base + 2, "multi_kernel_0", 2, 0, 2)]

        await pilot.press("7")  # the timeline: recorded runs so far; a live cursor cannot jump
        text = screen_text(app)
        assert "multi_kernel_0 " in text and "multi_kernel_1 " in text
        assert f"▼ paused before dispatch {base + 3}" in text
        await wait_until(pilot, lambda: footer_dimmed(app, "left") is True)
        await pilot.press("6")

        await pilot.press("R")  # the run so far is dropped; the workload starts again, paused
        text = await paused_at(pilot, app, base + 4)
        assert "workload step 0" in text and "multi_kernel_0 at B=64 · key ((4096,), (64, 1024)" in text

        await pilot.press("b", "c")  # no breakpoints left: run to the end
        await wait_until(pilot, lambda: app.debugger.state == IDLE)
        assert "the workload ran to its end: n steps through its workload" in screen_text(app)
        assert len(app.session.events) == base + 4 + 6
        overridden = [e for e in app.session.events if e.override is not None]
        assert [e.seq for e in overridden] == [base + 2]
        await wait_until(pilot, lambda: footer_dimmed(app, "m") is False)


async def test_quitting_while_paused_releases_the_model():
    src = source()
    app = InspectorApp(src)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: not app.preparing)
        await pilot.press("6", "n")
        await paused_at(pilot, app, len(app.session.events))
        await pilot.press("q")
    # The released run finishes on its worker thread after the app has gone; the source
    # closes when it leaves (not under it), which may take a moment on a loaded machine.
    deadline = time.monotonic() + 10
    while not src.closed and time.monotonic() < deadline:
        time.sleep(0.02)
    assert src.closed


async def test_a_site_with_twelve_variants_takes_two_digit_overrides():
    session = synthetic_session(sites=1, variants=12, events=0, measured=False)
    src = fake_live.FakeLiveSource(session, [{"B": 64}, {"B": 100}, {"B": 300}])
    app = InspectorApp(src)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await wait_until(pilot, lambda: not app.preparing)
        base = len(app.session.events)
        await pilot.press("6", "n")
        await paused_at(pilot, app, base)
        await pilot.press("o", "1")
        assert "v1… another digit, or enter for v1" in screen_text(app)
        await pilot.press("1")
        assert "v11 (hint 268435456) runs instead (forced)" in screen_text(app)
        await pilot.press("n")
        await paused_at(pilot, app, base + 1)
        assert src.ran[-1] == "multi_kernel_0_k11"

        await pilot.press("o", "1", "enter")
        assert "v1 (hint 256) runs instead (forced)" in screen_text(app)
        await pilot.press("n")
        await paused_at(pilot, app, base + 2)
        assert src.ran[-1] == "multi_kernel_0_k1"

        await pilot.press("o", "1", "5")
        assert "no variant 15: this site has v0–v11" in screen_text(app)
        await pilot.press("escape")
        forced = [(e.seq, e.override) for e in src.recorder.dispatch_events() if e.override is not None]
        assert forced == [(base, 11), (base + 1, 1)]



async def test_a_step_that_recompiles_shows_the_compiles_progress_while_it_runs():
    """A size of 1 makes Dynamo specialise and compile again, minutes under max-autotune:
    the panel says what the compile is doing, not only that the workload runs."""
    src = source()
    src.recompile = {1: "autotuning buf0 at hint 256"}
    app = InspectorApp(src)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: src.prepared and not app.preparing)  # else the hold keeps it compiling
        src.hold.set()
        await pilot.press("6", "c")
        await wait_until(pilot, lambda: "now: autotuning buf0 at hint 256" in screen_text(app))
        assert "running the workload… n pauses before the next dispatch" in screen_text(app)
        src.hold.clear()
        await wait_until(pilot, lambda: app.debugger.state == IDLE)
        await wait_until(pilot, lambda: "the workload ran to its end" in screen_text(app))
        assert "now:" not in screen_text(app)


async def test_a_steps_end_read_after_the_next_steps_compile_began_leaves_the_compile_said():
    """The run posts step 0's end to the debugger pane, then step 1's recompile progress to
    the app; the app may read its queue first. What the compile is doing stays on screen."""
    src = source()
    src.recompile = {1: "autotuning buf0 at hint 256"}
    app = InspectorApp(src)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: src.prepared and not app.preparing)
        src.hold.set()
        await pilot.press("6", "c")
        await wait_until(pilot, lambda: "now: autotuning buf0 at hint 256" in screen_text(app))
        app.query_one(DebuggerPane).post_message(LiveStepDone(0, None))  # queued, not yet read
        app.on_prepare_progress(PrepareProgress("autotuning buf1 at hint 4096"))  # the app reads first
        await pilot.pause()
        await wait_until(pilot, lambda: "now: autotuning buf1 at hint 4096" in screen_text(app))
        src.hold.clear()
        await wait_until(pilot, lambda: app.debugger.state == IDLE)
