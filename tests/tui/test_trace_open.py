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
