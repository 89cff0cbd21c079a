"""The live pipeline on the samples and on tricky models, against Inductor itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kinspect.core.store import load

from gpu_cases import MEASURE_AT, MODELS, ROOT, SAMPLES

SAMPLE_NAMES = sorted(MEASURE_AT)


def sample(recorded, name):
    return recorded(SAMPLES / f"{name}.py", MEASURE_AT[name])


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_capture_is_complete(recorded, name):
    r = sample(recorded, name)
    s = r.session
    assert s.sites, f"{name}: no size-hint site captured"
    assert all(sym.alias for sym in s.symbols if sym.input is not None), s.symbols
    for site in s.sites:
        assert site.op in ("mm", "addmm", "bmm"), site.op
        assert any(not d.is_constant for t in site.tensors for d in t.sizes), "no symbolic size"
        assert [v.hint for v in site.variants] == [64, 256, 4096]
        for v in site.variants:
            assert v.key is not None and len(v.key) == len(site.tensors)
            assert v.kernel_name.startswith("triton_")
            assert "@triton" in v.source and v.source_hash
            assert {"BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"} <= set(v.config), v.config
            assert v.autotune and v.winner and v.emitted
        graph = next(g for g in s.graphs if g.name == site.graph)
        assert graph.wrapper_path and Path(graph.wrapper_path).exists()
        assert graph.wrapper_code == Path(graph.wrapper_path).read_text()
        assert f"{site.name.split('@')[0]} = async_compile.size_hint_multi_kernel" in graph.wrapper_code
    assert any("autotuning" in p for p in r.progress), r.progress[:5]


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_every_choice_equals_inductors(recorded, name):
    s = sample(recorded, name).session
    assert len(s.events) >= len(sample(recorded, name).mf.workload)
    bad = [e for e in s.events if e.override is None and e.predicted != e.picked]
    assert not bad, bad[:3]
    assert not [f for f in s.findings if f.kind == "model-disagrees"]


def test_kinspect_pick_is_the_kernel_that_ran(recorded):
    """Inductor's own picked_kernel after each call agrees with the event."""
    r = sample(recorded, "linear")
    for ls in r.live.recorder.sites:
        last = [e for e in r.session.events if e.site == ls.name][-1]
        assert ls.call.picked_kernel == last.picked


def test_two_dynamic_dims_share_each_hint(recorded):
    s = sample(recorded, "gemm_2d").session
    assert sorted(sym.alias for sym in s.symbols) == ["M", "N"]
    site = s.sites[0]
    for v in site.variants:
        a, b, out = v.key
        assert a[0] == v.hint and b[1] == v.hint and out == (v.hint, v.hint)


def test_bias_epilogue_keys_hold_the_bias(recorded):
    s = sample(recorded, "linear").session
    site = s.sites[0]
    assert site.op == "addmm"
    assert [len(t) for t in site.variants[0].key] == [1, 2, 2, 2]
    assert site.variants[0].key[0] == (4096,)


def test_relu_epilogue_is_in_the_template_or_beside_it(recorded):
    """Whether Inductor fuses the relu is decided by benchmarking; either way kinspect
    captures the site, and the relu is in its kernels or in a kernel of its own."""
    s = sample(recorded, "gemm_2d").session
    site = s.sites[0]
    fused = all("relu" in v.kernel_name and "maximum" in v.source for v in site.variants)
    wrapper = Path(s.graphs[0].wrapper_path).read_text()
    assert fused or ("maximum" in wrapper and "relu" in wrapper), site.variants[0].kernel_name


def test_picks_switch_at_the_hint_midpoints(recorded):
    s = sample(recorded, "linear").session
    picked = {e.key[1][0]: e.picked for e in s.events if e.step is not None}
    assert picked[128] == 0 and picked[129] == 1, picked
    assert picked[1024] == 1 and picked[1025] == 2, picked


def test_model_without_gemm_says_why(recorded):
    s = recorded(MODELS / "no_gemm.py").session
    assert not s.sites
    assert s.graphs and all(g.no_site_reason for g in s.graphs)
    assert "GEMM" in s.graphs[0].no_site_reason


def test_static_model_says_why(recorded):
    s = recorded(MODELS / "static_gemm.py").session
    assert not s.sites
    assert "dynamic" in s.graphs[0].no_site_reason


def test_session_round_trips_and_explains(recorded, tmp_path):
    r = sample(recorded, "mlp")
    path = tmp_path / "mlp.session.json"
    r.live.save(path)
    again = load(path)
    assert len(again.events) == len(r.session.events) and len(again.sites) == 2
    out = subprocess.run([sys.executable, "-m", "kinspect", "explain", str(path), "--shape", "B=1000", "--json"],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    sites = json.loads(out.stdout)["sites"]
    assert [x["chosen"] for x in sites] == [1, 1]
    assert all("median_us" in v for x in sites for v in x["variants"])


def test_log_written_as_events_happen(recorded, tmp_path):
    from kinspect.inductor.launch.modelfile import load_model_file
    from kinspect.inductor.recording.pipeline import LivePipeline, Options

    log = tmp_path / "linear.session.jsonl"
    with LivePipeline(load_model_file(SAMPLES / "linear.py"), Options(log_path=log)) as live:
        live.compile()
        live.run_sizes({"B": 100}, step=0)
        partial = load(log)
        assert partial.truncated and len(partial.events) == len(live.session.events)
        assert partial.graphs == live.session.graphs and all(g.wrapper_code for g in partial.graphs)
    assert load(log).truncated is None
