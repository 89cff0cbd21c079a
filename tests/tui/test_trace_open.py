"""`kinspect open TRACE`: the inspector on a TORCH_TRACE log, as on a recording, its banner
saying the session holds compiled code only."""

from __future__ import annotations

from tui_helpers import screen_text, type_shape, wait_until
from traces import MLP

from kinspect.core.source import RecordedSource
from kinspect.core.store import load
from kinspect.tui.app import InspectorApp


async def test_a_trace_opens_in_the_inspector_and_a_typed_shape_is_decided():
    app = InspectorApp(RecordedSource(load(MLP), MLP))
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        flat = " ".join(screen_text(app).split())
        assert f"TORCH_TRACE log {MLP.name}" in flat
        assert "compiled code only: no dispatch events, no measurements" in flat
        assert "▶ v0 (hint 64) is nearest" in flat  # at the session's first example size, s33=100
        await type_shape(pilot, "s33=1000")
        await wait_until(pilot, lambda: "shape s33=1000 " in screen_text(app) and "▶  v1  256 " in screen_text(app))


async def test_a_trace_s_map_shows_which_variant_runs_along_its_size_for_every_subset_of_hints():
    """Nothing is measured in a trace, yet the Map tab answers from the compiled code, the
    same spans as `kinspect explain TRACE --range`, and follows the typed size; the what-if
    screen points there."""
    app = InspectorApp(RecordedSource(load(MLP), MLP))
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        await pilot.press("8")
        await wait_until(pilot, lambda: "arg0_0 = 2..16384" in screen_text(app))
        flat = " ".join(screen_text(app).split())
        assert "64, 256, 4096 v0 (hint 64) 2..128 · v1 (hint 256) = v2 (hint 4096) 129..16384" in flat
        assert "64, 4096 v0 (hint 64) 2..512 · v2 (hint 4096) 513..16384" in flat
        assert "◀ arg0_0=100 runs v0 (hint 64)" in flat
        assert "model.py" not in flat and "B=1..16384" not in flat  # no program or size this trace lacks
        await type_shape(pilot, "arg0_0=300")
        await pilot.press("enter", "8")
        await wait_until(pilot, lambda: "◀ arg0_0=300 runs v1 (hint 256) = v2 (hint 4096)" in
                         " ".join(screen_text(app).split()))
        await pilot.press("h")
        await wait_until(pilot, lambda: "no hints can be weighed by time: the Map tab (8) shows" in screen_text(app))
