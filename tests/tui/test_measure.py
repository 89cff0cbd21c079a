"""The live-mode hook: `m` measures in a thread worker, with progress, cancellable."""

from __future__ import annotations

import time

from tui_helpers import FakeSource, footer_dimmed, screen_text, session_with_finding, toasts, type_shape, wait_until

from kinspect.core.session.runtime import Baseline
from kinspect.core.source import RecordedSource
from kinspect.tui.app import InspectorApp
from kinspect.tui.widgets.measure_bar import MeasureBar
from kinspect.tui.widgets.variants_table import VariantsTable


async def test_measuring_shows_progress_and_fills_the_table():
    source = FakeSource(session_with_finding())
    source.hold.set()
    app = InspectorApp(source)
    async with app.run_test(size=(160, 40), notifications=True) as pilot:
        await type_shape(pilot, "B=2000")
        await pilot.press("enter")
        assert "no measurement at this key: press m to measure" in screen_text(app)
        await pilot.press("m")
        await wait_until(pilot, lambda: "timing v0 (hint 64)" in screen_text(app))
        assert app.query_one(MeasureBar).display
        await wait_until(pilot, lambda: footer_dimmed(app, "m") is True)  # one measurement at a time

        # the UI keeps answering while the worker sleeps
        table = app.query_one(VariantsTable)
        before = table.generation
        await pilot.press("t")
        assert table.generation == before + 1
        assert app.measuring

        source.hold.clear()
        await wait_until(pilot, lambda: not app.measuring)
        text = screen_text(app)
        assert not app.query_one(MeasureBar).display
        await wait_until(pilot, lambda: "measured 3 variants of multi_kernel_0" in toasts(app))
        # v2 runs v0's kernel, so it has v0's time (the first of that kernel timed)
        assert "fastest: v1 (hint 256) at 90.0 µs — the chosen variant is within noise of it (×1.11)" in text
        v0 = next(line for line in text.splitlines() if "  v0  " in line)
        assert "100.0" in v0 and "95.0–105.0" in v0 and "×1.11" in v0 and "10%" in v0


async def test_escape_cancels_a_measurement():
    source = FakeSource(session_with_finding())
    source.hold.set()
    app = InspectorApp(source)
    async with app.run_test(size=(160, 40), notifications=True) as pilot:
        await pilot.press("m")
        await wait_until(pilot, source.started.is_set)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.measuring)
        await wait_until(pilot, lambda: "cancelled after 1 variant of multi_kernel_0" in toasts(app))
        assert "escape" not in [k.key for k in app.screen.query("FooterKey")]


async def test_a_failing_measurement_is_reported_and_the_app_goes_on():
    class Broken(FakeSource):
        def measure(self, site, key, progress, cancel):
            raise RuntimeError("CUDA error: out of memory")

    app = InspectorApp(Broken(session_with_finding()))
    async with app.run_test(size=(160, 40), notifications=True) as pilot:
        await pilot.press("m")
        await wait_until(pilot, lambda: not app.measuring)
        await wait_until(pilot, lambda: "measurement failed: RuntimeError: CUDA error: out of memory" in toasts(app))
        await wait_until(pilot, lambda: footer_dimmed(app, "m") is False)


async def test_a_recording_cannot_measure_and_m_says_why(recorded_app):
    async with recorded_app.run_test(size=(160, 40), notifications=True) as pilot:
        await pilot.pause()
        assert footer_dimmed(recorded_app, "m") is None  # out of the footer: the banner names it
        assert "m, a, o need the live model on a CUDA GPU" in screen_text(recorded_app)
        await pilot.press("m")
        assert not recorded_app.measuring
        assert not recorded_app.query_one(MeasureBar).display
        assert "press m to measure" not in screen_text(recorded_app)
        await wait_until(pilot, lambda: any("m (measure) needs the live model on a CUDA GPU: this is a recording"
                                            in t for t in toasts(recorded_app)))


class BaselineFake(FakeSource):
    """Adds whole-model baselines, one kind per step, as LiveSource runs them."""

    def baselines(self, site, key, progress, cancel):
        out = []
        for kind, gpu in (("eager", 14.0), ("static", 15.2), ("exact_hint", 15.1), ("hinted", 34.4)):
            if cancel.is_set():
                break
            progress(f"baseline {kind} at B=2000 (compiles in a process of its own)")
            while self.hold.is_set() and not cancel.is_set():
                time.sleep(0.01)
            out.append(Baseline({"B": 2000, "N": 64}, kind, gpu * 4, gpu))
        self.session.baselines += out
        return out


async def test_baselines_run_live_and_show_under_the_decision():
    source = BaselineFake(session_with_finding())
    source.hold.set()
    app = InspectorApp(source)
    async with app.run_test(size=(160, 40), notifications=True) as pilot:
        await type_shape(pilot, "B=2000")
        await pilot.press("enter", "a")
        await wait_until(pilot, lambda: "baseline eager at B=2000" in screen_text(app))
        await wait_until(pilot, lambda: footer_dimmed(app, "m") is True and footer_dimmed(app, "a") is True)
        source.hold.clear()
        await wait_until(pilot, lambda: not app.measuring)
        await wait_until(pilot, lambda: "timed 4 baselines" in toasts(app))
        text = screen_text(app)
        assert ("whole model, GPU µs per call: eager 14.0 · static 15.2 · exact hint 15.1 · "
                "hinted 34.4 (×2.46 the best)") in text
        await type_shape(pilot, "s0=2000")  # the symbol's own name finds the same sizes
        assert "eager 14.0" in screen_text(app)
        await type_shape(pilot, "B=1000")
        assert "whole model" not in screen_text(app)


async def test_a_recording_shows_its_baselines_but_cannot_take_new_ones():
    s = session_with_finding()
    s.baselines = [Baseline({"B": 1000, "N": 64}, "eager", 60.0, 12.5),
                   Baseline({"B": 1000, "N": 64}, "static", None, None, "CUDA out of memory")]
    app = InspectorApp(RecordedSource(s))
    async with app.run_test(size=(160, 40)) as pilot:
        await type_shape(pilot, "B=1000")
        await pilot.press("enter")
        assert "whole model, GPU µs per call: eager 12.5 · static failed (CUDA out of memory)" in screen_text(app)
        assert footer_dimmed(app, "a") is None  # a recording cannot time: out of the footer
