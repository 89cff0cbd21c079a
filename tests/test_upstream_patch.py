"""docs/upstream/hint-per-symbol.patch applies to this machine's Inductor (torch 2.13 here,
2.11 on the H200: scripts/device_session.sh upstream) and does what hint-rows.md says, on a
copy of Inductor, without touching the installed one: at a hint each size symbol takes the
hint, within its range and the graph's guards, and every tensor of the graph that fits 32-bit
indexing at the example sizes fits at the hint's.
PyTorch-style tests of the same (docs/upstream/test_hint_per_symbol.py), of
fusion-per-hint.patch (test_fusion_per_hint.py) and of autotune-launch-latency.patch
(test_benchmark_launch_latency.py) run here too, patched and stock."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

UPSTREAM = Path(__file__).resolve().parent.parent / "docs" / "upstream"
PATCH = UPSTREAM / "hint-per-symbol.patch"

CHECK = """
import torch
from torch._inductor.graph import GraphLowering
from torch._inductor.virtualized import V
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

env = ShapeEnv()
mode = FakeTensorMode(shape_env=env)
x = mode.from_tensor(torch.empty(8, 128, 768), symbolic_context=StatelessSymbolicContext(
    dynamic_sizes=[DimDynamic.DYNAMIC, DimDynamic.DYNAMIC, DimDynamic.STATIC]))
b, s = x.shape[0].node.expr, x.shape[1].node.expr
with mode:
    h = torch.empty(x.shape[0], x.shape[1], 3072)  # an MLP's hidden activations, (B, S, 3072)


def graph(*tensors):
    fx = torch.fx.Graph()
    for i, t in enumerate(tensors):
        fx.placeholder(f"x{i}").meta["val"] = t
    fx.output(None)
    return GraphLowering(torch.fx.GraphModule({}, fx), shape_env=env)


g = graph(x)
with V.set_graph_handler(g):
    at = g.sizevars.optimization_hint_with_override
    print("rows at 64", at(b * s, 64), "stride at 64", at(768 * s, 64), "example", at(b * s, None))
    g.sizevars.check_leq(s, 512)
    print("rows at 4096 with S <= 512", at(b * s, 4096))
g = graph(x, h)
with V.set_graph_handler(g):
    at = g.sizevars.optimization_hint_with_override
    print("at 4096 with a (B, S, 3072) tensor", at(b, 4096), at(s, 4096), at(b * s, 4096))
    g.sizevars.check_leq(b, 16)
    print("after a later guard", at(b, 4096))
"""


def _patched_copy(root: Path, patch: Path) -> Path:
    """A torch under `root` whose `_inductor` is a copy with `patch` applied and everything
    else the installed one's."""
    if shutil.which("patch") is None:
        pytest.skip("needs the patch command")
    installed = Path(torch.__file__).parent
    (root / "torch").mkdir()
    for entry in installed.iterdir():
        if entry.name != "_inductor":
            (root / "torch" / entry.name).symlink_to(entry)
    shutil.copytree(installed / "_inductor", root / "torch" / "_inductor",
                    ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run(["patch", "-p1", "--forward", "-i", str(patch)], cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return root


@pytest.fixture(scope="module")
def patched(tmp_path_factory) -> Path:
    return _patched_copy(tmp_path_factory.mktemp("patched-torch"), PATCH)


@pytest.fixture(scope="module")
def fusion_patched(tmp_path_factory) -> Path:
    """fusion-per-hint.patch is made against torch 2.13's scheduler, -2.11.patch against the H200's."""
    patch = UPSTREAM / ("fusion-per-hint-2.11.patch" if torch.__version__.startswith("2.11") else "fusion-per-hint.patch")
    return _patched_copy(tmp_path_factory.mktemp("fusion-patched-torch"), patch)


def test_the_patch_applies_and_each_size_symbol_takes_the_hint_within_ranges_guards_and_32_bits(patched):
    env = {**os.environ, "PYTHONPATH": str(patched)}
    done = subprocess.run([sys.executable, "-c", CHECK], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        "rows at 64 4096 stride at 64 49152 example 1024",  # B*S at hint 64 is 64*64, as the kernel computes it
        "rows at 4096 with S <= 512 2097152",  # S stops at its bound, B takes the hint
        "at 4096 with a (B, S, 3072) tensor 1024 512 524288",  # halved together until B*S*3072 < 2**31
        "after a later guard 1024",  # decided once: the variant's kernels and tensors see one problem
    ]


def test_the_installed_inductor_is_the_stock_one():
    """The check reads the patch's effect, not Inductor's own rule: unpatched, every
    expression at a hint is the hint."""
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": ""})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[0] == "rows at 64 64 stride at 64 64 example 1024"


OWN = """
import sympy
import torch
from torch._inductor.graph import GraphLowering
from torch._inductor.virtualized import V
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

from kinspect.inductor.hooks.fixes import hint_sizes

env = ShapeEnv()
mode = FakeTensorMode(shape_env=env)
x = mode.from_tensor(torch.empty(8, 128, 768), symbolic_context=StatelessSymbolicContext(
    dynamic_sizes=[DimDynamic.DYNAMIC, DimDynamic.DYNAMIC, DimDynamic.STATIC]))
with mode:
    h = torch.empty(x.shape[0], x.shape[1], 3072)
fx = torch.fx.Graph()
for i, t in enumerate((x, h)):
    fx.placeholder(f"x{i}").meta["val"] = t
fx.output(None)
g = GraphLowering(torch.fx.GraphModule({}, fx), shape_env=env)
with V.set_graph_handler(g):
    g.sizevars.optimization_hint_with_override(x.shape[0].node.expr * x.shape[1].node.expr, 256)  # a kernel's ask
    names = {str(x.shape[0].node.expr): "B", str(x.shape[1].node.expr): "S"}
    for a in hint_sizes.inductors_own(g, [64, 256, 4096]):
        print(a.text(names))
    for h in (64, 4096):  # what the benchmark-tensor check holds a kernel's reads to
        print(h, [(names[n], v) for n, v in hint_sizes.named(g.sizevars, h)])
apart = GraphLowering(torch.fx.GraphModule({}, fx), shape_env=env)
with V.set_graph_handler(apart):  # B != S: no one size runs it
    apart.sizevars.check(sympy.Ne(x.shape[0].node.expr, x.shape[1].node.expr))
    for a in hint_sizes.inductors_own(apart, [64]):
        print(a.text(names))
print("end")
"""


@pytest.mark.parametrize("which", ["patched", "stock"])
def test_a_session_records_the_sizes_an_inductor_that_evaluates_per_symbol_gave_each_hint(patched, which):
    """kinspect's capture asks the graph's own allocator what it gave each size symbol at
    each hint: on the patched Inductor the session then states the problem its kernels,
    keys and tensors were tuned on (and the sizes findings stay silent), on stock Inductor
    it records nothing and they speak."""
    root = Path(__file__).resolve().parent.parent
    path = f"{patched}{os.pathsep}{root}" if which == "patched" else str(root)
    done = subprocess.run([sys.executable, "-c", OWN], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": path})
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    if which == "stock":
        assert lines == ["64 []", "4096 []", "end"]
        return
    assert lines == [
        "hint 64: B=64 S=64", "hint 256: B=256 S=256",
        "hint 4096: B=512 S=512 (lowered from 4096 by this Inductor's own rule)",
        "64 []", "4096 [('B', 512), ('S', 512)]",
        "hint 64: B=64 S=128 (S held at the example sizes, the rest at the hint by this Inductor's own rule)", "end"]


LOSS = """
def loss(logits, labels, vocab_size):  # transformers' ForCausalLMLoss
    labels = torch.nn.functional.pad(labels, (0, 1), value=-100)[..., 1:].contiguous()
    return torch.nn.functional.cross_entropy(logits.float().view(-1, vocab_size), labels.view(-1), ignore_index=-100)


logits = torch.randn(4, 64, 8192, requires_grad=True)
torch.compile(loss, dynamic=True)(logits, torch.randint(0, 8192, (4, 64)), 8192).backward()
"""


def test_the_probe_prints_what_the_patched_inductor_tunes_each_hint_at_for_every_graph(patched, tmp_path):
    """docs/upstream/hint_sizes_probe.py, on the CPU: a Linear compiled with a dynamic batch
    and a (B, 3072) hidden activation; at hint 4096 every tensor fits 32-bit indexing, at a
    hint of 2**20 the hidden one would not, so the batch is halved until it does. Then a
    causal-LM loss whose backward graph guards its vocabulary above 4096 and equal to the
    logits' width, and its rows at most 4096: no one size per symbol holds, so the vocabulary
    and the width stay at their example, 8192, while the batch and the sequence take the hint
    (the batch held at its example 4 too where the rows would pass 4096; at 2**20 the
    vocabulary takes the hint and the rows keep their example). On stock Inductor
    the probe refuses in one line, and with --kinspect prints the sizes kinspect's
    --one-size-per-symbol gives the same graphs: the same."""
    program = tmp_path / "linear.py"
    program.write_text("import torch\n"
                       "m = torch.nn.Sequential(torch.nn.Linear(64, 3072), torch.nn.ReLU(), torch.nn.Linear(3072, 8))\n"
                       "f = torch.compile(m)\n"
                       "with torch.no_grad():\n"
                       "    for b in (3, 5):\n"
                       "        x = torch.randn(b, 64)\n"
                       "        torch._dynamo.mark_dynamic(x, 0)\n"
                       "        f(x)\n" + LOSS)
    probe = Path(__file__).resolve().parent.parent / "docs" / "upstream" / "hint_sizes_probe.py"
    done = subprocess.run([sys.executable, str(probe), "--hints", f"64,4096,{2**20}", str(program)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(patched), "TORCHINDUCTOR_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith(("graph", "  hint"))]
    assert lines[0].startswith("graph 0: ") and len(lines) == 12, done.stdout  # the Linear, the loss and its backward
    assert re.fullmatch(r"  hint 64: s\d+=64 \[L\['args'\]\[0\]\.size\(\)\[0\], example 3\]", lines[1]), lines[1]
    assert re.fullmatch(r"  hint 4096: s\d+=4096 \[.*\]", lines[2]), lines[2]
    assert re.fullmatch(r"  hint 1048576: s\d+=524288 \(lowered\) \[.*\]", lines[3]), lines[3]  # 3072 * 2**19 < 2**31

    def sizes(line):  # (example, size at the hint) of each symbol
        return sorted((int(ex), int(v)) for v, ex in re.findall(r"=(-?\d+)(?: \(lowered\))? \[.*?, example (-?\d+)\]", line))

    assert lines[8].startswith("graph 2: ")
    assert [sizes(line) for line in lines[9:]] == [
        [(4, 64), (64, 64), (8192, 8192), (8192, 8192)],  # 64 x 64 rows: within 4096
        [(4, 4), (64, 1024), (8192, 8192), (8192, 8192)],  # 4 x 1024 rows
        # past 4096 the vocabulary and the width may take the hint, the rows keep their example
        [(4, 4), (64, 64), (8192, 2**20), (8192, 2**20)]]
    stock = subprocess.run([sys.executable, str(probe), str(program)], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONPATH": ""})
    assert stock.returncode == 1 and stock.stderr.startswith("hint_sizes_probe.py: this torch's Inductor is not patched")
    # kinspect's --one-size-per-symbol on the stock Inductor decides the same sizes
    root = Path(__file__).resolve().parent.parent
    ours = subprocess.run([sys.executable, str(probe), "--kinspect", "--hints", f"64,4096,{2**20}", str(program)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(root), "TORCHINDUCTOR_CACHE_DIR": str(tmp_path)})
    assert ours.returncode == 0, ours.stderr[-3000:]
    assert [line for line in ours.stdout.splitlines() if line.startswith("  hint")] == [
        line for line in lines if line.startswith("  hint")]


def _pytorch_style(test: str, torch_root: str) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("expecttest")
    # PyTorch's runner writes XML reports through xmlrunner whenever CI is set, as it is on ours.
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    # The patched torch first, then what the caller's path holds (on the GPU machine, the
    # carried wheels' expecttest).
    path = os.pathsep.join(p for p in (torch_root, env.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, str(UPSTREAM / test)], capture_output=True, text=True, timeout=240,
                          env={**env, "PYTHONPATH": path, "PYTORCH_PRINT_REPRO_ON_FAILURE": "0"})


def test_with_the_fusion_patch_each_hint_picks_its_fused_choice_among_its_own(fusion_patched):
    """docs/upstream/test_fusion_per_hint.py, as PyTorch's CI would run it, drives Inductor's
    own `Scheduler.speedup_by_fusion` with stand-in kernels (its GPU test skips here)."""
    done = _pytorch_style("test_fusion_per_hint.py", str(fusion_patched))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "OK" in done.stderr.splitlines()[-1]


def test_stock_inductor_picks_a_smaller_hints_choice_at_every_later_hint():
    """The same test fails on the installed Inductor, where it should: at hint 256 the choice
    benchmarked at hint 64's sizes wins."""
    done = _pytorch_style("test_fusion_per_hint.py", "")
    assert done.returncode != 0
    assert "'c1_at_64' != 'c1_at_256'" in done.stderr


@pytest.mark.parametrize("which", ["patched", "stock"])
def test_the_pytorch_style_hint_per_symbol_tests_pass_patched_and_fail_stock(patched, which):
    done = _pytorch_style("test_hint_per_symbol.py", str(patched) if which == "patched" else "")
    last = done.stderr.strip().splitlines()[-1]
    if which == "patched":
        assert done.returncode == 0 and last.startswith("OK"), done.stderr[-3000:]
    else:
        assert done.returncode != 0 and last.startswith("FAILED"), done.stderr[-3000:]


def test_the_grid_patch_sizes_a_hints_fused_benchmark_grid_at_the_hint(tmp_path):
    """docs/upstream/benchmark-grid-per-hint.patch (torch 2.13; -2.11.patch for the GPU's): a
    hint-4096 template kernel's benchmark grid, B*S rows with B and S 8 and 16 at the example,
    is the hint's 4,096 rows patched and the example's 128 stock."""
    name = "benchmark-grid-per-hint-2.11.patch" if torch.__version__.startswith("2.11") else "benchmark-grid-per-hint.patch"
    patched = _patched_copy(tmp_path, UPSTREAM / name)
    tests = str(Path(__file__).parent)  # template_grid
    grids = [subprocess.run([sys.executable, "-m", "template_grid"], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (path, tests)))})
             for path in (str(patched), "")]
    assert [g.returncode for g in grids] == [0, 0], grids[0].stderr[-3000:] + grids[1].stderr[-3000:]
    assert [g.stdout.strip() for g in grids] == ["['1536', '1', '1']", "['48', '1', '1']"]


@pytest.mark.parametrize("which", ["patched", "stock"])
def test_the_launch_latency_patch_times_a_slow_hosts_benchmark_by_the_kernel(tmp_path, which):
    """docs/upstream/test_benchmark_launch_latency.py (autotune-launch-latency.patch, -2.11.patch
    for the GPU's torch) drives Inductor's own `InductorBenchmarker.benchmark_gpu` on a
    simulated GPU: patched, a 4 µs kernel launched in 30 µs after a flush the host queues
    slower than the GPU runs it reads 4 µs; stock, 18 µs."""
    name = "autotune-launch-latency-2.11.patch" if torch.__version__.startswith("2.11") else "autotune-launch-latency.patch"
    root = str(_patched_copy(tmp_path, UPSTREAM / name)) if which == "patched" else ""
    done = _pytorch_style("test_benchmark_launch_latency.py", root)
    last = done.stderr.strip().splitlines()[-1]
    if which == "patched":
        assert done.returncode == 0 and last.startswith("OK"), done.stderr[-3000:]
    else:
        assert done.returncode != 0 and "18.0 != 4.0" in done.stderr, done.stderr[-3000:]
