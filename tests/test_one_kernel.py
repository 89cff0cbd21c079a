"""One kernel is one kernel: variants Inductor emitted with the same source and config
(two hints whose autotuning agreed) share one time, so no figure calls one of them faster
than the other, on the recorded H200 samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from kinspect.core.quality.decision_map import DecisionMap, Heatmap, decision_map
from kinspect.core.quality.overview import model_quality
from kinspect.core.quality.whatif import what_ifs
from kinspect.core.store import load

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "tests" / "fixtures" / "samples_h200_2026-11-30"


@pytest.fixture(scope="module")
def gemm_2d():
    return load(FIGURES / "gemm_2d.session.json")


@pytest.fixture(scope="module")
def mlp():
    return load(ROOT / "samples" / "mlp.session.json")


def test_gemm_2d_has_one_kernel_and_so_no_regret(gemm_2d):
    site = gemm_2d.sites[0]
    assert site.kernels == (0, 0, 0)
    q = model_quality(gemm_2d)
    assert q.worst[1].regret == 1.0 and q.fastest_picked == 1.0
    assert all(w.worst_regret == 1.0 for w in what_ifs(gemm_2d))
    m = decision_map(gemm_2d, site)
    assert isinstance(m, Heatmap)
    assert {r for row in m.regret for r in row if r is not None} == {1.0}


def test_a_kernel_at_two_hints_is_one_line_on_the_map(mlp):
    site = mlp.site("multi_kernel_0")  # v1 and v2 (hints 256, 4096) are one kernel
    assert site.kernels == (0, 1, 1)
    m = decision_map(mlp, site)
    assert isinstance(m, DecisionMap)
    assert m.variants == (0, 1)
    assert m.labels[1] == m.labels[2] == "v1 = v2 (hints 256, 4096)"
    assert all(p.point.picked in m.variants and p.point.fastest in m.variants for p in m.points)


def test_the_map_shows_crossovers_beyond_noise_only(mlp):
    found = {s.name: decision_map(mlp, s).crossovers for s in mlp.sites}
    assert [(c.before, c.after) for c in found["multi_kernel_0"]] == [(0, 1)]
    assert len(found["multi_kernel_1"]) <= 3
    for s in mlp.sites:
        for c in found[s.name]:
            t = mlp.timings_at(s.name, next(p.key for p in decision_map(mlp, s).points if p.x == c.first))
            assert t.slower(c.before), (s.name, c)


def test_a_pick_of_the_fastest_kernels_copy_is_the_fastest(mlp):
    site = mlp.site("multi_kernel_0")
    for (name, key), t in mlp.timings().items():
        if name != site.name or t.fastest is None:
            continue
        for v in (1, 2):
            assert t.median(v) == t.median(1)
            if t.is_fastest(1):
                assert t.regret(v) == 1.0 and not t.slower(v) and t.is_fastest(v)


def test_the_measured_keys_list_never_calls_a_copy_of_the_fastest_slower(mlp):
    from kinspect.tui.dialogs import measured_shapes

    lines = [line.plain for _, _, line in measured_shapes(mlp, mlp.site("multi_kernel_0"), mlp.timings())]
    assert not [x for x in lines if "×1.00" in x]
    assert "B=280  fastest v1 = v2 · Inductor picks v1 (the fastest)" in lines
