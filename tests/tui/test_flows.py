"""User flows through the inspector, asserted on what the screen shows."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from kinspect.core.dispatch.shapes import parse_shape
from kinspect.core.session.runtime import Measurement
from kinspect.core.store import load
from kinspect.core.source import RecordedSource
from kinspect.core.dispatch.symbolic import SizeExpr
from kinspect.tui.app import InspectorApp
from kinspect.tui.widgets.diff_view import DiffView
from kinspect.tui.widgets.shape_input import ShapeInput
from kinspect.tui.widgets.variants_table import VariantsTable

from painted import painting_terminal
from tui_helpers import screen_text, screenshot, session_with_finding, type_shape, wait_until

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


CHOSEN_ROW = re.compile(r"▶!?\s+v\d+\s{2,}")


def chosen_row(text: str) -> str:
    """The variants-table line marked as Inductor's choice."""
    rows = [line for line in text.splitlines() if CHOSEN_ROW.search(line)]
    assert len(rows) == 1, text
    return rows[0]


async def test_tie_at_the_hint_midpoint_goes_to_the_first_variant(recorded_app):
    async with recorded_app.run_test(size=(160, 40)) as pilot:
        await type_shape(pilot, "B=128")
        text = screen_text(recorded_app)
        assert " v0 " in chosen_row(text)
        assert "tie at distance 2.000 between v0 (hint 64) and v1 (hint 256): the first minimum wins" in text

        await pilot.press("backspace", "9")
        text = screen_text(recorded_app)
        assert " v1 " in chosen_row(text)
        assert "v1 (hint 256) is nearest" in text


async def test_every_valid_keystroke_updates_the_table(recorded_app):
    async with recorded_app.run_test(size=(160, 40)) as pilot:
        table = recorded_app.query_one(VariantsTable)
        await type_shape(pilot, "B=")
        before = table.generation
        for ch in "1025":
            await pilot.press(ch)
        # B=1, B=10, B=102, B=1025: four valid shapes, four rebuilds
        assert table.generation == before + 4
        assert " v2 " in chosen_row(screen_text(recorded_app))


async def test_the_frame_painting_a_typed_character_paints_its_decision():
    """No frame shows the new text beside the old table: the keystroke's own frame has
    both (a frame in between delayed the table's by 17 to 33 ms)."""
    frames: list[tuple[str, int]] = []

    def painted() -> None:
        if app.is_running:
            frames.append((app.query_one(ShapeInput).value, app.query_one(VariantsTable).generation))

    app = InspectorApp(RecordedSource(session_with_finding()), driver_class=painting_terminal(painted))
    async with app.run_test(headless=False, size=(120, 40)) as pilot:
        entry, table = app.query_one(ShapeInput), app.query_one(VariantsTable)
        await type_shape(pilot, "B=1")
        typed = []
        for key in ("2", "9", "backspace", "0", "2", "4"):
            frames.clear()
            await pilot.press(key)
            await wait_until(pilot, lambda: any(f[0] == entry.value for f in frames))
            typed.append(entry.value)
            shown = [f for f in frames if f[0] == entry.value]
            assert shown, f"no frame painted {entry.value!r}"
            assert all(g == table.generation for _, g in shown), (entry.value, table.generation, frames)
        assert typed == ["B=12", "B=129", "B=12", "B=120", "B=1202", "B=12024"]


async def test_bad_input_shows_the_parse_error_inline_and_keeps_the_table(recorded_app):
    async with recorded_app.run_test(size=(160, 40)) as pilot:
        await type_shape(pilot, "B=129")
        await pilot.press("x")
        text = screen_text(recorded_app)
        assert "✗ column 7: expected '=' after x, found end of input" in text
        assert " v1 " in chosen_row(text)

        await pilot.press("escape", "right_square_bracket")  # another site: the typo is still shown
        assert "✗ column 7: expected '=' after x, found end of input" in screen_text(recorded_app)

        await type_shape(pilot, "Q=3")
        assert "✗ unknown symbol Q; this session has: B, N" in screen_text(recorded_app)


async def test_a_site_that_needs_another_symbol_says_which(recorded_app):
    async with recorded_app.run_test(size=(160, 40)) as pilot:
        await type_shape(pilot, "B=100")
        await pilot.press("enter", "right_square_bracket")  # multi_kernel_1 is a @ b with N
        text = screen_text(recorded_app)
        assert "✗ multi_kernel_1 needs a value for N" in text
        assert "▶" not in text


async def test_a_whole_key_is_decided_only_at_a_site_it_fits(recorded_app):
    """multi_kernel_0's whole key fits it; multi_kernel_1 (an mm on B and 2*N) stays on the
    last shape it took, and says so."""
    async with recorded_app.run_test(size=(160, 40)) as pilot:
        await type_shape(pilot, "B=100 N=64")
        recorded_app.show_site("multi_kernel_1")
        await pilot.pause()
        before = recorded_app.explanation.runtime_key
        recorded_app.show_site("multi_kernel_0")
        await type_shape(pilot, "(4096,),(128,1024),(4096,1024),(128,4096)")
        await pilot.pause()
        assert recorded_app.explanation.runtime_key[1] == (128, 1024)
        recorded_app.show_site("multi_kernel_1")
        await pilot.pause()
        text = screen_text(recorded_app)
        assert "✗ multi_kernel_1 still shows B=100 N=64: this key does not fit multi_kernel_1" in text
        assert recorded_app.explanation.runtime_key == before
        assert "▶!" not in chosen_row(text)


async def test_a_session_without_sites_says_why_and_keys_do_no_harm():
    session = session_with_finding()
    session.sites = []
    app = InspectorApp(RecordedSource(session))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("t", "h", "d", "m", "right_square_bracket", "2", "3", "4", "5", "1")
        await type_shape(pilot, "B=3")
        text = screen_text(app)
        assert "This session has no size-hint multi-kernel sites." in text
        assert "graph_1: no GEMM in this graph" in text
        assert app.is_running


async def test_symbol_names_complete(recorded_app):
    async with recorded_app.run_test(size=(160, 40)) as pilot:
        await type_shape(pilot, "B=100 ")
        assert "B=100 N=" in screen_text(recorded_app)  # the suggestion, shown dimmed
        await pilot.press("right", "6", "4")
        assert recorded_app.query_one(ShapeInput).value == "B=100 N=64"


async def test_enter_on_a_variant_opens_its_source(recorded_app):
    async with recorded_app.run_test(size=(160, 40)) as pilot:
        await type_shape(pilot, "B=64")
        await pilot.press("enter", "j", "enter")
        text = screen_text(recorded_app)
        assert recorded_app.query_one("#tabs").active == "source"
        assert "v1 (hint 256)  triton_tem_fused_mm_0_1" in text
        assert "BLOCK_M=64 BLOCK_N=128 BLOCK_K=128" in text
        assert "def triton_tem_fused_mm_0_1(" in text


async def test_diff_of_the_selected_variant_against_the_chosen_one(recorded_app):
    async with recorded_app.run_test(size=(160, 40)) as pilot:
        await type_shape(pilot, "B=64")
        await pilot.press("enter", "j", "d")
        text = screen_text(recorded_app)
        assert "--- v0 (hint 64) triton_tem_fused_mm_0_0" in text
        assert "+++ v1 (hint 256) triton_tem_fused_mm_0_1" in text
        assert "-    BLOCK_N : tl.constexpr = 64" in text
        assert "+    BLOCK_N : tl.constexpr = 128" in text

        recorded_app.query_one(DiffView).show(recorded_app.site, 0, 2)
        await pilot.pause()
        assert "v0 (hint 64) and v2 (hint 1024) are identical: same generated source" in screen_text(recorded_app)


async def test_identical_variants_are_flagged_in_the_table(recorded_app):
    async with recorded_app.run_test(size=(160, 30)):
        line = next(line for line in screen_text(recorded_app).splitlines() if " v2 " in line)
        assert "= v0" in line


async def test_symbolic_view_flags_keys_that_are_not_the_true_size(recorded_app):
    async with recorded_app.run_test(size=(160, 40)) as pilot:
        await pilot.press("right_square_bracket", "4")
        text = screen_text(recorded_app)
        b_row = next(line for line in text.splitlines() if "2*N" in line)
        assert "64 (true 128)" in b_row and "256 (true 512)" in b_row
        assert b_row.split("▕")[-1].split()[1:3] == ["2*N", "128"]  # runtime, beside the size: N=64 makes 2*s1 = 128


async def test_symbolic_view_shows_keys_made_per_symbol_as_keyed_not_as_off_their_true_size():
    """A session from an Inductor that evaluates a hint per symbol (the upstream patch),
    read without recorded sizes: the `2*N` dim was keyed 128 at hint 64, what its kernel
    computed, so the view shows 128 and no `(true ...)`."""
    session = session_with_finding()
    site = session.sites[1]
    session.sites[1] = replace(site, variants=tuple(
        replace(v, key=tuple(t.key_at_hint(v.hint, {"s0": v.hint, "s1": v.hint}) for t in site.tensors))
        for v in site.variants))
    app = InspectorApp(RecordedSource(session, "/recordings/model.session.json"))
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("right_square_bracket", "4")
        b_row = next(line for line in screen_text(app).splitlines() if "2*N" in line)
        assert "(true" not in b_row and b_row.split("▕")[-1].split()[3:5] == ["128", "512"]


async def test_the_symbolic_header_is_whole_where_gpt2s_hint_columns_run_past_the_pane():
    app = InspectorApp(RecordedSource(load(SAMPLES / "gpt2.session.json"), "gpt2.session.json"))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("4")
        header = next(line for line in screen_text(app).splitlines() if " dim " in line)
        assert header.split("▕")[-1].split()[:4] == ["tensor", "dim", "size", "runtime"]


async def test_terms_show_which_dimension_drives_the_distance(recorded_app):
    async with recorded_app.run_test(size=(160, 30)) as pilot:
        await type_shape(pilot, "B=128")
        await pilot.press("enter", "t")
        text = screen_text(recorded_app)
        assert "terms (tensor[dim] distance)" in text
        assert "x[0] 1.000 out[0] 1.000" in text


async def test_heuristic_what_if(recorded_app):
    async with recorded_app.run_test(size=(160, 40)) as pilot:
        await type_shape(pilot, "B=1000")
        await pilot.press("enter")
        assert "others pick: log2-l2 v2, log2-linf v2, l1 v2, ceil v2" in screen_text(recorded_app)
        await pilot.press("h")  # the what-if table: one row per heuristic, Inductor's first
        await pilot.pause()
        table = screen_text(recorded_app)
        assert "what-if on this session's measurements" in table and "Inductor's" in table
        await pilot.press("down", "down", "down", "down", "enter")  # the fifth heuristic: ceil
        await pilot.pause()
        text = screen_text(recorded_app)
        assert "heuristic ceil (what-if: Inductor decides by inductor)" in text
        assert "others pick: inductor v2" in text


async def test_the_what_if_pins_the_compiled_hints_where_two_share_a_variant():
    """The MoE stack recorded with both switches: hints 256 and 4096 share one variant, so the
    compiled hints ran as 64 and 4096, the pinned rows' figures."""
    moe = Path(__file__).resolve().parents[1] / "fixtures" / "sessions" / "moe_layers_fixed_h100_2026-12-06.session.json"
    app = InspectorApp(RecordedSource(load(moe)))
    async with app.run_test(size=(160, 40)) as pilot:
        await type_shape(pilot, "args_0=4 args_1=64")
        await pilot.press("enter", "h")
        await pilot.pause()
        text = " ".join(screen_text(app).replace("│", " ").split())
        assert "inductor 64, 4096 ×1.05 ×1.21 +4% deciding now, Inductor's" in text
        assert "every heuristic with the compiled hints [64, 256, 4096] (their variants': 64, 4096)" in text
        assert "with the compiled hints [64, 256, 4096], from these" in text


async def test_measured_latency_spread_regret_and_share_of_peak():
    session = session_with_finding()
    key = session.runtime_key(session.sites[0], parse_shape("B=1000"))
    session.measurements = [
        Measurement("multi_kernel_0", key, 2, "cupti", 20.0, 19.0, 21.0, 20, tflops=395.0),
        Measurement("multi_kernel_0", key, 1, "cupti", 10.0, 9.5, 10.5, 20, tflops=79.0),
    ]
    app = InspectorApp(RecordedSource(session))
    async with app.run_test(size=(160, 30)) as pilot:
        await type_shape(pilot, "B=1000")
        text = screen_text(app)
        v1 = next(line for line in text.splitlines() if " v1 " in line)
        assert "10.0" in v1 and "9.5–10.5" in v1 and "fastest" in v1 and "10%" in v1
        assert "×2.00" in chosen_row(text) and "50%" in chosen_row(text)
        assert "fastest: v1 (hint 256) at 10.0 µs — the chosen variant takes ×2.00 as long" in text


async def test_sites_with_findings_are_marked_and_a_finding_leads_to_its_site(recorded_app):
    async with recorded_app.run_test(size=(160, 40)) as pilot:
        text = screen_text(recorded_app)
        assert "! multi_kernel_0" in text and "! multi_kernel_1" not in text
        await pilot.press("right_square_bracket", "5")
        text = screen_text(recorded_app)
        assert "warning multi_kernel_0 v0,v1: v0 and v1 of multi_kernel_0 are the same kernel" in text
        assert recorded_app.site.name == "multi_kernel_1"
        await pilot.press("enter")
        assert recorded_app.site.name == "multi_kernel_0"
        assert recorded_app.query_one("#tabs").active == "variants"


async def test_mouse_chooses_sites_and_variants(recorded_app):
    async with recorded_app.run_test(size=(160, 40)) as pilot:
        await pilot.click("#sites", offset=(4, 2))  # the second site's name line
        assert recorded_app.site.name == "multi_kernel_1"
        await pilot.click("#variants-table", offset=(6, 1))  # first data row
        await pilot.click("#tabs Tab#--content-tab-source")
        assert "v0 (hint 64)  triton_tem_fused_mm_1_" in screen_text(recorded_app)


async def test_banner_says_it_is_a_recording_and_where_it_was_made():
    session = session_with_finding()
    session.truncated = "the last record (line 9) was cut short"
    app = InspectorApp(RecordedSource(session, "/r/model.session.json"))
    async with app.run_test(size=(160, 30)):
        first = screen_text(app).splitlines()[0]
        assert "Recording made on synthetic · torch synthetic · 2026-11-29T00:00:00Z · /r/model.session.json" in first
        assert "truncated: the last record (line 9) was cut short" in first


async def test_q_quits(recorded_app):
    async with recorded_app.run_test() as pilot:
        await pilot.press("q")
        assert recorded_app.return_code == 0 and not recorded_app.is_running


async def test_the_source_tab_says_which_autotune_choice_runs_and_whether_it_won():
    """The mlp sample as recorded on the H200: v2 (hint 4096) runs triton_mm_209 from hint
    256's table, which is the config of its own winner triton_mm_229; v1 runs the same
    choice, which lost at hint 256."""
    session = load(Path(__file__).resolve().parents[1] / "fixtures" / "sessions" / "mlp_h200_2026-11-29.session.json")
    app = InspectorApp(RecordedSource(session))
    async with app.run_test(size=(200, 40)) as pilot:
        await type_shape(pilot, "B=64")
        await pilot.press("enter", "j", "j", "enter")
        text = screen_text(app)
        assert app.query_one("#tabs").active == "source"
        assert ("runs autotune choice triton_mm_209 (from the hint-256 table) — the same config as this "
                "hint's autotune winner triton_mm_229") in text
        await pilot.press("1", "k", "enter")
        assert ("runs autotune choice triton_mm_209 — not this hint's autotune winner triton_mm_210 "
                "(39.2 µs against 14.2 µs)") in screen_text(app)


async def test_the_source_tab_gives_the_fusion_benchmarks_times_of_a_choice_it_picked():
    """The same sample with v1's fusion benchmark times, as kinspect records them now."""
    from kinspect.core.session.model import AutotuneRow

    session = load(Path(__file__).resolve().parents[1] / "fixtures" / "sessions" / "mlp_h200_2026-11-29.session.json")
    site = session.sites[0]
    fused = (AutotuneRow("triton_mm_209", 20.0), AutotuneRow("triton_mm_210", 25.5))
    session.sites[0] = replace(site, variants=(site.variants[0], replace(site.variants[1], fused=fused),
                                               *site.variants[2:]))
    app = InspectorApp(RecordedSource(session))
    async with app.run_test(size=(200, 40)) as pilot:
        await type_shape(pilot, "B=64")
        await pilot.press("enter", "j", "enter")
        assert ("picked by the fusion benchmark: 20.0 µs fused, against 25.5 µs for triton_mm_210"
                in screen_text(app))


async def test_the_symbolic_tab_caps_a_hostile_size_at_2_62():
    """x's batch dim stored as ((s0**62)**62)... 8 deep: at B=2 it has 6.6e13 digits, so the
    tab says it passes 2**62 instead of computing it (which ran out of memory)."""
    session = session_with_finding(sites=1)
    site = session.sites[0]
    tower = "s0"
    for _ in range(8):
        tower = ["pow", tower, 62]
    x = site.tensors[1]
    hostile = replace(x, sizes=(SizeExpr.from_json(tower), *x.sizes[1:]))
    session.sites[0] = replace(site, tensors=(site.tensors[0], hostile, *site.tensors[2:]))
    app = InspectorApp(RecordedSource(session))
    async with app.run_test(size=(200, 40)) as pilot:
        await type_shape(pilot, "B=2")
        assert "size (((((((B**62)**62)**62)**62)**62)**62)**62)**62 exceeds 2**62 at B=2" in screen_text(app)
        await pilot.press("escape", "4")
        row = next(line for line in screen_text(app).splitlines() if "(B**62)" in line and "true" in line)
        assert "64 (true more than 2**62)" in row and "**62  > 2**62  64 (true" in row  # runtime beside the size


async def test_the_map_cursor_types_the_shape_and_the_table_follows():
    """The linear sample, swept on the H200: on the Map tab, ← moves to the next smaller
    measured size, the shape entry takes it, and the variants table decides that key."""
    session = load(SAMPLES / "linear.session.json")
    app = InspectorApp(RecordedSource(session))
    async with app.run_test(size=(160, 48)) as pilot:
        await type_shape(pilot, "B=1000")
        await pilot.press("enter", "8")
        await pilot.pause()
        assert "B=1000: Inductor picks v1 (hint 256)" in screen_text(app)
        sizes = sorted({p["B"] for p in session.sweeps[0].points})
        below = max(b for b in sizes if b < 1000)
        await pilot.press("left")
        await pilot.pause()
        assert app.query_one(ShapeInput).value == f"B={below}"
        assert app.explanation is not None and app.explanation.runtime_key[1] == (below, 1024)
        assert f"B={below}: Inductor picks" in screen_text(app)
        assert "pick changes at B=128|129 (v0→v1), B=1024|1025 (v1→v2)" in screen_text(app)


async def test_the_map_tab_shows_the_comparison_under_the_map_when_compare_made_one():
    """The linear recording with `kinspect compare` timings added: under the map, each kind's
    geometric-mean slowdown as a bar and the per-shape times; without them, nothing extra."""
    from kinspect.core.session.runtime import Baseline

    session = load(SAMPLES / "linear.session.json")
    app = InspectorApp(RecordedSource(session))
    async with app.run_test(size=(160, 60)) as pilot:
        await pilot.press("8")
        await pilot.pause()
        assert "five ways" not in screen_text(app)
    for b, times in {100: (20.0, 18.0, 19.0, 17.0, 40.0), 1000: (30.0, 24.0, 25.0, 26.0, 60.0)}.items():
        for kind, t in zip(("hinted", "oracle", "exact_hint", "static", "eager"), times):
            session.baselines.append(Baseline({"B": b}, kind, t + 5, t, inspected=kind in ("hinted", "oracle")))
    app = InspectorApp(RecordedSource(session))
    async with app.run_test(size=(160, 60)) as pilot:
        await pilot.press("8")
        await pilot.pause()
        text = screen_text(app)
        assert "the whole model, five ways: geometric-mean slowdown vs the best kind per shape (2 shapes" in text
        lines = [line.strip("▕ ") for line in text.splitlines()]
        bars = {line.split("█")[0].strip(): line for line in lines if "×" in line and "█" in line}
        assert bars["eager"].count("█") == 30 and bars["eager"].split()[-1] == "×2.43"  # the slowest: longest bar
        assert bars["oracle (this compile, fastest forced)"].count("█") == 1
        assert bars["oracle (this compile, fastest forced)"].split()[-1] == "×1.03"
        assert any(line.split() == ["B=1000", "30.0", "24.0", "25.0", "26.0", "60.0"] for line in lines)


async def test_a_map_drawn_ahead_in_the_background_looks_as_one_drawn_on_the_spot():
    """←/→ paint the plot built ahead in a thread, and its lines made there: the screen is
    the same as when the plot is built and its lines made as the frame is drawn."""
    from kinspect.tui.widgets.map_plot import MapPlot

    session = load(SAMPLES / "linear.session.json")
    app = InspectorApp(RecordedSource(session))
    async with app.run_test(size=(120, 40)) as pilot:
        await type_shape(pilot, "B=1000")
        await pilot.press("enter", "8")
        plot = app.query_one(MapPlot)
        # the sizes either side are built after the first frame
        await wait_until(pilot, lambda: len(plot._built) == 3 and len(plot._lines) == 3
                         and not any(w.is_running for w in app.workers))
        await pilot.press("left")
        await pilot.pause()
        assert len(plot._built) >= 3 and "B=1000" not in app.query_one(ShapeInput).value
        ahead = screenshot(app)
        plot._built.clear()
        plot._lines.clear()
        plot.refresh()
        await pilot.pause()
        assert screenshot(app) == ahead
