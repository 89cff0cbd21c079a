"""Each distance heuristic does what its documentation (shown to users) says it does."""

from __future__ import annotations

import math

import pytest

from kinspect.core.dispatch.decision import decide
from kinspect.core.errors import KinspectError
from kinspect.core.dispatch.heuristics import HEURISTICS, NO_KEY_DISTANCE, UNCOVERED, distance_text, get_heuristic
from kinspect.core.quality.whatif import distance_matrix


def linear(b: int):
    """addmm's key for nn.Linear(1024, 4096) at batch b: bias, x, weight, out."""
    return ((4096,), (b, 1024), (4096, 1024), (b, 4096))


HINTS = [linear(h) for h in (64, 256, 4096)]


def picks(heuristic: str, runtime, hints=HINTS) -> int:
    return decide(hints, runtime, heuristic).chosen


def test_the_heuristics_on_offer():
    assert list(HEURISTICS) == ["inductor", "log2-l2", "log2-linf", "l1", "ceil"]


# ---------------------------------------------------------------- inductor


def test_inductor_sums_log2_differences_over_tensors_and_dims():
    h = HEURISTICS["inductor"]
    assert h.distance(linear(1000), linear(64)) == 2 * abs(math.log2(1000) - 6)
    assert h.distance(((8, 2), (1,)), ((2, 8), (4,))) == 2 + 2 + 2


def test_inductor_takes_log2_of_zero_as_minus_one():
    h = HEURISTICS["inductor"]
    assert h.distance(((0,),), ((1,),)) == 1  # |-1 - 0|
    assert h.distance(((0,),), ((0,),)) == 0
    assert h.distance(((0,),), ((4,),)) == 3  # |-1 - 2|


def test_inductor_boundaries_are_the_geometric_midpoints_and_ties_go_first():
    assert [picks("inductor", linear(b)) for b in (127, 128, 129, 1023, 1024, 1025)] == [0, 0, 1, 1, 1, 2]
    tie = decide(HINTS, linear(128))
    assert tie.tied == (0, 1) and tie.is_tie


def test_inductor_compares_only_what_zip_pairs():
    h = HEURISTICS["inductor"]
    assert h.distance(((64, 3),), ((64,),)) == 0  # the runtime's extra dim is ignored
    assert h.distance(((64,), (1, 1)), ((64,),)) == 0  # and its extra tensor
    assert h.terms(((8, 3), (5,)), ((2,),)) == ((2.0,),)


def test_every_heuristic_charges_a_variant_without_key_two_to_the_62():
    for h in HEURISTICS.values():
        assert h.distance(linear(100), None) == NO_KEY_DISTANCE == 2**62


# ---------------------------------------------------------------- log2-l2 and log2-linf

# One variant is off by 2 (in log2) in one dim; the other by 1 in each of three dims.
RUNTIME = ((16, 16, 16),)
ONE_FAR = ((64, 16, 16),)
THREE_NEAR = ((32, 32, 32),)


def test_l2_punishes_one_far_dimension_more_than_several_near_ones():
    assert HEURISTICS["log2-l2"].distance(RUNTIME, ONE_FAR) == 2
    assert HEURISTICS["log2-l2"].distance(RUNTIME, THREE_NEAR) == pytest.approx(math.sqrt(3))
    assert picks("log2-l2", RUNTIME, [ONE_FAR, THREE_NEAR]) == 1
    assert picks("inductor", RUNTIME, [ONE_FAR, THREE_NEAR]) == 0  # L1: 2 < 3


def test_linf_counts_only_the_worst_dimension():
    h = HEURISTICS["log2-linf"]
    assert h.distance(RUNTIME, ONE_FAR) == 2
    assert h.distance(RUNTIME, THREE_NEAR) == 1
    assert h.distance(((16, 16),), ((32, 256),)) == 4
    assert picks("log2-linf", RUNTIME, [ONE_FAR, THREE_NEAR]) == 1


# ---------------------------------------------------------------- l1 on raw sizes


def test_l1_splits_two_hints_at_their_arithmetic_mean():
    hints = [((256,),), ((4096,),)]
    assert HEURISTICS["l1"].distance(((2000,),), ((256,),)) == 1744
    # B=2000 is past the geometric midpoint (1024) but short of the mean (2176).
    assert picks("l1", ((2000,),), hints) == 0
    assert picks("inductor", ((2000,),), hints) == 1
    assert decide(hints, ((2176,),), "l1").tied == (0, 1)
    assert picks("l1", ((2177,),), hints) == 1


# ---------------------------------------------------------------- ceil


def test_ceil_prefers_the_smallest_hint_not_below_the_runtime_size():
    assert picks("ceil", linear(100)) == 1  # 256 covers 100; Inductor's log2 picks 64
    assert picks("inductor", linear(100)) == 0
    assert picks("ceil", linear(64)) == 0
    assert picks("ceil", linear(257)) == 2


def test_ceil_charges_each_uncovered_dim_a_million_plus_its_log2_distance():
    h = HEURISTICS["ceil"]
    assert h.distance(((100,),), ((64,),)) == UNCOVERED + abs(math.log2(100) - 6)
    assert h.distance(((100, 100),), ((64, 64),)) == 2 * (UNCOVERED + abs(math.log2(100) - 6))
    # Covered dims cost their log2 excess only.
    assert h.distance(((100,),), ((400,),)) == pytest.approx(2)


def test_ceil_takes_a_hint_equal_to_the_runtime_size_as_covering_it():
    """"Not below" includes equal: at a hint's own size its variant is at distance 0, and is the pick."""
    h = HEURISTICS["ceil"]
    assert h.distance(linear(256), linear(256)) == 0
    assert distance_text(h.distance(((64,),), ((64,),)), "ceil") == "0.000"
    assert distance_text(h.distance(((65,),), ((64,),)), "ceil") == "1 dim above hint + 0.022"
    assert [picks("ceil", linear(b)) for b in (64, 256, 4096)] == [0, 1, 2]


def test_ceil_with_no_hint_covering_picks_the_closest_largest():
    assert picks("ceil", linear(10_000)) == 2
    assert picks("ceil", ((10_000,),), [((4096,),), ((64,),)]) == 0


def test_ceil_prefers_covering_more_dims():
    runtime = ((100, 100),)
    one_short = ((64, 4096),)
    both_covered = ((4096, 4096),)
    assert picks("ceil", runtime, [one_short, both_covered]) == 1


# ---------------------------------------------------------------- many keys at once


def test_the_what_if_scores_many_keys_as_one_decision_scores_each():
    """The what-if table scores every measured key of a site at once (arrays): each
    heuristic's distances there are those of a single decision, at and around every hint,
    at size 0, without a key, and for keys whose tensors do not line up with a hint."""
    keys = [linear(b) for b in (1, 63, 64, 65, 100, 128, 255, 256, 257, 2000, 4095, 4096, 4097, 10_000)]
    hints = HINTS + [None, ((4096,), (256, 1024))]
    for name, h in HEURISTICS.items():
        for batch in (keys, [((0,), (0, 1024), (4096, 1024), (0, 4096))]):
            got = distance_matrix(batch, hints, name)
            want = [[h.distance(k, hint) for hint in hints] for k in batch]
            assert got.tolist() == [pytest.approx(row, rel=1e-12, abs=1e-12) for row in want], name


def test_ceil_in_the_what_if_takes_a_hint_equal_to_the_size_as_covering_it():
    d = distance_matrix([linear(64), linear(256), linear(4096)], HINTS, "ceil")
    assert d.argmin(axis=1).tolist() == [0, 1, 2]
    assert d.min(axis=1).tolist() == [0.0, 0.0, 0.0]


# ---------------------------------------------------------------- lookup and explanations


def test_unknown_heuristic_names_the_known_ones():
    assert get_heuristic("l1") is HEURISTICS["l1"]
    with pytest.raises(KinspectError, match="unknown heuristic 'l3'; known: inductor, log2-l2, log2-linf, l1, ceil"):
        get_heuristic("l3")


def test_a_decision_says_why_in_one_sentence():
    labels = ["v0 (hint 64)", "v1 (hint 256)", "v2 (hint 4096)"]
    assert decide(HINTS, linear(128)).reason(labels) == (
        "tie at distance 2.000 between v0 (hint 64) and v1 (hint 256): the first minimum wins"
    )
    assert decide(HINTS, linear(4096)).reason(labels) == "v2 (hint 4096) is nearest at distance 0.000; next is v1 (hint 256) at 8.000"
    assert decide(HINTS[:1], linear(1)).reason() == "variant 0 is the only variant"


def test_decisions_keep_per_dimension_terms():
    d = decide(HINTS, linear(128))
    assert d.scores[0].terms == ((0.0,), (1.0, 0.0), (0.0, 0.0), (1.0, 0.0))
    assert d.scores[0].mismatch is None
