"""The inspector as a new user meets it (issue 13): the recorded samples, opened as the
README says, at the sizes people's terminals have; each test is what the user sees."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from textual import events
from textual.keys import _character_to_key
from textual.widgets import Input
from tui_helpers import palette_offers, screen_text, toasts, type_shape, wait_until

from kinspect import cli
from kinspect.core.store import load
from kinspect.core.source import RecordedSource
from kinspect.tui.app import InspectorApp
from kinspect.tui.widgets.shape_input import ShapeInput

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "samples_h200_2026-11-30"
"""The recorded samples as of 2026-11-30: their figures stay put when samples/ is re-recorded."""


def sample(name: str) -> InspectorApp:
    return InspectorApp(RecordedSource(load(SAMPLES / f"{name}.session.json"), f"samples/{name}.session.json"))


def line_with(app: InspectorApp, text: str) -> str:
    return next(line for line in screen_text(app).splitlines() if text in line)


# 1. typing a shape right after opening


async def test_a_shape_typed_right_after_opening_is_decided_and_its_digits_stay_in_the_entry():
    app = sample("linear")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"B=129")
        assert app.query_one(ShapeInput).value == "B=129"
        assert app.active_tab() == "variants"  # the digits did not switch tabs
        await pilot.press("enter")
        assert "runtime key ((4096,), (129, 1024), (4096, 1024), (129, 4096))" in screen_text(app)


async def test_a_shape_typed_in_a_burst_arrives_whole_and_in_order():
    """Keys a terminal delivers at once (fast typing, a script) reach the app before focus
    could move: none may fall to the table's keys (digits switch tabs)."""
    app = sample("gpt2")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for ch in "B=16 S=512":
            app.post_message(events.Key(_character_to_key(ch), ch))
        await wait_until(pilot, lambda: app.query_one(ShapeInput).value == "B=16 S=512")
        assert app.active_tab() == "variants"


async def test_a_shape_pasted_on_the_table_goes_into_the_entry_on_one_line():
    app = sample("linear")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        app.post_message(events.Paste("B=129\n"))
        await wait_until(pilot, lambda: app.query_one(ShapeInput).value == "B=129")
        assert app.active_tab() == "variants"
        await pilot.press("enter")
        assert "runtime key ((4096,), (129, 1024), (4096, 1024), (129, 4096))" in screen_text(app)
        app.post_message(events.Paste("not a shape"))  # text that starts no size name: not taken
        await pilot.pause()
        assert app.query_one(ShapeInput).value == "B=129"


async def test_a_full_key_typed_on_the_table_starts_in_the_entry_too():
    app = sample("gemm_2d")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press(*"(100,4096),(4096,200),(100,200)", "enter")
        assert "runtime key ((100, 4096), (4096, 200), (100, 200))" in screen_text(app)


# 2. the user's names


async def test_sizes_and_tensors_read_by_the_users_names_and_inductors_on_demand():
    app = sample("gemm_2d")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("4")
        text = screen_text(app)
        rows = [r.split("▕")[-1].split() for r in text.splitlines()]
        assert ["a", "0", "M", "512", "64", "256", "4096"] in rows
        assert ["out", "0", "M", "512", "64", "256", "4096"] in rows
        assert not any("s33" in r or "arg1_1" in r for r in rows if "64" in r)
        await pilot.press("i")
        text = screen_text(app)
        assert "s33" in text and "arg1_1" in text and "buf0" in text


async def test_distance_terms_name_the_tensors_role():
    app = sample("linear")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("t")
        text = screen_text(app)
        assert "x[0] 3.966 out[0] 3.966" in text and "arg3_1" not in text


async def test_shape_errors_name_the_users_sizes():
    app = sample("gemm_2d")
    async with app.run_test(size=(160, 48)) as pilot:
        await type_shape(pilot, "Q=3")
        assert "✗ unknown symbol Q; this session has: M, N" in screen_text(app)
        await type_shape(pilot, "M=100 s33=200")
        assert "✗ M=100 and s33=200 are the same size (M, Inductor's s33): give it once" in screen_text(app)


# 3. an invalid shape leaves a marked table


async def test_an_invalid_shape_says_which_shape_the_table_still_shows():
    app = sample("linear")
    async with app.run_test(size=(80, 24)) as pilot:
        await type_shape(pilot, "B=1e3")
        assert "showing B=1 · ✗ column 3: size must be an integer, got '1e3'" in screen_text(app)
        assert app.query_one("#decision").has_class("-stale")
        await pilot.press("backspace", "backspace")
        assert "showing" not in screen_text(app) and not app.query_one("#decision").has_class("-stale")


# 4. what is measured, and what needs a GPU


async def test_l_lists_the_measured_keys_and_enter_goes_to_one():
    app = sample("linear")
    async with app.run_test(size=(100, 40)) as pilot:
        await type_shape(pilot, "B=1001")
        await pilot.press("enter")
        assert "no measurement at this key: l lists the 54 measured keys" in screen_text(app)
        await pilot.press("l")
        assert "measured keys of multi_kernel_0 (54, one compile)" in screen_text(app)
        assert "B=2  fastest v0 · Inductor picks v0 (the fastest)" in screen_text(app)
        assert "B=9  fastest v1 · Inductor picks v0 ×1.08" in screen_text(app)
        await pilot.press("down", "down", "enter")  # the third smallest measured size
        assert app.query_one(ShapeInput).value == "B=4"
        assert "fastest: v0 (hint 64)" in screen_text(app)


async def test_live_only_keys_on_a_recording_say_what_they_need():
    app = sample("linear")
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        assert "m, a, o need the live model on a CUDA GPU" in screen_text(app).splitlines()[0]
        for key, what in (("m", "m (measure)"), ("a", "a (baselines)")):
            await pilot.press(key)
            await wait_until(pilot, lambda: any(t.startswith(f"{what} needs the live model on a CUDA GPU")
                                                for t in toasts(app)))
        await pilot.press("6", "n", "o")
        await wait_until(pilot, lambda: any(t.startswith("o (force a variant) needs the live model")
                                            for t in toasts(app)))


# 5. source lines


async def test_long_source_lines_scroll_sideways_or_wrap():
    app = sample("linear")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("2")
        assert "as tl_math" not in screen_text(app)  # line 6 runs past the screen
        await pilot.press(*["right"] * 12)
        assert "as tl_math" in screen_text(app)
        await pilot.press("w")
        text = screen_text(app)
        assert "tl_math" in text and "6 from torch._inductor" in text  # wrapped, from the left


# 6. small terminals


async def test_at_80x24_the_table_keeps_distances_choice_latency_and_regret():
    app = sample("linear")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "multi_kernel_0 (1/1)" in text  # the site list is hidden; the shape row names the site
        row = line_with(app, "▶  v1")
        assert row.split()[:7] == ["▶", "v1", "256", "3.932", "25.1", "25.0–25.6", "×1.70"]
        footer = text.splitlines()[-1]
        assert "12345678 Tabs" in footer and "e Export" in footer
        await pilot.press("s")
        assert "└ Linear 69" in screen_text(app)  # s shows the list


async def test_at_60x20_the_choice_and_its_latency_still_show():
    app = sample("gpt2")
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        row = line_with(app, "▶  v0")
        assert row.split()[:7] == ["▶", "v0", "64", "8.000", "20.4", "20.3–20.4", "×1.78"]


async def test_the_timeline_legend_wraps_at_80_columns():
    app = sample("linear")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("7")
        text = screen_text(app)
        tabs = next(line for line in text.splitlines() if "Variants" in line)
        assert "Timeline" in tabs, tabs  # the tab's label whole, not cut at the edge
        assert "the site did not run" in text and "←/→ or a click moves the cursor there" in text


# 7. the export dialog


async def test_export_is_named_after_the_file_asks_before_replacing_and_marks_the_format(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = sample("linear")
    (tmp_path / "linear.md").write_text("mine\n")
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await pilot.press("e")
        assert app.screen.query_one("#export-path", Input).value == "linear.export.session.json"
        await pilot.press("down")
        text = screen_text(app)
        assert "○▌ JSON session" in text and "●▌ Markdown report" in text and "○▌ Perfetto trace" in text
        assert app.screen.query_one("#export-path", Input).value == "linear.md"
        await pilot.press("enter")
        assert "✗ linear.md exists: enter again replaces it" in screen_text(app)
        assert (tmp_path / "linear.md").read_text() == "mine\n"
        await pilot.press("enter")
        await wait_until(pilot, lambda: (tmp_path / "linear.md").read_text().startswith("#"))
        mode = stat.S_IMODE(os.stat(tmp_path / "linear.md").st_mode)
        assert mode & 0o044 == 0o044  # readable by others, as a session file is
        await wait_until(pilot, lambda: any("wrote linear.md (md," in t for t in toasts(app)))
        assert any("with linear.map.png" in t for t in toasts(app))
    # the same report, decision map included, as kinspect export writes it
    assert cli.main(["export", str(SAMPLES / "linear.session.json"), "--format", "md", "-o", "cli.md"]) == 0
    assert (tmp_path / "linear.md").read_text() == (tmp_path / "cli.md").read_text().replace("cli.map.png", "linear.map.png")
    assert "linear.map.png" in (tmp_path / "linear.md").read_text() and (tmp_path / "linear.map.png").stat().st_size > 0


async def test_export_onto_the_recording_it_shows_is_refused_on_screen(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    recording = tmp_path / "linear.session.json"
    recording.write_bytes((SAMPLES / "linear.session.json").read_bytes())
    app = InspectorApp(RecordedSource(load(recording), recording.name))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("e", "down")
        field = app.screen.query_one("#export-path", Input)
        field.value = recording.name
        await pilot.press("enter", "enter")
        await wait_until(pilot, lambda: "kinspect does not replace it" in screen_text(app))
    assert recording.read_bytes() == (SAMPLES / "linear.session.json").read_bytes()


# 8. help and palette


async def test_help_marks_where_debugger_keys_act():
    app = sample("linear")
    async with app.run_test(size=(160, 60)) as pilot:
        await pilot.press("question_mark")
        step = line_with(app, "Step:")
        assert "debugger, timeline" in step and "anywhere" not in step
        assert "What-if: What-if" not in screen_text(app)


async def test_the_palette_finds_breakpoints_by_the_word_break():
    app = sample("linear")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("ctrl+p", *"break")
        await palette_offers(pilot, "Break")
        text = screen_text(app)
        assert "Break at site" in text and "Break on miss" in text


# 9. debugger labels


async def test_stopped_by_only_after_a_continue_and_events_show_the_sizes():
    app = sample("linear")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("6", "b", "end")
        text = screen_text(app)
        assert "breakpoint here: at multi_kernel_0" in text and "stopped by" not in text
        assert "multi_kernel_0 at B=" in text and " · key ((4096,), (" in text
        await pilot.press("R", "c")
        assert "stopped by: at multi_kernel_0" in screen_text(app)


async def test_the_condition_example_and_errors_fit_the_session():
    app = sample("linear")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("6")
        assert 'site == "multi_kernel_0"' in screen_text(app) and "multi_kernel_1" not in screen_text(app)
        await pilot.press("w", *"foo > 1")
        text = screen_text(app)
        assert "unknown field 'foo'" in text and "t3d1" in text  # the whole list of fields


async def test_a_program_recorded_without_example_sizes_opens_on_its_first_dispatch():
    """`kinspect run` records a program, which has no example sizes nor a workload: the
    entry starts on the sizes of the first call the program made, and the table decides it."""
    from dataclasses import replace

    s = load(SAMPLES / "linear.session.json")
    s = replace(s, symbols=[replace(sym, example=None) for sym in s.symbols], model=replace(s.model, workload=()))
    first = s.events[0]
    b = s.site(first.site).symbol_values(first.key)[s.symbols[0].name]
    app = InspectorApp(RecordedSource(s, "run.session.json"))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.query_one(ShapeInput).value == f"B={b}"
        assert "is nearest at distance" in screen_text(app)
