"""The debugger over a recording: stepping, breakpoints, the timeline and export, as seen."""

from __future__ import annotations

import dataclasses

import pytest
from tui_helpers import footer_dimmed, palette_offers, screen_text, session_with_finding, toasts, wait_until, widget_segments

from kinspect.core.store import load
from kinspect.core.dispatch.shapes import format_key
from kinspect.core.source import RecordedSource
from kinspect.tui.app import InspectorApp
from kinspect.tui.widgets.timeline_view import TimelineView

EVENTS = 60


@pytest.fixture
def session():
    return session_with_finding(events=EVENTS)


@pytest.fixture
def app(session) -> InspectorApp:
    return InspectorApp(RecordedSource(session, "/recordings/model.session.json"))


def shown_event(app: InspectorApp) -> str:
    """The event panel's first line."""
    return next(line.strip().split("▕")[-1].strip() for line in screen_text(app).splitlines()
                if " of 60" in line or "before the first" in line)


async def test_stepping_forwards_and_back(app, session):
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("6")
        assert "before the first of 60 events" in screen_text(app)
        await wait_until(pilot, lambda: footer_dimmed(app, "p") is True)  # nothing before
        await pilot.press("n")
        e = session.events[0]
        text = screen_text(app)
        assert "event 0 · 1 of 60 · workload step 0" in text
        assert f"{e.site} at B={e.key[1][0]} · key {format_key(e.key)}" in text  # the user's size, then the key
        assert "cache miss: Inductor decided afresh and ran v" in text
        await pilot.press("n", "f10", "p")
        assert shown_event(app).startswith("event 1 · 2 of 60")
        await pilot.press("end")
        assert shown_event(app).startswith("event 59 · 60 of 60")
        await wait_until(pilot, lambda: footer_dimmed(app, "n") is True)  # nothing after
        await pilot.press("home")
        assert shown_event(app).startswith("event 0 · 1 of 60")
        # the rest of the inspector follows the event's site
        assert app.site.name == session.events[0].site


async def test_jump_to_an_event_and_a_bad_number_stays_in_the_prompt(app):
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("6", "g", *"17", "enter")
        assert shown_event(app).startswith("event 17 · 18 of 60")
        await pilot.press("g", *"999", "enter")
        assert "✗ no event with seq 999" in screen_text(app)
        await pilot.press("escape")
        assert shown_event(app).startswith("event 17 · 18 of 60")


async def test_continue_and_reverse_to_a_typed_condition(app, session):
    hits = [e.seq for e in session.events if e.key[1][0] > 5000 and not e.cache_hit]
    assert len(hits) >= 2
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await pilot.press("6", "c")
        await wait_until(pilot, lambda: "no breakpoints: b, B, f or w sets one" in toasts(app))
        await pilot.press("w", *"B > 5000 and miss", "enter")
        text = screen_text(app)
        assert "when B > 5000 and miss" in text
        await pilot.press("c")
        assert shown_event(app).startswith(f"event {hits[0]} ")
        assert "stopped by: when B > 5000 and miss" in screen_text(app)
        await pilot.press("c")
        assert shown_event(app).startswith(f"event {hits[1]} ")
        await pilot.press("C")
        assert shown_event(app).startswith(f"event {hits[0]} ")
        await pilot.press("C")
        await wait_until(pilot, lambda: "no breakpoint stops before this event" in toasts(app))
        assert shown_event(app).startswith(f"event {hits[0]} ")


async def test_a_bad_condition_shows_its_column_inline_and_adds_nothing(app):
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("6", "w", *"Bs > 3")
        assert "✗ column 1: unknown field 'Bs'; did you mean B?" in screen_text(app)
        await pilot.press("enter")
        assert app.debugger.breakpoints == []
        await pilot.press("ctrl+u", *"B = 3")
        assert "✗ column 3: unexpected '=': use == to compare" in screen_text(app)
        await pilot.press("backspace", "backspace", "=", " ", "3")
        assert "✗" not in screen_text(app)
        await pilot.press("enter")
        assert [b.describe() for b in app.debugger.breakpoints] == ["when B == 3"]


async def test_site_miss_and_not_fastest_breakpoints_toggle_and_remove(app, session):
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("6", "right_square_bracket", "b", "B", "f")
        text = screen_text(app)
        assert "at multi_kernel_1" in text and "on a cache miss" in text
        assert "when the pick is slower than the fastest measured" in text
        await pilot.press("c")
        first = next(e.seq for e in session.events if e.site == "multi_kernel_1" or not e.cache_hit)
        assert shown_event(app).startswith(f"event {first} ")
        assert app.site.name == session.events[first].site  # the selected site follows the event
        while app.site.name != "multi_kernel_1":
            await pilot.press("right_square_bracket")
        await pilot.press("b")  # the same key removes it
        assert "at multi_kernel_1" not in screen_text(app)
        await pilot.click("#breakpoint-list", offset=(2, 0))
        await pilot.press("x")
        assert [b.describe() for b in app.debugger.breakpoints] == ["when the pick is slower than the fastest measured"]


async def test_timeline_rows_and_jumping_by_click_and_arrows(app, session):
    async with app.run_test(size=(70, 24)) as pilot:  # narrow enough for columns of two events
        await pilot.press("6", "n", "7")
        text = screen_text(app)
        row = next(line for line in text.splitlines() if "multi_kernel_0 " in line and "·" in line)
        cells = row.split("multi_kernel_0 ", 1)[1].strip()
        assert set(cells) <= set("012·") and len(cells) >= 30
        assert "▼ event 0" in text
        # a click on a site's row jumps to that site's first event in the column clicked
        width = app.query_one(TimelineView).content_size.width - 15
        cols = app.debugger.timeline.columns(width)
        assert cols < EVENTS  # some columns hold two events
        column, second = next((c, hi - 1) for c in range(cols // 2, cols)
                              for lo, hi in [(-(-c * EVENTS // cols), -(-(c + 1) * EVENTS // cols))] if hi - lo == 2)
        site = session.events[second].site
        await pilot.click(TimelineView, offset=(1 + 15 + column, 1 + app.debugger.timeline.sites.index(site)))
        assert app.debugger.current.index == second
        assert app.site.name == site
        assert f"▼ event {second}" in screen_text(app)
        await pilot.press("right")
        assert app.debugger.current.index == second + 1
        await pilot.press("left", "left")
        assert app.debugger.current.index < second - 1


async def test_timeline_marks_misses_and_overrides(session):
    e = session.events[10]
    forced = (e.picked + 1) % 3
    session.events[10] = dataclasses.replace(e, picked=forced, override=forced)
    app = InspectorApp(RecordedSource(session))
    async with app.run_test(size=(140, 30)) as pilot:
        await pilot.press("7")  # 60 events, one column each
        cells = [seg for seg in widget_segments(app.query_one(TimelineView))
                 if seg.text.strip() and set(seg.text) <= set("012")]
        overrides = "".join(seg.text for seg in cells if seg.style.reverse)
        misses = "".join(seg.text for seg in cells if seg.style.underline)
        assert overrides == str(forced)
        assert len(misses) == sum(not ev.cache_hit for ev in session.events)


async def test_debugger_keys_show_in_its_tabs_and_run_from_the_palette_anywhere(app):
    async with app.run_test(size=(160, 40)) as pilot:
        assert "n" not in [k.key for k in app.screen.query("FooterKey")]
        await pilot.press("ctrl+p", *"Step")
        await palette_offers(pilot, "Step")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.debugger.current is not None)
        assert app.query_one("#tabs").active == "debugger"
        assert shown_event(app).startswith("event 0 · 1 of 60")
        await wait_until(pilot, lambda: footer_dimmed(app, "n") is False)
        await wait_until(pilot, lambda: footer_dimmed(app, "o") is None)  # overriding needs a live model
        assert "o need the live model on a CUDA GPU" in screen_text(app)  # the banner says so


async def test_export_writes_a_session_that_loads_and_says_why_it_cannot(app, session, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    async with app.run_test(size=(160, 40), notifications=True) as pilot:
        await pilot.press("e", "ctrl+u", ".", "enter")
        await wait_until(pilot, lambda: "✗ .: is a directory; give a file name" in screen_text(app))
        await pilot.press("ctrl+u", *"s.json", "enter")
        await wait_until(pilot, lambda: "wrote s.json (json, 60 events)" in toasts(app))
        back = load(tmp_path / "s.json")
        assert back.events == session.events and [s.name for s in back.sites] == [s.name for s in session.sites]
        await pilot.press("ctrl+p", *"Export: Markdown")
        await palette_offers(pilot, "Export: Markdown")
        await pilot.press("enter")
        assert "model.md" in screen_text(app)  # the path follows the format, named after the recording
        await pilot.press("enter")
        await wait_until(pilot, (tmp_path / "model.md").exists)
        assert (tmp_path / "model.md").read_text().startswith("#")
