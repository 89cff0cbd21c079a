"""The real `LivePipeline` on the CPU, with stand-ins only for what needs a GPU.

`torch.compile` is replaced by a stand-in Inductor: on its first call at a new size range
it hands the capture a graph record (what the capture's hooks record of a compile) and
loads an output-code module written the way Inductor writes one (kernels through
`async_compile.triton(name, source)`, a real `SizeHintMultiKernelCall` at its top level,
a `call` that runs it), on meta tensors. The CUDA check, the input builder's device and
`torch.cuda.synchronize` are the other stand-ins; compile, run, the session's assembly,
the recorder and the crash-safe log are the pipeline's own code. Measuring and timing the
whole model stand in the GPU's clocks only: the variants are launched by the real
launcher on the arguments the real run grabbed, and the oracle's forced dispatch is the
recorder's own.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
sympy = pytest.importorskip("sympy")

from torch._inductor.virtualized import V  # noqa: E402

from kinspect.core.store import load  # noqa: E402
from kinspect.inductor.recording import pipeline  # noqa: E402
from kinspect.inductor.hooks.capture import GraphRecord, SiteRecord  # noqa: E402
from kinspect.inductor.launch.modelfile import load_model_file  # noqa: E402
from kinspect.inductor.timing.measure import Timing  # noqa: E402
from kinspect.inductor.recording.pipeline import LivePipeline, Options  # noqa: E402

HINTS = (64, 256, 4096)
KILLED = "the recording stopped before its end record (was it killed?)"
MODEL = '''\
import torch


def model(x):
    return x


def inputs(B=100):
    return torch.empty(B, 1024)


workload = [{"B": 100}, {"B": 3000}, {"B": 64}, {"B": 9000}, {"B": 100}]
hints = [64, 256, 4096]
'''
WRAPPER = '''\
import torch
from torch._inductor.codegen.multi_kernel import SizeHintMultiKernelCall


RAN = []


class _Kernel:
    def __init__(self, name):
        self.inductor_meta = {"kernel_name": name}

    def run(self, *args, **kwargs):
        RAN.append(self.inductor_meta["kernel_name"])


class async_compile:
    @staticmethod
    def triton(name, source, device_str="cuda"):
        return _Kernel(name)


KERNELS
bias = torch.empty(4096, device="meta")
weight = torch.empty(4096, 1024, device="meta")
NAME = SizeHintMultiKernelCall("NAME", {KEYS}, {0: [slice(0, 4)], 1: [slice(0, 4)], 2: [slice(0, 4)]})


def call(args):
    arg0_1, = args
    s0 = arg0_1.size(0)
    buf0 = torch.empty((s0, 4096), device="meta")
    NAME.run(bias, arg0_1, weight, buf0)
    return (buf0,)
'''
SOURCE = "@triton.jit\ndef {name}(in_ptr0, in_ptr1, out_ptr0, ks0):\n    pass  # BLOCK_M = {hint}\n"


def keys_at(h: int) -> tuple:
    return ((4096,), (h, 1024), (4096, 1024), (h, 4096))


class Compiled:
    """A graph as the stand-in Inductor makes it: its capture record and output code."""

    def __init__(self, index: int, folder: Path, symbol: str) -> None:
        self.obj = object()
        """The graph handler the wrapper module loads under (what `V.graph` is then)."""
        kernels = [f"triton_tem_{index}_{i}" for i in range(len(HINTS))]
        text = WRAPPER.replace("NAME", "multi_kernel_0").replace("KERNELS", "\n".join(
            f"{k} = async_compile.triton({k!r}, {SOURCE.format(name=k, hint=h)!r}, device_str='cuda')"
            for k, h in zip(kernels, HINTS)))
        self.path = folder / f"c{index}output.py"  # a name without "multi_kernel": the recorder reads it
        self.path.write_text(text.replace("KEYS", ", ".join(f"{keys_at(h)!r}: {k}" for k, h in zip(kernels, HINTS))))
        s = sympy.Symbol(symbol)
        self.record = GraphRecord(
            index, "inference", self.obj, wrapper_path=str(self.path), symbols={symbol: ["L['x'].size()[0]"]},
            dynamic_inputs=True, templates=1, finalized={"buf0"},
            sites=[SiteRecord(
                name="multi_kernel_0", node="buf0", op="addmm",
                tensors=[("bias", "input", (4096,)), ("x", "input", (s, 1024)), ("weight", "input", (4096, 1024)),
                         ("out", "output", (s, 4096))],
                hint_keys={h: keys_at(h) for h in HINTS}, kernel_names=kernels, keys=[keys_at(h) for h in HINTS],
            )])
        self.module = None

    def load(self, capture) -> None:
        capture.graphs.append(self.record)
        spec = importlib.util.spec_from_file_location(self.path.stem, self.path)
        self.module = importlib.util.module_from_spec(spec)
        with V.set_graph_handler(self.obj):
            spec.loader.exec_module(self.module)


class StandInInductor:
    """What `torch.compile` returns here: graph 0 for sizes up to 4096, a recompile
    (graph 1) the first time a larger size runs, as a guard failure makes Inductor do."""

    def __init__(self, folder: Path) -> None:
        self.graphs = [Compiled(0, folder, "s0"), Compiled(1, folder, "s1")]
        self.live: LivePipeline | None = None

    def __call__(self, x):
        g = self.graphs[0 if x.shape[0] <= 4096 else 1]
        if g.module is None:
            g.load(self.live.capture)
        return g.module.call([x])


@pytest.fixture
def live(monkeypatch, tmp_path):
    """A pipeline recording to a log, compiled by the stand-in Inductor."""
    import torch._inductor.config as cfg

    for name in ("multi_kernel_hints", "max_autotune", "max_autotune_gemm", "max_autotune_gemm_backends",
                 "force_disable_caches"):
        monkeypatch.setattr(cfg, name, getattr(cfg, name))  # put back after the pipeline sets them
    monkeypatch.setenv("TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE", "1")
    monkeypatch.setattr(pipeline, "require_cuda", lambda: None)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    inductor = StandInInductor(tmp_path)
    monkeypatch.setattr(torch, "compile", lambda fn: inductor)
    model = tmp_path / "model.py"
    model.write_text(MODEL)
    live = LivePipeline(load_model_file(model), Options(log_path=tmp_path / "model.session.jsonl"))
    monkeypatch.setattr(live, "_inputs", lambda sizes: (torch.empty(sizes["B"], 1024, device="meta"),))
    inductor.live = live
    live.inductor = inductor
    yield live
    live.close()


def test_a_killed_recording_opens_with_every_graphs_wrapper_code_and_symbols(live):
    live.compile()
    live.run_workload()
    killed = load(live.options.log_path)  # the log as it stands, unclosed: what a kill leaves
    assert killed.truncated == KILLED
    wrappers = [g.path.read_text() for g in live.inductor.graphs]
    assert [(g.name, g.wrapper_code) for g in killed.graphs] == [("graph_0 (inference)", wrappers[0]), ("graph_1 (inference)", wrappers[1])]
    assert [(s.name, s.alias) for s in killed.symbols] == [("s0", "B"), ("s1", "B")]
    assert [s.name for s in killed.sites] == ["multi_kernel_0", "multi_kernel_0@graph_1"]
    assert killed.sites[1].variants[2].source == SOURCE.format(name="triton_tem_1_2", hint=4096)
    assert [(e.site, e.key[1][0], e.cache_hit) for e in killed.events] == [
        ("multi_kernel_0", 100, False), ("multi_kernel_0", 100, True), ("multi_kernel_0", 3000, False),
        ("multi_kernel_0", 64, False), ("multi_kernel_0@graph_1", 9000, False), ("multi_kernel_0", 100, True)]
    assert killed.events == live.session.events


def test_a_closed_recording_reads_back_as_the_session_it_saved(live, tmp_path):
    live.compile()
    live.run_workload([{"B": 200}])
    live.save(tmp_path / "model.session.json")
    live.close()
    logged, saved = load(live.options.log_path), load(tmp_path / "model.session.json")
    assert logged.truncated is None
    assert (logged.symbols, logged.graphs, logged.sites, logged.events) == (
        saved.symbols, saved.graphs, saved.sites, saved.events)
    assert saved.graphs[0].wrapper_code == live.inductor.graphs[0].path.read_text()


def test_the_compile_and_its_recompile_share_the_recordings_own_inductor_caches(live, monkeypatch):
    """Both graphs compile in one fresh cache directory, with the FX graph cache off (a hit
    would skip the hooks) and the autotune cache on (a layout both tune is benchmarked once)."""
    import os

    import torch._inductor.config as cfg

    seen = []
    load = Compiled.load

    def noting(self, capture):
        seen.append((os.environ.get("TORCHINDUCTOR_CACHE_DIR"), cfg.force_disable_caches, cfg.fx_graph_cache,
                     cfg.autotune_local_cache))
        load(self, capture)

    monkeypatch.setattr(Compiled, "load", noting)
    live.compile()
    live.run_workload()
    assert len(seen) == 2 and seen[0] == seen[1] == (live.caches.directory, False, False, True)
    assert os.environ.get("TORCHINDUCTOR_CACHE_DIR") != live.caches.directory
    assert "own" in live.session.environment.config["inductor_caches"]


def test_measuring_grabs_the_arguments_of_each_sites_last_real_call_at_each_key_and_puts_run_back(live):
    from kinspect.inductor.timing.measurements import grabbed_arguments

    live.compile()
    live.run_sizes({"B": 9000})
    with grabbed_arguments(live.recorder.sites) as grabbed:
        for b in (700, 5000, 800, 6000, 800):
            assert live.run_sizes({"B": b}).error is None
    shapes = {i: [[tuple(a.shape) for a in args] for args, _ in by_key.values()] for i, by_key in grabbed.items()}
    assert shapes == {0: [[(4096,), (700, 1024), (4096, 1024), (700, 4096)],
                          [(4096,), (800, 1024), (4096, 1024), (800, 4096)]],
                      1: [[(4096,), (5000, 1024), (4096, 1024), (5000, 4096)],
                          [(4096,), (6000, 1024), (4096, 1024), (6000, 4096)]]}
    assert [key[1] for key in grabbed[0]] == [(700, 1024), (800, 1024)]  # by the key Inductor caches on
    events = len(live.session.events)
    live.run_sizes({"B": 300})  # run as Inductor has it again: recorded, nothing grabbed
    assert {i: len(by_key) for i, by_key in grabbed.items()} == {0: 2, 1: 2}
    assert len(live.session.events) == events + 1 and live.session.events[-1].key[1] == (300, 1024)


@pytest.fixture
def gpu_clocks(monkeypatch):
    """The GPU's clocks: each variant is launched once on the grabbed arguments (the real
    launcher), then variant 1 reads 10 us, variant 2 20 us, and variant 0 fails; CUPTI
    reads 0.9 of that; the whole model 50 us (40 on the GPU), a fresh compile 70 (60)."""
    from kinspect.inductor.timing import measurements, whole_model

    def time_variants(launcher, variants, overheads=None, l2_flush=False, progress=None, cancel=None):
        for v in variants:
            launcher.launch(v)
        return {v: "RuntimeError: out of resources" if v == 0 else Timing(10.0 * v, 9.5 * v, 10.5 * v, 25)
                for v in variants}

    def time_call(fn):
        fn()
        return 50.0, 40.0

    monkeypatch.setattr(measurements, "time_variants", time_variants)
    monkeypatch.setattr(measurements, "cupti_times", lambda launcher, variants: {
        v: Timing(9.0 * v, 8.5 * v, 9.5 * v, 20) for v in variants})
    monkeypatch.setattr(measurements, "measure_peaks", lambda: {"tflops_bf16": 989.0})
    monkeypatch.setattr(measurements, "measure_overheads", lambda: {"launch_gap_us": 1.0})
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (80 << 30, 80 << 30))
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(whole_model, "time_call", time_call)
    monkeypatch.setattr(whole_model, "run_baseline", lambda model, kind, sizes, hints: {
        "kind": kind, "wall_us": 70.0, "gpu_us": 60.0})


def test_compare_times_each_variant_on_the_real_call_then_the_model_with_the_fastest_forced(live, gpu_clocks):
    live.compile()
    ran = live.inductor.graphs[0].module.RAN
    del ran[:]
    baselines = live.compare_at({"B": 3000}, ["eager"])
    key = keys_at(3000)
    assert [(m.site, m.key, m.variant, m.method, m.median_us, m.error) for m in live.session.measurements] == [
        ("multi_kernel_0", key, 0, "cuda_events", None, "RuntimeError: out of resources"),
        ("multi_kernel_0", key, 1, "cuda_events", 10.0, None), ("multi_kernel_0", key, 1, "cupti", 9.0, None),
        ("multi_kernel_0", key, 2, "cuda_events", 20.0, None), ("multi_kernel_0", key, 2, "cupti", 18.0, None)]
    v1 = live.session.measurements[1]
    assert (v1.tflops, v1.gbps) == (2516.582, 7823.36)  # 2*3000*4096*1024 flop, 19,558,400 fp32 values in 10 us
    assert live.session.environment.peaks == {"tflops_bf16": 989.0, "launch_gap_us": 1.0}
    assert [(b.kind, b.sizes, b.gpu_us, b.inspected) for b in baselines] == [
        ("hinted", {"B": 3000}, 40.0, True), ("oracle", {"B": 3000}, 40.0, True), ("eager", {"B": 3000}, 60.0, False)]
    # The measuring run (Inductor picks variant 2 at 3000), each variant launched, then the
    # model timed with Inductor's pick and with the fastest (variant 1) forced.
    assert ran == ["triton_tem_0_2", "triton_tem_0_0", "triton_tem_0_1", "triton_tem_0_2",
                   "triton_tem_0_2", "triton_tem_0_1"]
    assert [e.key[1][0] for e in live.session.events] == [100, 3000]  # timing the model records nothing
    logged = load(live.options.log_path)
    assert logged.measurements == live.session.measurements


def test_a_site_called_at_two_keys_in_one_run_is_timed_at_both(monkeypatch):
    """A multi-kernel shared by layers whose calls hand it different keys (Llama's o
    projection passes a 4-D input, q, k and v 3-D ones): each key is timed, not the last
    call's alone, or advice would find nothing timed at the key the site's tensors give."""
    import types

    from torch._inductor.codegen.multi_kernel import SizeHintMultiKernelCall

    from kinspect.inductor.timing import measurements
    from kinspect.inductor.hooks.recorder import LiveSite
    from standins import StandIn

    monkeypatch.setenv("TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE", "1")
    call = SizeHintMultiKernelCall("multi_kernel_0", {((h, h, 512), (512, 512)): StandIn(f"k{h}") for h in (8, 64)},
                                   {0: [slice(0, 2)], 1: [slice(0, 2)]})
    live = LiveSite(0, "multi_kernel_0", None, (), call)
    timed = []
    monkeypatch.setattr(measurements, "measure_call",
                        lambda name, c, args, kwargs, **kw: timed.append(c._get_shape_cache_key(*args)) or [])
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)

    def run():
        for shape in ((2, 64, 512), (2, 8, 64, 64), (2, 64, 512)):
            call.run(torch.empty(shape, device="meta"), torch.empty(512, 512, device="meta"))

    session = types.SimpleNamespace(environment=types.SimpleNamespace(peaks={}), sites=[])
    measurements.measure_sites(session, [live], run)
    assert timed == [((2, 64, 512), (512, 512)), ((2, 8, 64, 64), (512, 512))]
