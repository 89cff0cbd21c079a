"""Decision boundaries along a size, checked against Inductor's own SizeHintMultiKernelCall:
the pick on each side of every boundary is the pick of the real runtime class."""

from __future__ import annotations

from pathlib import Path

import pytest
from standins import StandIn

from kinspect.core.quality.boundaries import boundaries, crossovers, log_grid
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


@pytest.mark.parametrize("sample, symbol, fixed", [("linear", "B", {}), ("mlp", "B", {}), ("gemm_2d", "M", {"N": 300})])
def test_each_side_of_each_boundary_is_what_inductor_picks(real_call, sample, symbol, fixed):
    s = load(SAMPLES / f"{sample}.session.json")
    checked = 0
    for site in s.sites:
        inductor = real_call(site)
        for b in boundaries(s, site, symbol, 2, 1 << 20, fixed):
            for x, want in ((b.last, b.before), (b.first, b.after)):
                key = s.runtime_key(site, SymbolShape({**fixed, symbol: x}))
                assert inductor(key) == want, (site.name, x)
                checked += 1
    assert checked >= 4


def test_crossovers_are_where_the_fastest_changes():
    found = crossovers([16, 64, 256, 1024], [0, 0, 1, 2])
    assert [(c.last, c.first, c.before, c.after) for c in found] == [(64, 256, 0, 1), (256, 1024, 1, 2)]
