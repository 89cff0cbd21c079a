"""The PR's comparison from a session's whole-model timings: the per-kind geometric-mean
slowdown against the best kind per shape, what counts, and the table, report and chart
that show it, on the H200 recording of samples/linear.py with comparison timings added."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from rich.console import Console

from kinspect.commands.compare_view import comparison_table
from kinspect.core.quality.comparison import comparison, series
from kinspect.core.export import render
from kinspect.core.session.runtime import Baseline
from kinspect.core.store import load

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
TIMES = {  # B: hinted, oracle, exact_hint, static, eager (GPU us)
    100: (20.0, 18.0, 19.0, 17.0, 40.0),
    1000: (30.0, 24.0, 25.0, 26.0, 60.0),
    8192: (90.0, 90.0, 95.0, 85.0, 180.0),
}


def compared():
    s = load(SAMPLES / "linear.session.json")
    for b, times in TIMES.items():
        for kind, t in zip(("hinted", "oracle", "exact_hint", "static", "eager"), times):
            s.baselines.append(Baseline({"B": b}, kind, t + 5, t, inspected=kind in ("hinted", "oracle")))
    return s


def test_slowdown_is_the_geometric_mean_against_the_best_kind_per_shape():
    c = comparison(compared())
    assert c.kinds == ("hinted", "oracle", "exact_hint", "static", "eager")
    assert [r.best for r in c.rows] == ["static", "oracle", "static"]
    best = {100: 17.0, 1000: 24.0, 8192: 85.0}
    for i, kind in enumerate(c.kinds):
        want = math.exp(sum(math.log(TIMES[b][i] / best[b]) for b in TIMES) / 3)
        assert c.slowdown(kind) == pytest.approx(want, rel=1e-12)
    assert (c.wins("static"), c.wins("oracle"), c.wins("hinted")) == (2, 1, 0)


def test_a_fresh_hinted_compile_is_not_the_inspected_one_and_incomplete_shapes_are_not_averaged():
    s = compared()
    s.baselines.append(Baseline({"B": 1000}, "hinted", 1.0, 1.0))  # a fresh compile: not "hinted (this compile)"
    s.baselines.append(Baseline({"B": 4000}, "hinted", 50.0, 50.0, inspected=True))
    s.baselines.append(Baseline({"B": 4000}, "static", error="CUDA out of memory"))
    c = comparison(s)
    assert [r.sizes["B"] for r in c.rows] == [100, 1000, 4000, 8192]
    assert c.rows[1].times["hinted"] == 30.0
    assert c.rows[2].times["static"] is None and c.rows[2].errors == {"static": "CUDA out of memory"}
    assert len(c.complete) == 3 and c.slowdown("hinted") == comparison(compared()).slowdown("hinted")


def test_a_session_without_compare_has_no_comparison():
    s = load(SAMPLES / "linear.session.json")
    s.baselines.append(Baseline({"B": 100}, "static", 1.0, 1.0))
    assert comparison(s) is None


def test_the_table_shows_each_shape_the_slowdowns_and_the_wins():
    console = Console(width=200, record=True, highlight=False)
    console.print(comparison_table(comparison(compared())))
    text = console.export_text()
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in text.splitlines() if "│" in line]
    assert rows[0] == ["B=100", "20.0", "18.0", "19.0", "17.0", "40.0"]
    assert rows[3][0] == "geomean slowdown" and rows[3][1:3] == ["×1.16", "×1.04"]
    assert rows[4] == ["best at", "0/3", "1/3", "0/3", "2/3", "0/3"]
    assert "hinted (this compile)" in text and "exact_hint (fresh compile)" in text


def test_the_report_has_a_comparison_section_with_its_chart():
    text = render(compared(), "md", chart="r.compare.png")
    section = text.split("## Comparison", 1)[1].split("## Decisions", 1)[0]
    assert "| B=1000 | 30.0 | **24.0** | 25.0 | 26.0 | 60.0 |" in section
    assert "| **geomean slowdown vs the best per shape** | ×1.16 | ×1.04 |" in section
    assert "![comparison](r.compare.png)" in section and "compile-to-compile noise" in section


def test_the_chart_is_one_line_per_kind_along_the_swept_size(tmp_path):
    chart = series(comparison(compared()))
    assert chart.axis == "B" and chart.xs == (100, 1000, 8192)
    assert chart.lines["oracle"] == (18.0, 24.0, 90.0)
    pytest.importorskip("matplotlib")
    from kinspect.images import draw_comparison

    draw_comparison(compared(), tmp_path / "c.png")
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
