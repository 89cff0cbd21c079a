"""Decision boundaries along a size, checked against Inductor's own SizeHintMultiKernelCall:
the pick on each side of every boundary is the pick of the real runtime class."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from standins import StandIn

from kinspect.core.quality.boundaries import boundaries, crossovers, log_grid
from kinspect.core.session.runtime import Measurement
from kinspect.core.session.timings import KeyTimings, key_timings
from kinspect.core.store import load
from kinspect.core.dispatch.shapes import SymbolShape

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def test_the_log_grid_spans_the_range_in_log_steps():
    grid = log_grid(1, 16384, 15)
    assert grid[0] == 1 and grid[-1] == 16384 and grid == sorted(set(grid))
    assert grid == [2 ** i for i in range(15)]
    assert log_grid(5, 5, 10) == [5]
    with pytest.raises(Exception, match="1 <= lo <= hi"):
        log_grid(0, 10, 4)


def test_inductors_boundaries_sit_at_the_geometric_midpoints_ties_to_the_first():
    s = load(SAMPLES / "linear.session.json")
    site = s.sites[0]
    found = boundaries(s, site, "B", 1, 16384)
    assert [(b.last, b.first, b.before, b.after) for b in found] == [(128, 129, 0, 1), (1024, 1025, 1, 2)]


@pytest.fixture
def real_call(monkeypatch):
    torch = pytest.importorskip("torch")
    mk = pytest.importorskip("torch._inductor.codegen.multi_kernel")
    monkeypatch.setenv("TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE", "1")

    def make(site):
        kernels = {v.key: StandIn(f"k{v.index}") for v in site.variants}
        call = mk.SizeHintMultiKernelCall("mk", kernels, {i: [slice(0, 4)] for i in range(len(kernels))})

        def pick(key):
            call._shape_cache.clear()
            call._select_kernel_by_shape(*[torch.empty(shape, device="meta") for shape in key])
            return call.picked_kernel
        return pick

    return make


def distinct_kernels(s):
    """gemm_2d's three hints emitted one kernel; as three, its boundaries test two dims."""
    s.sites = [replace(site, variants=tuple(replace(v, source_hash=f"k{v.index}") for v in site.variants))
               for site in s.sites]
    return s


@pytest.mark.parametrize("sample, symbol, fixed", [("linear", "B", {}), ("mlp", "B", {}), ("gemm_2d", "M", {"N": 300})])
def test_each_side_of_each_boundary_is_what_inductor_picks(real_call, sample, symbol, fixed):
    s = load(SAMPLES / f"{sample}.session.json")
    if sample == "gemm_2d":
        s = distinct_kernels(s)
    checked = 0
    for site in s.sites:
        inductor = real_call(site)
        for b in boundaries(s, site, symbol, 2, 1 << 20, fixed):
            for x, want in ((b.last, b.before), (b.first, b.after)):
                key = s.runtime_key(site, SymbolShape({**fixed, symbol: x}))
                assert site.kernels[inductor(key)] == want, (site.name, x)
                checked += 1
    assert checked >= 4


def test_a_pick_that_moves_between_copies_of_one_kernel_is_no_boundary():
    s = load(SAMPLES / "gemm_2d.session.json")
    assert boundaries(s, s.sites[0], "M", 2, 1 << 20, {"N": 300}) == []
    s = load(SAMPLES / "mlp.session.json")  # multi_kernel_0: v1 and v2 are one kernel
    assert [(b.before, b.after) for b in boundaries(s, s.site("multi_kernel_0"), "B", 2, 1 << 20)] == [(0, 1)]


def _at(*spreads: tuple[float, float, float]) -> KeyTimings:
    ms = [Measurement("s", ((1,),), v, "cuda_events", med, p20, p80, 20) for v, (p20, med, p80) in enumerate(spreads)]
    return key_timings(ms)


def test_crossovers_are_where_the_fastest_changes_beyond_noise():
    fast, slow, near = (9.8, 10.0, 10.2), (14.7, 15.0, 15.3), (9.9, 10.1, 10.3)
    found = crossovers([16, 64, 128, 256, 1024],
                       [_at(fast, slow, slow), _at(near, fast, slow),  # v1 ahead within noise: none
                        _at(fast, near, slow), _at(slow, fast, slow), _at(slow, slow, fast)])
    assert [(c.last, c.first, c.before, c.after) for c in found] == [(128, 256, 0, 1), (256, 1024, 1, 2)]
