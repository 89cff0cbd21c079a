"""The inspector on GPT-2 small (12 layers) as recorded on the H200: each multi-kernel lists
its twelve call sites, and the decision says the first call decides for all twelve."""

from __future__ import annotations

from pathlib import Path

from kinspect.core.store import load
from kinspect.core.source import RecordedSource
from kinspect.tui.app import InspectorApp

from tui_helpers import screen_text, type_shape

GPT2_SMALL = Path(__file__).resolve().parents[1] / "fixtures" / "sessions" / "gpt2_small_h200_2026-11-30.session.json"


async def test_every_layer_is_a_call_site_of_its_shared_multi_kernel():
    app = InspectorApp(RecordedSource(load(GPT2_SMALL), GPT2_SMALL))
    async with app.run_test(size=(160, 48)) as pilot:
        await type_shape(pilot, "B=8 S=256")
        text = screen_text(app)
        assert "addmm · 3v · 12 callers · 108" in text
        assert all(f"└ h.{i}.attn.c_attn 9" in text for i in range(12)), text
        assert "shared by 12 call sites: the first call at a new shape decides the variant for all 12" in text
        assert "runtime key ((2304,), (8, 256, 768), (768, 2304), (2048, 2304))" in text
