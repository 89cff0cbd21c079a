"""What a sweep measures: the grid, both sides of each boundary, the workload."""

from __future__ import annotations

from pathlib import Path

import pytest

from kinspect.core.errors import ShapeError
from kinspect.core.store import load
from kinspect.core.quality.sweep_plan import parse_ranges, plan

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def test_ranges_parse_and_bad_ones_say_what_is_expected():
    assert parse_ranges(["B=1..16384", " S = 16 .. 2048 "]) == {"B": (1, 16384), "S": (16, 2048)}
    for bad, msg in (("B=1-16", "NAME=LO..HI"), ("B=0..16", "1 <= LO"), ("B=9..3", "1 <= LO"),
                     ("x" * 5000, "NAME=LO..HI")):
        with pytest.raises(ShapeError, match=msg) as e:
            parse_ranges([bad])
        assert len(str(e.value)) < 120
    with pytest.raises(ShapeError, match="two ranges"):
        parse_ranges(["B=1..2", "B=3..4"])


def test_a_sweep_straddles_every_boundary_and_holds_the_workload():
    s = load(SAMPLES / "linear.session.json")
    sizes = [p["B"] for p in plan(s, {"B": (1, 16384)}, 15, {"B": 1000}, s.model.workload)]
    assert sizes == sorted(set(sizes)) and sizes[0] == 1 and sizes[-1] == 16384
    assert {2 ** i for i in range(15)} <= set(sizes)
    assert {128, 129, 1024, 1025} <= set(sizes)  # both sides of both boundaries
    assert {100, 1000, 8192} <= set(sizes)  # the workload's sizes


def test_two_swept_sizes_make_a_grid_and_others_keep_their_example():
    s = load(SAMPLES / "gemm_2d.session.json")
    points = plan(s, {"M": (64, 4096)}, 7, {"M": 1000, "N": 300})
    assert {p["N"] for p in points} == {300}
    grid = plan(s, {"M": (64, 4096), "N": (64, 4096)}, 16, {"M": 1000, "N": 300})
    assert {(p["M"], p["N"]) for p in grid} >= {(64, 64), (64, 4096), (4096, 64), (4096, 4096)}


def test_points_take_two_to_the_most_and_a_sweep_of_two_is_its_ends_and_boundaries():
    s = load(SAMPLES / "linear.session.json")
    sizes = [p["B"] for p in plan(s, {"B": (16, 4096)}, 2, {"B": 1000})]
    assert sizes[0] == 16 and sizes[-1] == 4096 and {128, 129, 1024, 1025} <= set(sizes)
    for bad in (1, 4097):
        with pytest.raises(ShapeError, match=rf"^--points takes 2\.\.4096, got {bad}$"):
            plan(s, {"B": (16, 4096)}, bad, {"B": 1000})
    with pytest.raises(ShapeError, match=r"^give at least one range, e\.g\. --range B=1\.\.16384$"):
        parse_ranges([])
