"""Repeated layers compiled once (`--compile-layers-once`): which blocks are marked, that
Inductor then lowers a block once and every layer calls it, and that each layer's call is
still a call site of its own, named by its module, from the capture to the recorded events."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch._inductor.codegen.multi_kernel")

from torch import nn  # noqa: E402

from kinspect.core.export.report_md import render  # noqa: E402
from kinspect.core.session.compile_changes import LAYERS_KEY, BlockGroup, CompileChanges, layers_config  # noqa: E402
from kinspect.core.session.model import Environment, Session  # noqa: E402
from kinspect.core.store import save  # noqa: E402
from kinspect.core.source import RecordedSource  # noqa: E402
from kinspect.inductor.hooks.capture import CompileCapture, GraphRecord, SiteRecord  # noqa: E402
from kinspect.inductor.hooks.layers_once import compiled_once, repeated_blocks  # noqa: E402
from kinspect.inductor.hooks.origins import Origin  # noqa: E402
from kinspect.inductor.hooks.recorder import Recorder  # noqa: E402
from kinspect.core.inductor_code.calls import dispatch_lines  # noqa: E402
from kinspect.inductor.recording.translate import sites  # noqa: E402


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(16, 32, bias=False)
        self.proj = nn.Linear(32, 16, bias=False)

    def forward(self, x):
        return x + self.proj(self.fc(x))


class Heads(nn.Module):
    """A block holding a list of Linears of its own: compiled with its block, never marked."""

    def __init__(self) -> None:
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(16, 16, bias=False) for _ in range(2)])
        self.mix = nn.Linear(16, 16, bias=False)

    def forward(self, x):
        return self.mix(sum(h(x) for h in self.heads))


class Toy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.h = nn.ModuleList([Block() for _ in range(3)])
        self.extra = nn.Sequential(Heads(), Heads())
        self.out = nn.ModuleList([nn.Linear(16, 4, bias=False), nn.Linear(16, 4, bias=False)])
        self.mixed = nn.ModuleList([Block(), Heads()])

    def forward(self, x):
        for b in self.h:
            x = b(x)
        return self.out[0](self.extra(x))


def test_the_blocks_marked_are_lists_of_one_block_class_outermost_first():
    found = [b.group for b in repeated_blocks(Toy())]
    assert found == [BlockGroup("h", "Block", 3), BlockGroup("extra", "Heads", 2)]
    assert [g.text for g in found] == ["h (3 × Block)", "extra (2 × Heads)"]
    assert repeated_blocks(lambda x: x) == []  # a function model has no layers


def test_inductor_compiles_a_marked_block_once_and_every_layer_calls_it(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    model = Toy().eval()
    x = torch.randn(5, 16)
    torch._dynamo.mark_dynamic(x, 0)
    own, heads_own = Block.__dict__["forward"], Heads.__dict__["forward"]
    with compiled_once(model) as groups, CompileCapture() as cap, torch.no_grad():
        assert Block.forward is not own
        compiled = torch.compile(model)(x)
    assert Block.__dict__["forward"] is own and Heads.__dict__["forward"] is heads_own
    assert [g.text for g in groups] == ["h (3 × Block)", "extra (2 × Heads)"]
    with torch.no_grad():
        assert torch.allclose(compiled, model(x), atol=1e-5)
    g = cap.graphs[0]
    region = [name for name in g.regions if g.regions[name][0].module == "h.0"]
    assert len(region) == 1
    assert [o.module for o in g.regions[region[0]]] == ["h.0", "h.1", "h.2"]
    code = open(g.wrapper_path).read()
    assert code.count(f"def {region[0]}(") == 1  # lowered once ...
    assert code.count(f"{region[0]}({region[0]}_args)") == 3  # ... called per layer
    torch._dynamo.reset()


REGION_WRAPPER = textwrap.dedent("""\
    from torch._inductor.codegen.multi_kernel import SizeHintMultiKernelCall
    from standins import StandIn

    ran = []
    multi_kernel_0 = SizeHintMultiKernelCall('multi_kernel_0', {
        ((64, 16), (64, 32)): StandIn('k0', ran),
        ((4096, 16), (4096, 32)): StandIn('k1', ran),
    }, {0: [slice(0, 2)], 1: [slice(0, 2)]})


    def repeated_subgraph0(args):
        x, out = args
        multi_kernel_0.run(x, out)
        return (out,)


    class Runner:
        def call(self, x0, out0, x1, out1, x2, out2):
            repeated_subgraph0_args = [x0, out0]
            buf0 = repeated_subgraph0(repeated_subgraph0_args)
            repeated_subgraph0_args = [x1, out1]
            buf1 = repeated_subgraph0(repeated_subgraph0_args)
            repeated_subgraph0_args = [x2, out2]
            buf2 = repeated_subgraph0(repeated_subgraph0_args)
""")


def _graph() -> GraphRecord:
    g = GraphRecord(0, "inference", None)
    keys = [((h, 16), (h, 32)) for h in (64, 4096)]
    g.sites = [SiteRecord("multi_kernel_0", "repeated_subgraph0_buf0", "mm",
                          [("x", "input", (16,)), ("out", "output", (32,))], dict(zip((64, 4096), keys)),
                          ["k0", "k1"], keys, origin=Origin("h.0.fc", "Linear", "/m/toy.py", 36, "self.fc(x)"))]
    g.regions = {"repeated_subgraph0": [Origin(f"h.{i}", "Block") for i in range(3)]}
    return g


def test_each_layers_call_of_a_region_is_a_call_site_named_by_its_layer():
    site, = sites(_graph(), REGION_WRAPPER, lambda name: [])
    assert [c.label for c in site.call_sites] == ["h.0.fc", "h.1.fc", "h.2.fc"]
    assert [c.line for c in site.call_sites] == [20, 22, 24]  # the lines that call the region
    assert all(c.call == "multi_kernel_0.run(x, out)" and c.where == "toy.py:36" for c in site.call_sites)
    assert dispatch_lines(REGION_WRAPPER, "multi_kernel_0") == (
        [(20, "multi_kernel_0.run(x, out)"), (22, "multi_kernel_0.run(x, out)"), (24, "multi_kernel_0.run(x, out)")],
        frozenset({"repeated_subgraph0"}))


def test_events_inside_a_region_name_the_layer_that_called_it(tmp_path, monkeypatch):
    """Through the real SizeHintMultiKernelCall: the region's one `.run` line dispatches for
    three layers, and each event is told by the line that called the region."""
    monkeypatch.setenv("TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE", "1")
    path = tmp_path / "output_code.py"
    path.write_text(REGION_WRAPPER)
    site, = sites(_graph(), REGION_WRAPPER, lambda name: [])
    with Recorder() as rec:
        spec = importlib.util.spec_from_file_location("kinspect_test_region_wrapper", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    for b in (100, 3000):
        t = [torch.empty(b, 16, device="meta"), torch.empty(b, 32, device="meta")]
        module.Runner().call(*t, *t, *t)
    lines = {c.line: c.index for c in site.call_sites}
    events = rec.dispatch_events(call_site=lambda name, line: lines.get(line))
    assert [(e.call_site, e.cache_hit, e.picked) for e in events] == [
        (0, False, 0), (1, True, 0), (2, True, 0),  # layer h.0 decides for the three
        (0, False, 1), (1, True, 1), (2, True, 1),
    ]
    assert module.ran == ["k0"] * 3 + ["k1"] * 3


def test_every_view_of_a_session_says_its_layers_were_compiled_once(tmp_path):
    config = layers_config([BlockGroup("h", "GPT2Block", 12)])
    assert config == {LAYERS_KEY: ["h (12 × GPT2Block)"]}
    session = Session(Environment(created="2026-01-01T00:00:00Z", gpu="NVIDIA H200", torch="2.11.0", config=config))
    said = "Repeated layers were compiled once by kinspect (--compile-layers-once): the blocks of h (12 × GPT2Block)"
    save(session, tmp_path / "s.json")
    env = {**{k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}, "NO_COLOR": "1"}
    explained = subprocess.run([sys.executable, "-m", "kinspect", "explain", str(tmp_path / "s.json")], env=env,
                               capture_output=True, text=True, timeout=60)
    assert said in " ".join(explained.stdout.split()), explained.stderr
    assert said in render(session)
    assert CompileChanges.stated(config).banner() == "repeated layers compiled once by kinspect (--compile-layers-once)"
    assert "repeated layers compiled once by kinspect" in RecordedSource(session).banner()
    assert CompileChanges.stated({}).banner() is None and "compiled once" not in RecordedSource(Session(Environment(created="x"))).banner()


def test_the_live_inspectors_banner_says_what_was_asked_before_the_compile_says_what_it_did():
    from pathlib import Path

    from kinspect.inductor.recording.live_source import LiveSource
    from kinspect.inductor.recording.pipeline import Options

    model = Path(__file__).resolve().parent.parent / "samples" / "linear.py"
    asked = LiveSource(model, Options(changes=CompileChanges(fit_benchmark_tensors=True, layers_once=True))).banner()
    assert asked.endswith("· Inductor's hint autotuning was patched by kinspect (--fit-benchmark-tensors) · repeated "
                          "layers compiled once by kinspect (--compile-layers-once)")
    assert "kinspect (--" not in LiveSource(model, Options()).banner()


@pytest.mark.parametrize("changes", [CompileChanges(layers_once=True), CompileChanges(fit_benchmark_tensors=True),
                                     CompileChanges(True, True, True, True), CompileChanges(one_size_per_symbol=True),
                                     CompileChanges(fusion_per_hint=True),
                                     CompileChanges()], ids=lambda c: "+".join(c.flags()) or "none")
def test_a_fresh_compiles_child_is_told_every_switch_and_reads_them_back(tmp_path, monkeypatch, changes):
    """advise's and compare's fresh compiles run `python -m kinspect.inductor.jobs.recompile` in a
    process of their own: the flags it is started with are the ones it compiles with."""
    from kinspect.inductor.jobs import recompile

    started = []
    monkeypatch.setattr(recompile.subprocess, "run", lambda cmd, **kw: started.append(cmd) or
                        subprocess.CompletedProcess(cmd, 1, "", "no GPU here"))
    recompile.compile_afresh("m.py", [64], [{"B": 8}], "verify", tmp_path, lambda text: None, changes=changes)
    child = []
    monkeypatch.setattr(recompile, "_child", lambda *a: child.append(a))
    assert recompile._main(started[0][3:]) == 0
    assert child[0][-1] == changes
    assert child[0][:4] == ("m.py", [64], started[0][5], [{"B": 8}])
