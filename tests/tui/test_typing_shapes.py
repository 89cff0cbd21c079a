"""A shape is typed from anywhere: keys that start a size's name, or go on with the shape
entered, go to the entry, even where the key is a command too (`B` in the debugger, `s`
before Inductor's `s27`); alone, such a key is the command, a moment later."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import screen_text, wait_until

from kinspect.core.inspector.state import shape_text
from kinspect.core.inspector.typing import continued
from kinspect.core.source import RecordedSource
from kinspect.core.store import load, read
from kinspect.tui.app import InspectorApp
from kinspect.tui.widgets.shape_input import ShapeInput

REPO = Path(__file__).resolve().parents[2]
GPT2 = REPO / "tests" / "fixtures" / "samples_h200_2026-11-30" / "gpt2.session.json"
GENERATE = REPO / "samples" / "generate.session.json"


async def test_a_shape_typed_in_the_debugger_tab_goes_to_the_entry_and_the_digits_stay_there():
    app = InspectorApp(RecordedSource(load(GPT2), "samples/gpt2.session.json"))
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("6")
        await wait_until(pilot, lambda: app.active_tab() == "debugger")
        await pilot.press(*"B=37")
        assert app.query_one(ShapeInput).value == "B=37"  # a new shape: B=4 S=128 gave B already
        assert app.active_tab() == "debugger" and not app.debugger.breakpoints  # `B`: no break on a miss
        await pilot.press("enter", *"S=200")
        assert app.query_one(ShapeInput).value == "B=37 S=200"  # typed on, after enter


async def test_inductors_names_typed_on_the_table_go_to_the_entry_not_to_the_site_list():
    app = InspectorApp(RecordedSource(read(GENERATE), "samples/generate.session.json"))  # as saved: s52, s27
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        assert app.query_one(ShapeInput).value == "s52=2 s27=16"
        await pilot.press(*"s27=17", "enter")
        assert app.query_one(ShapeInput).value == "s27=17"
        assert app.query_one("#sites").display  # `s` did not hide the site list


async def test_a_key_that_could_start_a_name_is_its_command_when_nothing_follows():
    app = InspectorApp(RecordedSource(load(GENERATE), "samples/generate.session.json"))  # input_ids_0, ...
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("i")
        await wait_until(pilot, lambda: app.state.inductor_names)  # `i`: Inductor's names
        assert app.query_one(ShapeInput).value == "input_ids_0=2 input_ids_1=16"


def test_a_size_typed_from_outside_the_entry_goes_on_with_the_shape_or_takes_its_place():
    names = ["B", "S", "s33", "s50"]
    assert continued("B=37", "S", names) == "B=37 S"
    assert continued("B=37,", "s5", names) == "B=37, s5"
    assert continued("B=37", "S=", names) == "B=37 S="  # a held `S` and its `=`
    assert continued("B=37", "B=", names) == "B="
    assert continued("B=4 S=128", "B", names) == "B"
    assert continued("(4096,),(1000,1024)", "B", names) == "B"
    assert continued("B=4", "(", names) == "("
    assert continued("", "s3", names) == "s3"


def _typed_at_once(app: InspectorApp, keys: list[str]) -> None:
    """Keys as a fast typist's terminal delivers them: all queued before the app handles
    the first (Pilot.press waits for the app to go idle after each)."""
    from textual import events
    from textual.keys import _character_to_key

    for key in keys:
        name = _character_to_key(key) if len(key) == 1 and not key.isalnum() else key
        event = events.Key(name, key if len(key) == 1 else None)
        event.set_sender(app)
        app._driver.send_message(event)


async def test_a_shape_typed_faster_than_the_app_draws_ends_as_typed_and_its_status_says_so():
    app = InspectorApp(RecordedSource(load(GPT2), "samples/gpt2.session.json"))
    typed = [  # keys, and the entry's text after them
        (["/", "ctrl+u", *"B=3 S=77"], "B=3 S=77"),
        (["escape", "/", "end", "backspace", "backspace", *"12"], "B=3 S=12"),
        (["enter", *"B=9 S=5"], "B=9 S=5"),
        (["escape", "6", *"B=37", "enter", *"S=200"], "B=37 S=200"),
        (["escape", "/", "ctrl+u", "enter", "/", *"B=5", "backspace", "7", " ", *"S=9"], "B=7 S=9"),
        (["escape", "/", "ctrl+u", *"B=", "enter", *"B=4 S=128"], "B=4 S=128"),
    ]
    async with app.run_test(size=(160, 40)) as pilot:
        for keys, text in typed:
            _typed_at_once(app, keys)
            await wait_until(pilot, lambda: app.query_one(ShapeInput).value == text)
            await pilot.pause()
            assert app.query_one(ShapeInput).value == text, keys
            status = [line for line in screen_text(app).splitlines() if "✗" in line]
            assert not status and not app.state.stale, (keys, status)
            assert shape_text(app.state.shape) == text
