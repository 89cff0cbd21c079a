"""The inspector at a shape nobody measured: estimates marked `~` in the table, what they
came from and the nearest measured keys under it; the what-if table ends with the line
to paste."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import screen_text, type_shape

from kinspect.core.source import RecordedSource
from kinspect.core.store import load
from kinspect.tui.app import InspectorApp

GPT2 = Path(__file__).resolve().parents[1] / "fixtures" / "samples_h200_2026-11-30" / "gpt2.session.json"


def gpt2() -> InspectorApp:
    return InspectorApp(RecordedSource(load(GPT2), "samples/gpt2.session.json"))


async def test_an_unmeasured_shape_shows_estimates_and_the_nearest_measured():
    app = gpt2()
    async with app.run_test(size=(240, 40)) as pilot:  # each line of the summary on one line
        await type_shape(pilot, "B=37 S=200")
        await pilot.press("enter")
        await pilot.pause()
        screen = screen_text(app)
        rows = [line for line in screen.splitlines() if " v0 " in line or " v1 " in line or " v2 " in line][:3]
        assert len(rows) == 3 and all("~" in row for row in rows)
        text = " ".join(screen.split())
        assert "~ is an estimate, interpolated in log time" in text
        assert "between the measured B=32 S=129 and B=32 S=256" in text
        assert "nearest measured: B=32 S=256 (distance 0.712)" in text


async def test_the_what_if_table_ends_with_the_line_to_paste():
    app = gpt2()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("h")
        await pilot.pause()
        assert "torch._inductor.config.multi_kernel_hints = [256, 4096]" in screen_text(app)
