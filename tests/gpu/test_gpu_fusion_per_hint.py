"""`kinspect run --fusion-per-hint` as a user runs it, on a program whose GEMM has an epilogue
Inductor fuses (`relu(addmm(b, x, w))`, the batch dynamic), stock and with the switch. Stock
Inductor's fusion benchmark hands the later hints a choice tuned at an earlier one
(docs/upstream/fusion-per-hint.md), and times each hint's fused choices on a grid of the
example's rows; with the switch every variant runs a choice of its own hint, benchmarked on its
hint's grid, and every pick is still the one Inductor's runtime rule makes.

The switch's code on the CPU, against Inductor's own `speedup_by_fusion`:
tests/test_fusion_per_hint.py.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from gpu_cases import ROOT

from kinspect.core.quality.findings import earlier_hints_choices
from kinspect.core.store import load

PROGRAM = """
import torch

def f(x, w, b):
    return torch.relu(torch.addmm(b, x, w))

w = torch.randn(1024, 2048, device="cuda", dtype=torch.bfloat16)
b = torch.randn(2048, device="cuda", dtype=torch.bfloat16)
g = torch.compile(f, dynamic=True)
for rows in (96, 300, 1000, 3000, 6000):
    x = torch.randn(rows, 1024, device="cuda", dtype=torch.bfloat16)
    torch.testing.assert_close(g(x, w, b), f(x, w, b), atol=0.5, rtol=0.05)
print("ran")
"""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    d = tmp_path_factory.mktemp("fusion")
    (d / "epilogue.py").write_text(PROGRAM)
    out = {}
    for mode, flags in (("stock", []), ("fixed", ["--fusion-per-hint"])):
        path = d / f"{mode}.session.json"
        done = subprocess.run([sys.executable, "-m", "kinspect", "run", "--hints", "64,256,4096", *flags,
                               "-o", str(path), "epilogue.py"], cwd=d, capture_output=True, text=True, timeout=900,
                              env={**os.environ, "PYTHONPATH": str(ROOT), "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"})
        print(done.stderr[-3000:])
        assert done.returncode == 0 and done.stdout.strip() == "ran", done.stderr[-3000:]
        out[mode] = (done, load(path))
    return out


def _borrowed(session) -> list[str]:
    return [f"{site.name} v{v.index} (hint {v.hint}) runs {c.name}, tuned at hint {c.tuned_at}"
            for site in session.sites for v, c in earlier_hints_choices(site)]


def _fused_elsewhere(session) -> list[str]:
    """Choices the fusion benchmark timed for a variant that its own hint's table does not hold."""
    return [f"{site.name} v{v.index}: {r.name}" for site in session.sites for v in site.variants
            for r in v.fused if r.name not in {a.name for a in v.autotune}]


def _fused_below_alone(session) -> list[str]:
    """Variants whose fusion benchmark timed their hint's own choices under half of what the
    fastest of them took alone at that hint (and 10 µs): the benchmark's grid was of a smaller
    problem (stock Inductor sizes it at the example's rows)."""
    out = []
    for site in session.sites:
        for v in site.variants:
            own = {a.name for a in v.autotune}
            fused = [r.time_us for r in v.fused if r.name in own and r.time_us]
            alone = [a.time_us for a in v.autotune if a.time_us]
            if fused and alone and min(fused) * 2 < min(alone) and min(alone) - min(fused) > 10:
                out.append(f"{site.name} v{v.index} (hint {v.hint}): fused {min(fused):.1f} µs, alone {min(alone):.1f} µs")
    return out


def test_stock_inductor_hands_a_later_hint_an_earlier_hints_choice(recorded):
    _, stock = recorded["stock"]
    assert stock.sites and _borrowed(stock)
    assert _fused_elsewhere(stock)  # the session keeps the fusion benchmark's times, earlier hints' choices among them
    assert [f for f in stock.findings if f.kind == "not-autotune-winner"
            and "--fusion-per-hint has each hint pick among its own" in f.message]
    # The rows grow the grid, which stock Inductor's benchmark harness sizes at the example's
    # 96 rows: hint 4096's fused choices are timed on a fraction of its problem.
    print("stock, fused under alone:", _fused_below_alone(stock))
    assert _fused_below_alone(stock)


def test_with_the_switch_each_variant_runs_a_choice_of_its_own_hint(recorded):
    done, fixed = recorded["fixed"]
    assert ("kinspect: --fusion-per-hint: each hint's fused epilogue picked among that hint's own choices, "
            "compiled in a cache directory of this run's own") in done.stderr
    assert fixed.environment.config["fusion_per_hint"] is True
    assert fixed.sites and not _borrowed(fixed)
    assert any(v.fused for site in fixed.sites for v in site.variants) and not _fused_elsewhere(fixed)
    assert all(e.picked == e.predicted for e in fixed.events) and fixed.events
    assert not _fused_below_alone(fixed)  # each hint's fused choices benchmarked on its own grid
    assert not [f.message for f in fixed.findings if f.kind == "autotune-time-disagrees"]
