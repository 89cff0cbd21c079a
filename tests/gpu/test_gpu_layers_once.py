"""GPT-2 from `transformers` recorded with `--compile-layers-once`: its blocks compiled once
as a nested compile region, with the same size-hint sites, keys and variants as a stock
recording, every layer's call a call site of its own, and every recorded pick equal to
what Inductor's `SizeHintMultiKernelCall.run` itself chose, seen by a hook of this test's
own on the class (the recorder hooks each instance).

With its blocks as a region, stock Inductor faults autotuning GPT-2's addmm at hint 4096 (a
benchmark tensor of the region's own inputs too small for what the kernel reads, seen on
the H200 with torch 2.11), so the recording fits the benchmark tensors as well."""

from __future__ import annotations

import pytest

from kinspect.core.session.compile_changes import LAYERS_KEY
from kinspect.core.store import load

from gpu_cases import SAMPLES
from gpu_cli import kinspect

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def once(tmp_path_factory):
    from torch._inductor.codegen.multi_kernel import SizeHintMultiKernelCall

    from kinspect.inductor.launch.modelfile import load_model_file
    from kinspect.core.session.compile_changes import CompileChanges
    from kinspect.inductor.recording.pipeline import LivePipeline, Options

    ran: list[tuple[str, tuple, int]] = []
    original = SizeHintMultiKernelCall.run

    def run(self, *args, **kwargs):
        out = original(self, *args, **kwargs)
        ran.append((self.multi_kernel_name, self._get_shape_cache_key(*args, **kwargs), self.picked_kernel))
        return out

    from transformers.models.gpt2.modeling_gpt2 import GPT2Block

    forward = GPT2Block.__dict__["forward"]
    SizeHintMultiKernelCall.run = run
    said: list[str] = []
    live = LivePipeline(load_model_file(SAMPLES / "gpt2.py"), Options(progress=said.append, changes=CompileChanges(
        fit_benchmark_tensors=True, layers_once=True)))
    try:
        live.compile()
        live.run_workload()
    finally:
        SizeHintMultiKernelCall.run = original
    live.close()
    assert GPT2Block.__dict__["forward"] is forward  # the class as it was, once the recording is closed
    return live, ran, said


def test_the_blocks_are_regions_that_every_layer_calls(once):
    """Dynamo traces the first block's call apart from the rest (on the H200, torch 2.11:
    `repeated_subgraph0` for h.0 and `repeated_subgraph1` for every later layer), so the
    regions are at most two, whatever the depth, and every layer calls one."""
    live, _, said = once
    assert live.session.environment.config[LAYERS_KEY] == ["h (2 × GPT2Block)"]
    assert "compiling the blocks of h (2 × GPT2Block) once (nested compile regions)" in said
    code = open(live.session.graphs[0].wrapper_path).read()
    regions = [line.split("(")[0][4:] for line in code.splitlines() if line.startswith("def repeated_subgraph")]
    assert 1 <= len(regions) <= 2, regions
    assert sum(code.count(f"{r}({r}_args)") for r in regions) == 2


def test_the_sites_are_a_stock_recordings_with_a_call_site_per_layer(once, recorded):
    live, _, _ = once
    stock = recorded(SAMPLES / "gpt2.py").session
    assert sorted((s.op, tuple(v.key for v in s.variants)) for s in live.session.sites) == \
        sorted((s.op, tuple(v.key for v in s.variants)) for s in stock.sites)
    attn = next(s for s in live.session.sites if any(c.module == "h.0.attn.c_attn" for c in s.call_sites))
    assert [c.module for c in attn.call_sites] == ["h.0.attn.c_attn", "h.1.attn.c_attn"]
    assert all(c.module_class == "Conv1D" and c.line is not None for c in attn.call_sites)


def test_every_recorded_pick_is_inductors_and_names_its_layer(once):
    live, ran, _ = once
    s = live.session
    assert len(s.events) == len(ran) > 0
    assert [(e.site.split("@")[0], e.key, e.picked) for e in s.events] == ran
    for site in s.sites:
        if len(site.call_sites) > 1:
            assert {e.call_site for e in s.events if e.site == site.name} == set(range(len(site.call_sites)))
    assert not [f for f in s.findings if f.kind == "model-disagrees"]


@pytest.fixture(scope="module")
def typed(tmp_path_factory):
    """`kinspect record` run as a user types it, with both switches."""
    out = tmp_path_factory.mktemp("typed") / "gpt2.session.json"
    done = kinspect("record", SAMPLES / "gpt2.py", "--compile-layers-once", "--fit-benchmark-tensors", "-o", out)
    return done, out


def test_record_as_typed_says_so_and_saves_each_layers_calls(typed, once):
    done, out = typed
    assert "compiling the blocks of h (2 × GPT2Block) once (nested compile regions)" in done.stderr
    s = load(out)
    assert f"kinspect: saved {out}: {len(s.sites)} sites, {len(s.events)} dispatches" in done.stderr
    assert s.environment.config[LAYERS_KEY] == ["h (2 × GPT2Block)"]
    live = once[0].session
    assert sorted(c.module for site in s.sites for c in site.call_sites) == \
        sorted(c.module for site in live.sites for c in site.call_sites)
    assert len(s.events) == len(live.events) and all(e.picked == e.predicted for e in s.events)


def test_explain_says_the_layers_were_compiled_once(typed):
    _, out = typed
    text = kinspect("explain", out).stdout
    print(text[:3000])
    assert "Repeated layers were compiled once by kinspect (--compile-layers-once)" in text
    assert "h.{0,1}.attn.c_attn (Conv1D)" in text
