"""The inspector live on the GPU: compile in a worker, type a shape, measure, and step
through the workload with a breakpoint and a forced variant."""

from __future__ import annotations

import asyncio
import sys

import pytest

from gpu_cases import ROOT, SAMPLES

pytest.importorskip("textual")
sys.path.insert(0, str(ROOT / "tests" / "tui"))
from tui_helpers import footer_dimmed, screen_text, wait_until  # noqa: E402

from kinspect.inductor.recording.live_source import LiveSource  # noqa: E402
from kinspect.tui.app import InspectorApp  # noqa: E402
from kinspect.core.debugger.cursor import IDLE, PAUSED  # noqa: E402
from kinspect.tui.widgets.shape_input import ShapeInput  # noqa: E402


def test_live_inspector_on_the_gpu():
    asyncio.run(_live_inspector())


async def _live_inspector():
    src = LiveSource(SAMPLES / "linear.py")
    app = InspectorApp(src)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await wait_until(pilot, lambda: "compiling" in screen_text(app) or not app.preparing, timeout=30)
        await wait_until(pilot, lambda: not app.preparing, timeout=400)
        await wait_until(pilot, lambda: "multi_kernel_0" in screen_text(app), timeout=30)
        text = screen_text(app)
        assert "live:" in text and "NVIDIA" in text, text
        assert "need the live model" not in text  # live: m, a and o work
        site = app.session.sites[0]

        await pilot.press(*"B=1000")  # typed straight on the table, as a new user does
        assert app.query_one(ShapeInput).value == "B=1000" and app.active_tab() == "variants"
        await pilot.press("enter")  # back to the table: m is a key there, a letter in the entry
        await wait_until(pilot, lambda: footer_dimmed(app, "m") is False, timeout=30)
        await pilot.press("m")
        key = site.runtime_key(app.session.resolve({"B": 1000}))
        await wait_until(pilot, lambda: len(app.session.measurements_at(site.name, key)) == len(site.variants), timeout=120)
        times = {v: m.median_us for v, m in app.session.measurements_at(site.name, key).items()}
        assert all(t and t > 0 for t in times.values()), times
        text = screen_text(app)
        assert f"{min(times.values()):.1f}" in text

        base = len(app.session.events)
        await pilot.press("6", "n")  # debugger tab, step into the workload
        await wait_until(pilot, lambda: app.debugger.state == PAUSED and app.debugger.paused.seq == base, timeout=60)
        assert "paused before dispatch" in screen_text(app)
        assert f"{app.debugger.paused.site} at B=" in screen_text(app)  # the user's size, then the key
        await pilot.press("o", "2")  # force v2 for this dispatch: the model really runs it
        await pilot.press("n")
        await wait_until(pilot, lambda: app.debugger.state == PAUSED and app.debugger.paused.seq == base + 1, timeout=60)
        await pilot.press("c")
        await wait_until(pilot, lambda: app.debugger.state == IDLE, timeout=120)
        forced = [e for e in app.session.events if e.override is not None]
        assert [(e.seq, e.picked, e.override) for e in forced] == [(base, 2, 2)]
        assert all(e.predicted == e.picked for e in app.session.events if e.override is None)
        assert len(app.session.events) == base + len(src._mf.workload)
