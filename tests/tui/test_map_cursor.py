"""The Map tab as a second new user meets it: a cursor on the two-size map that the typed
shape follows, marks that differ without color, and a legend clear of the curves."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import screen_text, type_shape

from kinspect.core.source import RecordedSource
from kinspect.core.store import load
from kinspect.tui.app import InspectorApp
from kinspect.tui.widgets.shape_input import ShapeInput

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "samples_h200_2026-11-30"


def sample(name: str) -> InspectorApp:
    return InspectorApp(RecordedSource(load(SAMPLES / f"{name}.session.json"), f"samples/{name}.session.json"))


def grid_row(app: InspectorApp, label: str) -> list[str]:
    """The heatmap's row for one size down the side, cell by cell."""
    for line in screen_text(app).splitlines():
        cells = line.split("▕")[-1].split()
        if cells and cells[0] == label:
            return cells[1:]
    raise AssertionError(f"no row {label}:\n{screen_text(app)}")


async def test_the_two_size_map_has_a_cursor_the_arrows_move_through_both_sizes_and_the_shape_follows():
    app = sample("gemm_2d")
    async with app.run_test(size=(120, 40)) as pilot:
        await type_shape(pilot, "M=1024 N=1024")
        await pilot.press("enter", "8")
        await pilot.pause()
        assert grid_row(app, "1024")[5] == "[1.00]"  # M=1024 is the sixth column: the cursor is there
        assert "M=1024 N=1024: Inductor picks v" in screen_text(app)
        await pilot.press("right")
        await pilot.pause()
        assert app.query_one(ShapeInput).value == "M=1025 N=1024"
        assert grid_row(app, "1024")[5:7] == ["1.00", "[1.00]"]  # gemm_2d's variants are one kernel: ×1.00 everywhere
        assert app.explanation is not None and app.explanation.runtime_key[0] == (1025, 4096)
        await pilot.press("down")
        await pilot.pause()
        assert app.query_one(ShapeInput).value == "M=1025 N=1025"
        row = grid_row(app, "1025")
        assert row[6] == "[·]" and "1.00" in row  # unmeasured is `·`, not ×1.00
        assert "M=1025 N=1025: not measured" in screen_text(app)
        await pilot.press("up", "up")
        await pilot.pause()
        assert app.query_one(ShapeInput).value == "M=1025 N=257"
        await pilot.press("1")  # the Variants tab decides the cell's shape
        assert "runtime key ((1025, 4096), (4096, 257), (1025, 257))" in screen_text(app)


async def test_the_one_size_map_marks_slow_picks_by_glyph_and_keeps_its_legend_off_the_curves_at_80x24():
    app = sample("linear")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("8")
        await pilot.pause()
        lines = screen_text(app).splitlines()
        top = next(i for i, line in enumerate(lines) if "┌" in line)
        bottom = next(i for i, line in enumerate(lines) if "└" in line)
        plot = "\n".join(lines[top:bottom])
        assert "●" in plot and "✗" in plot  # the fastest picks and the slower ones, told apart without color
        assert "hint" not in plot and "pick" not in plot, plot  # the legend is under the plot, not over it
        legend = "\n".join(lines[bottom:])
        assert "● pick: fastest ✗ slower" in legend and "v2 (hint 4096)" in legend


async def test_the_two_size_map_shows_every_column_at_80_and_120_columns():
    """GPT-2's sweep has 12 batch sizes: each is a column at 80 and at 120 columns, the
    last (B=32) included."""
    for size in ((80, 24), (120, 40)):
        app = sample("gpt2")
        async with app.run_test(size=size) as pilot:
            await pilot.press("8")
            await pilot.pause()
            header = next(line for line in screen_text(app).splitlines() if "S\\B" in line)
            assert header.split("▕")[-1].split()[1:] == ["2", "4", "5", "8", "13", "14", "15", "16", "29", "30",
                                                         "31", "32"], (size, header)
            assert "shown of" not in screen_text(app)


def test_where_the_columns_do_not_fit_those_around_the_cursor_show_and_the_caption_says_so():
    from rich.console import Console

    from kinspect.core.quality.decision_map import Heatmap
    from kinspect.tui.widgets.map_heat import columns_shown, heatmap

    xs = [2 ** i for i in range(1, 31)]
    m = Heatmap("multi_kernel_0", "B", "S", xs, [16, 32], [[1.0] * 30, [None] * 30], [[0] * 30, [None] * 30], {})
    shown = columns_shown(m, 20, 80)
    assert 20 in shown and len(shown) < 30 and shown[0] > 0
    console = Console(width=80, record=True)
    console.print(heatmap(m, 20, 0, 80))
    text = console.export_text()
    assert max(map(len, text.splitlines())) <= 80
    assert f"B={xs[shown[0]]}..{xs[shown[-1]]} shown of 2..{xs[-1]} ({len(shown)} of 30 columns)" in text
