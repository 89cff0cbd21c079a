"""The inspector's regret figure with its range over compiles, where `kinspect compare
--compiles N` timed the same key in several compiles."""

from __future__ import annotations

from pathlib import Path

from recompiles import again
from tui_helpers import screen_text, type_shape

from kinspect.core.store import load
from kinspect.core.source import RecordedSource
from kinspect.tui.app import InspectorApp

LINEAR = Path(__file__).resolve().parents[1] / "fixtures" / "samples_h200_2026-11-30" / "linear.session.json"


def recorded():
    """samples/linear.py as recorded on the H200: at B=1000 Inductor picks v1, slower than v2."""
    return load(LINEAR)


async def test_the_picks_regret_carries_its_range_over_compiles():
    s = recorded()
    s.recompiles.append(again(s, 1.5, kernel_changed=True, hint=256))  # the pick at B=1000: v1, hint 256
    app = InspectorApp(RecordedSource(s))
    async with app.run_test(size=(160, 48)) as pilot:
        await type_shape(pilot, "B=1000")
        line = next(x for x in screen_text(app).splitlines() if "fastest: v2" in x)
    one = float(line.split("takes ×")[1].split()[0])
    assert f"takes ×{one:.2f} as long (×{one:.2f}–×{one * 1.5:.2f} over 2 compiles)" in line


async def test_one_compile_shows_no_range():
    app = InspectorApp(RecordedSource(recorded()))
    async with app.run_test(size=(160, 48)) as pilot:
        await type_shape(pilot, "B=1000")
        line = next(x for x in screen_text(app).splitlines() if "fastest: v2" in x)
    assert "takes ×" in line and "compiles" not in line
