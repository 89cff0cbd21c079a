"""The real `LivePipeline` on the CPU, with stand-ins only for what needs a GPU.

`torch.compile` is replaced by a stand-in Inductor: on its first call at a new size range
it hands the capture a graph record (what the capture's hooks record of a compile) and
loads an output-code module written the way Inductor writes one (kernels through
`async_compile.triton(name, source)`, a real `SizeHintMultiKernelCall` at its top level,
a `call` that runs it), on meta tensors. The CUDA check, the input builder's device and
`torch.cuda.synchronize` are the other stand-ins; compile, run, the session's assembly,
the recorder and the crash-safe log are the pipeline's own code.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
sympy = pytest.importorskip("sympy")

from torch._inductor.virtualized import V  # noqa: E402

from kinspect.core.store import load  # noqa: E402
from kinspect.inductor import pipeline  # noqa: E402
from kinspect.inductor.capture import GraphRecord, SiteRecord  # noqa: E402
from kinspect.inductor.modelfile import load_model_file  # noqa: E402
from kinspect.inductor.pipeline import LivePipeline, Options  # noqa: E402

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


class _Kernel:
    def __init__(self, name):
        self.inductor_meta = {"kernel_name": name}

    def run(self, *args, **kwargs):
        pass


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


def test_measuring_grabs_the_arguments_of_the_sites_real_call_and_puts_run_back(live):
    from kinspect.inductor.measurements import grabbed_arguments

    live.compile()
    live.run_sizes({"B": 9000})
    sites = live.recorder.sites
    with grabbed_arguments(sites[1:]) as grabbed:
        assert live.run_sizes({"B": 700}).error is None
        live.run_sizes({"B": 5000})
    assert {i: [tuple(a.shape) for a in args] for i, (args, _) in grabbed.items()} == {
        1: [(4096,), (5000, 1024), (4096, 1024), (5000, 4096)]}
    events = len(live.session.events)
    live.run_sizes({"B": 6000})  # run as Inductor has it again: recorded, nothing grabbed
    assert [tuple(a.shape) for a in grabbed[1][0]][1] == (5000, 1024)
    assert len(live.session.events) == events + 1 and live.session.events[-1].key[1] == (6000, 1024)
