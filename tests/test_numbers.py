"""One way to write a number, wherever kinspect prints one: a figure copied from the
report reads the same in explain, the trace and (once it routes here) the inspector."""

from __future__ import annotations

import re
from pathlib import Path

from kinspect.core import numbers as n

KINSPECT = Path(__file__).resolve().parent.parent / "kinspect"


def test_each_kind_of_figure_has_one_form():
    assert (n.us(22.52), n.us_text(22.52), n.spread(22.41, 22.74), n.spread_text(22.41, 22.74)) == (
        "22.5", "22.5 µs", "22.4–22.7", "22.4–22.7 µs")
    assert (n.ratio(1.4851), n.ratio_range(1.02, 1.094)) == ("×1.49", "×1.02–×1.09")
    assert (n.share(0.934), n.share_range(0.001, 0.034)) == ("93%", "0–3%")
    assert (n.distance(3.93157), n.distance(2.0)) == ("3.932", "2.000")
    assert (n.seconds(12.34), n.tflops(800.245), n.gbps(4225.36)) == ("12.3 s", "800 TFLOP/s", "4225 GB/s")


def test_an_unknown_figure_is_an_empty_cell():
    for blank in (n.us(None), n.us_text(None), n.spread(None, 1.0), n.spread_text(1.0, None), n.ratio(None),
                  n.ratio_range(None, 1.0), n.share(None), n.share_range(0.1, None), n.seconds(None),
                  n.tflops(None), n.gbps(None)):
        assert blank == ""


HAND_MADE = re.compile(r"×\{(?!dims)|:\.\d+f\}\s*(?:us|µs)\b|:\.\d+f\}%")
"""A ratio, a time or a share formatted in place (`f"×{x:.2f}"`, `f"{t:.1f} us"`,
`f"{100 * s:.0f}%"`) rather than through `kinspect.core.numbers`; `×{dims[1]}` is a
GEMM's M×K×N, not a ratio."""


def test_no_module_formats_a_figure_by_hand_the_inspector_included():
    found = [f"{p.relative_to(KINSPECT)}:{i}: {line.strip()}"
             for p in sorted(KINSPECT.rglob("*.py")) if p.name != "numbers.py"
             for i, line in enumerate(p.read_text().splitlines(), 1) if HAND_MADE.search(line)]
    assert found == []
