"""The small things a second new user tripped on, on the recorded GPT-2 sample (two layers
share each multi-kernel) and the B-only linear one."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import screen_text, wait_until

from kinspect.core.source import RecordedSource
from kinspect.core.store import load
from kinspect.tui.app import InspectorApp
from kinspect.tui.widgets.shape_input import ShapeInput

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "samples_h200_2026-11-30"


def sample(name: str) -> InspectorApp:
    return InspectorApp(RecordedSource(load(SAMPLES / f"{name}.session.json"), f"samples/{name}.session.json"))


async def test_counts_read_as_counts_the_shared_cache_line_reads_as_english_and_what_if_says_its_order():
    app = sample("gpt2")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "addmm · 3v · 2 callers · 90 calls" in text and "· ×2 ·" not in text  # × is for regret
        flat = " ".join(line.split("▕")[-1].strip() for line in text.splitlines())
        assert "met this shape first (a cache miss) and decided for both; the other hit the shared cache" in flat
        await pilot.press("h")
        await pilot.pause()
        flat = " ".join(line.split("│")[1].strip() for line in screen_text(app).splitlines()
                        if line.count("│") >= 2)  # the dialog's lines, not the screen behind it
        assert "measured keys" in flat and " shapes" not in flat.split("best:")[1][:80]
        assert "first, pinned: every heuristic with the compiled hints [64, 256, 4096]; then fewer hints, best" in flat


async def test_the_shape_placeholder_names_only_the_sessions_sizes():
    app = sample("linear")
    async with app.run_test(size=(120, 30)) as pilot:
        placeholder = app.query_one(ShapeInput).placeholder
        assert placeholder.startswith("B=1000 ") and "N=" not in placeholder
        await pilot.pause()


async def test_the_palette_key_sits_with_the_others_and_the_entry_hint_follows_focus():
    """At 80x24 Textual's docked palette cell kept a stale character over the cut bindings
    (`t ▏^p palettee`); the completion hint stayed while the table had focus."""
    app = sample("gpt2")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: screen_text(app).splitlines()[-1].strip() != "")
        lines = screen_text(app).splitlines()
        assert lines[-1].startswith("q Quit ? Help ^p Palette ") and "palette" not in lines[-1]
        status = next(line for line in lines if "edits the shape" in line)
        assert "/ or a size's name edits the shape" in status and "completes" not in screen_text(app)
        await pilot.press("slash")
        assert "→ completes a symbol name · enter: back to the table" in screen_text(app)
        await pilot.press("enter")
        assert "completes" not in screen_text(app) and "/ or a size's name edits the shape" in screen_text(app)


async def test_the_findings_tab_groups_them_by_kind_and_enter_opens_a_group_then_goes_to_a_site():
    path = Path(__file__).resolve().parents[2] / "samples" / "gpt2.session.json"
    app = InspectorApp(RecordedSource(load(path), "samples/gpt2.session.json"))
    async with app.run_test(size=(140, 30)) as pilot:
        await pilot.press("5")
        text = screen_text(app)
        assert "error   ▸ hint-size-in-kernel at 4 sites  enter: show them" in text  # worst first
        assert "warning ▸ runs-far-from-hints at 4 sites  enter: show them" in text  # B=2..30, hints from 64
        assert "warning ▸ slow-pick at 4 sites  enter: show them" in text
        assert "warning ▸ equally-near at 2 sites  enter: show them" in text  # stock keys: B and B*128 alike
        assert "are the same kernel" not in text  # more findings than a screen: every kind starts closed
        await pilot.press("down", "down", "down", "down", "enter")
        text = screen_text(app)
        assert "▾ identical-variants at 2 sites" in text and "multi_kernel_3 v0,v1: variants v0, v1" in text
        await pilot.press("down", "down", "enter")
        await wait_until(pilot, lambda: app.query_one("#tabs").active == "variants")
        assert app.site.name == "multi_kernel_3"


async def test_a_peak_column_shows_only_where_a_share_of_peak_can_be_given():
    """GPT-2's recording has no TFLOP/s for its measurements (its keys did not tell the GEMM's
    work then): no column of blanks; the linear sample's has them."""
    for name, shown in (("gpt2", False), ("linear", True)):
        app = sample(name)
        async with app.run_test(size=(160, 40)) as pilot:
            await pilot.pause()
            header = next(line for line in screen_text(app).splitlines() if "median µs" in line)
            assert ("peak" in header) is shown, (name, header)


async def test_kernel_names_are_cut_in_the_middle_so_their_ends_tell_them_apart():
    for size in ((80, 24), (120, 40)):
        app = sample("gpt2")
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            rows = [line for line in screen_text(app).splitlines() if "triton" in line][:3]
            ends = [row.rstrip().split("…")[-1] for row in rows]
            assert all("…" in row for row in rows), rows
            assert [e[-6:] for e in ends] == ["view_1", "view_2", "view_3"], (size, rows)
