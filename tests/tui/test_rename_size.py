"""A recording from `kinspect run` opens with its sizes named by their sources, and the
palette's "Rename size" gives one the user's name everywhere, the typed shape included."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input
from tui_helpers import palette_offers, screen_text

from kinspect.core.source import RecordedSource
from kinspect.core.store import load
from kinspect.tui.app import InspectorApp
from kinspect.tui.widgets.shape_input import ShapeInput

GENERATE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "samples_h200_2026-12-03" / "generate.session.json"


async def test_sizes_read_by_their_source_and_a_rename_reaches_every_view():
    app = InspectorApp(RecordedSource(load(GENERATE), "samples/generate.session.json"))
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        assert app.query_one(ShapeInput).value == "input_ids_0=2 input_ids_1=16"
        assert "s27" not in screen_text(app)
        await pilot.press("ctrl+p", *"Rename size: input_ids_1")
        await palette_offers(pilot, "Rename size: input_ids_1 (s27)")
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press(*"input_ids_0", "enter")
        await pilot.pause()
        assert "input_ids_0 would name two sizes (s52 and s27)" in screen_text(app)  # the prompt stays open
        app.screen.query_one(Input).value = ""
        await pilot.press("S", "enter")
        await pilot.pause()
        assert app.query_one(ShapeInput).value == "input_ids_0=2 S=16"
        await pilot.press("5", "down", "down", "enter")  # the slow-pick group, opened
        await pilot.pause()
        findings = screen_text(app)
        assert "S=64..66" in findings and "input_ids_1=" not in findings
