"""Keys that arrive together (held down, typed fast, sent by a script) all count: each one
moves from where the previous one asked to go, not from what was drawn so far."""

from __future__ import annotations

from textual import events
from tui_helpers import screen_text, session_with_finding, wait_until

from kinspect.core.source import RecordedSource
from kinspect.tui.app import InspectorApp
from kinspect.tui.dialogs import ExportScreen
from kinspect.tui.widgets.timeline_view import TimelineView


def burst(app: InspectorApp, *keys: str) -> None:
    """Keys queued at once, as a terminal delivers them, before the app handles the first."""
    for key in keys:
        app.post_message(events.Key(key, None))


async def test_four_fast_rights_in_the_timeline_move_four_columns_and_two_fast_downs_two_formats():
    app = InspectorApp(RecordedSource(session_with_finding(events=60), "/recordings/model.session.json"))
    async with app.run_test(size=(70, 24)) as pilot:
        await pilot.press("6", "n", "7")
        tl = app.debugger.timeline
        width = app.query_one(TimelineView).content_size.width - 15
        start = tl.column(app.debugger.current.index, width)
        burst(app, "right", "right", "right", "right")
        # a dropped key leaves it one to three columns on, and the wait runs out
        await wait_until(pilot, lambda: tl.column(app.debugger.current.index, width) == start + 4, timeout=5)
        await pilot.press("e")
        assert isinstance(app.screen, ExportScreen)
        burst(app, "down", "down")
        await wait_until(pilot, lambda: "model.perfetto.json" in screen_text(app), timeout=5)  # json → md → perfetto
