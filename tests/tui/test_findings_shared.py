"""The Findings tab says what a kind's findings say alike once, with their sites, and
under it what each site says beyond it."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import screen_text

from kinspect.core.source import RecordedSource
from kinspect.core.store import load
from kinspect.tui.app import InspectorApp

GPT2 = Path(__file__).resolve().parents[1] / "fixtures" / "samples_h200_2026-11-30" / "gpt2.session.json"


async def test_a_kinds_shared_text_is_said_once_with_its_sites():
    app = InspectorApp(RecordedSource(load(GPT2), "samples/gpt2.session.json"))
    async with app.run_test(size=(240, 50)) as pilot:
        await pilot.press("5", "enter")  # the first kind, opened
        await pilot.pause()
        text = screen_text(app)
        assert text.count("Inductor gives this GEMM's kernel the hint for each size symbol") == 1
        assert "multi_kernel_0, multi_kernel_1, multi_kernel_2, multi_kernel_3: Inductor gives this GEMM's" in text
        assert "multi_kernel_1 v0,v1,v2: at hint 4096 M * N = 16,777,216 × 768 wraps to 0 in int32" in text
