"""Vectorised scoring: the same bits as `decide` and as Inductor's own class, for every key."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from standins import StandIn

from kinspect.core.dispatch.batch import keys_to_array, score_array, score_keys
from kinspect.core.dispatch.decision import decide
from kinspect.core.errors import ShapeError
from kinspect.core.dispatch.shapes import MAX_SIZE

SETTINGS = dict(derandomize=True, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
ADDMM = ((1,), (None, 1024), (4096, 1024), (None, 4096))  # bias, x, weight, out; None = B


def addmm_key(b: int):
    return tuple(tuple(b if d is None else d for d in t) for t in ADDMM)


SIZE = st.one_of(st.sampled_from([0, 1, 2, 63, 64, 128, 1621, 12968, 103744, MAX_SIZE]), st.integers(0, 1 << 20))
LAYOUT = st.lists(st.integers(0, 3), min_size=1, max_size=4)


def key_of(layout, size=SIZE):
    return st.tuples(*(st.tuples(*([size] * r)) for r in layout))


@st.composite
def batches(draw):
    """Runtime keys of one layout; variants of that layout or others, maybe keyless."""
    layout = draw(LAYOUT)
    runtimes = draw(st.lists(key_of(layout), min_size=1, max_size=40))
    hint = st.one_of(key_of(layout), LAYOUT.flatmap(key_of), st.none())
    return runtimes, draw(st.lists(hint, min_size=1, max_size=8))


@settings(max_examples=400, **SETTINGS)
@given(batches())
def test_batch_gives_decides_distances_bit_for_bit(batch):
    runtimes, hints = batch
    scores = score_keys(runtimes, hints)
    for i, runtime in enumerate(runtimes):
        decision = decide(hints, runtime)
        assert scores.distances[i].tolist() == [s.distance for s in decision.scores]
        assert scores.chosen[i] == decision.chosen
    assert scores.mismatch == tuple(s.mismatch for s in decide(hints, runtimes[0]).scores)


def test_batch_uses_math_log2_where_numpy_would_tie():
    # 12968 = 1621 * 8 sits at the geometric midpoint of 1621 and 103744; with math.log2
    # (Inductor's) the second variant is nearer by two ulps, np.log2 rounds to a tie.
    hints = [((1621,),), ((103744,),)]
    runtimes = [((12968,),), ((12000,),), ((13000,),)]
    scores = score_keys(runtimes, hints)
    assert scores.chosen.tolist() == [decide(hints, r).chosen for r in runtimes] == [1, 0, 1]


def test_a_sweep_matches_inductors_real_class(monkeypatch):
    torch = pytest.importorskip("torch")
    multi_kernel = pytest.importorskip("torch._inductor.codegen.multi_kernel")
    monkeypatch.setenv("TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE", "1")

    hints = [addmm_key(h) for h in (64, 256, 4096)] + [None]
    call = multi_kernel.SizeHintMultiKernelCall(
        "multi_kernel_0", {k: StandIn(f"stand_in_{i}") for i, k in enumerate(hints)}, {i: [slice(0, 4)] for i in range(4)}
    )
    sweep = list(range(0, 5000)) + [1621, 12968, 103744, 2**40]
    scores = score_keys([addmm_key(b) for b in sweep], hints)
    for i, b in enumerate(sweep):
        call.run(*(torch.empty(s, dtype=torch.uint8, device="meta") for s in addmm_key(b)))
        assert scores.chosen[i] == call.picked_kernel, b
        want = [2**62 if k is None else call._dist_heuristic(addmm_key(b), k) for k in hints]
        assert scores.distances[i].tolist() == want, b
    assert scores.chosen[[64, 128, 129, 1024, 1025]].tolist() == [0, 0, 1, 1, 2]


def test_sorted_and_shuffled_sweeps_score_alike():
    sizes, layout = keys_to_array([addmm_key(b) for b in range(0, 20000, 3)])
    hints = [addmm_key(h) for h in (64, 128, 256, 512, 1024, 2048, 4096, 8192)]
    in_order = score_array(sizes, layout, hints)
    shuffle = np.random.default_rng(0).permutation(len(sizes))
    shuffled = score_array(sizes[shuffle], layout, hints)
    assert np.array_equal(in_order.distances[shuffle], shuffled.distances)
    assert np.array_equal(in_order.chosen[shuffle], shuffled.chosen)


def test_mismatched_variants_are_flagged():
    hints = [addmm_key(64), addmm_key(64)[:3], ((1,), (64,), (4096, 1024), (64, 4096)), None]
    scores = score_keys([addmm_key(100)], hints)
    assert scores.mismatch[0] is None
    assert "runtime key has 4 tensors, hint key 3" in scores.mismatch[1]
    assert "tensor 1 has rank 2 at run time but 1" in scores.mismatch[2]
    assert "no key" in scores.mismatch[3]


def test_no_runtime_keys_give_no_choices():
    scores = score_array(np.empty((0, 7), dtype=np.int64), (1, 2, 2, 2), [addmm_key(64)])
    assert scores.chosen.shape == (0,) and scores.distances.shape == (0, 1)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: score_keys([addmm_key(1), addmm_key(1)[:3]], [addmm_key(64)]), "runtime key 1 has tensor ranks (1, 2, 2)"),
        (lambda: score_keys([], [addmm_key(64)]), "no runtime keys"),
        (lambda: score_array(np.zeros((3, 6), dtype=np.int64), (1, 2, 2, 2), [addmm_key(64)]), "shape (N, 7)"),
        (lambda: score_array(np.zeros((3, 7)), (1, 2, 2, 2), [addmm_key(64)]), "integer array"),
    ],
)
def test_malformed_batches_are_refused(call, message):
    with pytest.raises(ShapeError) as err:
        call()
    assert message in str(err.value)


def test_a_site_needs_a_variant():
    with pytest.raises(ValueError, match="at least one variant"):
        score_keys([addmm_key(1)], [])
