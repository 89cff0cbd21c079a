"""`kinspect run` through the real command line on plain programs (tests/programs), which
dispatch through Inductor's real SizeHintMultiKernelCall with stand-in kernels that log
which of them ran: the program must behave as under `python`, and the session must hold
every dispatch as Inductor made it, however the program ends.

GPU run of the generation sample with `--measure`: tests/gpu/test_gpu_run.py.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kinspect.core.session.format.log import FLUSH_S
from kinspect.commands.run import without_gpu
from kinspect.core.store import load, read

REPO = Path(__file__).resolve().parent.parent
PROGRAMS = Path(__file__).resolve().parent / "programs"

torch = pytest.importorskip("torch")


@pytest.fixture
def here(tmp_path):
    for name in ("serve.py", "standin.py", "pointwise.py", "ranks.py", "layers.py", "dying_compile.py", "pkg"):
        src = PROGRAMS / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    return tmp_path


def kinspect(cwd: Path, *args: str, ending: str = "", stdin: str = "hello\n", **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    environ.update(PYTHONPATH=str(REPO), ENDING=ending, TORCHINDUCTOR_CACHE_DIR=str(cwd / "inductor-cache"), **env)
    return subprocess.run([sys.executable, "-m", "kinspect", *args], cwd=cwd, env=environ, input=stdin,
                          capture_output=True, text=True, timeout=300)


def ran(stdout: str) -> list[int]:
    """The variants the stand-in kernels say ran, in order."""
    line = next(x for x in stdout.splitlines() if x.startswith("ran"))
    return [int(v) for v in line.split()[1:]]


def dispatches(session) -> list[tuple[int, bool, int, int]]:
    return [(e.key[0][0], e.cache_hit, e.picked, e.predicted) for e in session.events]


SIZES = ("100", "100", "3000", "7", "100")


def test_the_program_runs_as_under_python_and_every_dispatch_is_recorded(here):
    done = kinspect(here, "run", "--measure", "serve.py", *SIZES)
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[:2] == [f"argv={list(SIZES)} name=__main__ path0=True", "stdin='hello'"]
    assert all(not line.startswith("kinspect") for line in out)  # kinspect's lines are on stderr
    assert ran(done.stdout) == [0, 0, 2, 0, 0]
    assert done.stderr.splitlines() == [
        "kinspect: " + without_gpu(False, True),  # up front: what runs here and what does not
        "kinspect: --measure needs a CUDA GPU, and none is available here: recorded without timings",
        "kinspect: saved serve.session.json: 1 sites, 5 dispatches, 0 measurements, 1 findings",
    ]
    s = load(here / "serve.session.json")
    assert dispatches(s) == [(100, False, 0, 0), (100, True, 0, 0), (3000, False, 2, 2), (7, False, 0, 0),
                             (100, True, 0, 0)]
    (site,) = s.sites
    assert [(v.hint, v.key, v.kernel_name) for v in site.variants] == [
        (h, ((h, 1024), (h, 4096)), f"triton_tem_fused_addmm_{i}") for i, h in enumerate((64, 256, 4096))]
    assert site.variants[2].source.startswith("@triton.jit\ndef triton_tem_fused_addmm_2(")  # from the loaded kernel
    assert site.op == "addmm" and [t.text() for t in site.tensors] == ["(t0_0, 1024)", "(t1_0, 4096)"]
    assert [c.call for c in site.call_sites] == ["multi_kernel_0.run(torch.empty(batch, 1024, device=\"meta\"), "
                                                  "torch.empty(batch, 4096, device=\"meta\"))"]
    (cached,) = [f for f in s.findings if f.kind == "from-cache"]
    assert "no compile ran in this process, so its autotune tables, hints and symbolic sizes were not seen" in cached.message
    assert s.model.path == "serve.py"
    assert load(here / "serve.session.jsonl").events == s.events  # the crash-safe log says the same


@pytest.mark.parametrize("ending, status, said", [
    ("raise", 1, "the program raised ValueError"),
    ("exit3", 3, "the program exited with status 3"),
    ("interrupt", 130, "interrupted"),
])
def test_a_program_that_raises_exits_or_is_interrupted_keeps_its_status_and_its_session(here, ending, status, said):
    done = kinspect(here, "run", "serve.py", *SIZES, ending=ending)
    assert done.returncode == status, done.stderr
    assert f"kinspect: saved serve.session.json ({said}): 1 sites, 5 dispatches" in done.stderr
    if ending == "raise":  # Python's traceback, of the program's frames only
        assert done.stderr.split("\n", 1)[1].startswith('Traceback (most recent call last):\n  File "serve.py", line ')
        assert "ValueError: request too large\n" in done.stderr and "kinspect/" not in done.stderr.split("kinspect:")[0]
    assert dispatches(load(here / "serve.session.json"))[2:4] == [(3000, False, 2, 2), (7, False, 0, 0)]


def test_a_killed_program_leaves_a_log_that_opens_with_every_dispatch_older_than_the_flush_interval(here):
    done = kinspect(here, "run", "-o", "killed.session.json", "serve.py", *SIZES, ending="kill",
                    KILL_AFTER_S=str(2 * FLUSH_S))
    assert done.returncode == -9
    assert not (here / "killed.session.json").exists()
    s = load(here / "killed.session.jsonl")
    assert s.truncated == "the recording stopped before its end record (was it killed?)"
    assert [e.picked for e in s.events] == ran(done.stdout) == [0, 0, 2, 0, 0]
    assert dispatches(s)[2] == (3000, False, 2, 2) and [v.hint for v in s.sites[0].variants] == [64, 256, 4096]


def test_a_program_terminated_by_sigterm_dies_of_it_and_its_log_holds_every_dispatch(here):
    done = kinspect(here, "run", "-o", "termed.session.json", "serve.py", *SIZES, ending="term")
    assert done.returncode == -signal.SIGTERM  # as under python: the signal's death, not an exit
    s = load(here / "termed.session.jsonl")  # written at the signal, not a flush interval later
    assert s.truncated is not None and [e.picked for e in s.events] == ran(done.stdout) == [0, 0, 2, 0, 0]


def test_a_module_runs_with_dash_m_and_saves_beside_the_working_directory(here):
    done = kinspect(here, "run", "-m", "pkg.serve", "--not-kinspects", "64")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "module argv0=serve.py path0=True"
    assert "argv=['--not-kinspects', '64']" in done.stdout
    s = load(here / "pkg.serve.session.json")
    assert s.model.path == "-m pkg.serve" and dispatches(s) == [(64, False, 0, 0)]


def test_a_run_replaces_no_session_it_was_not_told_to(here):
    """The README's `kinspect run --hints 64,256,4096 samples/generate.py` where the program
    records nothing (without transformers, as on the CPU machine) keeps the shipped
    recording; a run that records something beside one takes a free name."""
    shipped = (REPO / "samples" / "linear.session.json").read_bytes()
    (here / "generate.py").write_text("raise ModuleNotFoundError(\"No module named 'transformers'\")\n")
    for name in ("generate.session.json", "serve.session.json"):
        (here / name).write_bytes(shipped)
    done = kinspect(here, "run", "--hints", "64,256,4096", "generate.py")
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == ("kinspect: generate.session.json is there: recording into "
                                           "generate.1.session.json (-o generate.session.json replaces it)")
    assert ("kinspect: recorded nothing (the program raised ModuleNotFoundError): no session saved, "
            "generate.session.json is as it was") in done.stderr.splitlines()
    assert (here / "generate.session.json").read_bytes() == shipped
    assert sorted(p.name for p in here.glob("generate*")) == ["generate.py", "generate.session.json"]
    done = kinspect(here, "run", "serve.py", "100")
    assert done.returncode == 0, done.stderr
    assert "kinspect: saved serve.1.session.json: 1 sites, 1 dispatches, 0 measurements, 1 findings" in done.stderr
    assert (here / "serve.session.json").read_bytes() == shipped
    assert [e.key[0][0] for e in load(here / "serve.1.session.json").events] == [100]
    assert load(here / "serve.1.session.jsonl").events == load(here / "serve.1.session.json").events


def test_a_program_that_is_not_there_is_one_line(here):
    assert kinspect(here, "run", "nothere.py").stderr == "kinspect: error: 'nothere.py': no such file\n"
    done = kinspect(here, "run", "-m", "pkg.nothere")
    assert done.returncode == 2 and done.stderr.startswith("kinspect: error: no module named 'pkg.nothere'")
    (here / "taken.session.json").mkdir()
    done = kinspect(here, "run", "-o", "taken.session.json", "serve.py", "100")
    assert (done.returncode, done.stdout) == (2, "")  # refused before the program ran
    assert done.stderr == "kinspect: error: taken.session.json: is a directory; give a file name\n"
    assert not list(here.glob("*.session.json?*")) and (here / "taken.session.json").is_dir()


def test_a_compile_without_a_size_hint_multi_kernel_gets_a_session_and_the_reason(here):
    done = kinspect(here, "run", "--hints", "64,256", "pointwise.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("8 ")
    assert done.stderr.splitlines() == [
        "kinspect: " + without_gpu(True, False),
        "kinspect: the program sets no multi_kernel_hints: compiling with [64, 256], max-autotune and Triton GEMMs (--hints)",
        "kinspect: compiled graph_0 (inference) in 0 s: 0 size-hint multi-kernels, 0 GEMM templates autotuned at the hints",
        "kinspect: saved pointwise.session.json: 0 sites, 0 dispatches, 0 measurements, 1 findings",
        "kinspect: no size-hint multi-kernel: no GEMM Inductor could render as a Triton template (no mm/addmm/bmm here)",
    ]
    s = load(here / "pointwise.session.json")
    assert [g.name for g in s.graphs] == ["graph_0 (inference)"] and "def call(" in s.graphs[0].wrapper_code
    assert [(x.name, x.input, x.dim) for x in s.symbols] == [(s.symbols[0].name, "x", 0)]
    assert [x.alias for x in read(here / "pointwise.session.json").symbols] == ["x_0"]  # the file names it
    assert s.environment.config["multi_kernel_hints"] == [64, 256]
    assert "layers_compiled_once" not in s.environment.config  # said only where the switch was given


@pytest.mark.parametrize("first", ["import torch._dynamo", "import torch._inductor.config",
                                   "from torch._dynamo import config"])
def test_a_program_that_imports_dynamo_or_inductor_before_compiling_is_recorded(here, first):
    """Dynamo's import imports Inductor half-way through: kinspect's hooks, put in then, died of
    a circular import in every program that imports `torch._dynamo` itself (and torchvision's)."""
    (here / "first.py").write_text(f"import torch\n{first}\n" + (here / "pointwise.py").read_text())
    done = kinspect(here, "run", "--hints", "64,256", "first.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("8 ")
    assert "kinspect: compiled graph_0 (inference)" in done.stderr
    assert [g.name for g in load(here / "first.session.json").graphs] == ["graph_0 (inference)"]


@pytest.mark.skipif(not torch.distributed.is_available() or not torch.distributed.is_gloo_available(),
                    reason="this torch has no gloo backend")
def test_under_torchrun_each_rank_records_its_own_session(here):
    environ = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    environ.update(PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                           "-m", "kinspect", "run", "ranks.py"], cwd=here, env=environ, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    # the two ranks write to one pipe, so one's line can land inside the other's
    assert sorted(re.findall(r"rank \d: \d+ requests in all", done.stdout)) == [
        "rank 0: 6 requests in all", "rank 1: 6 requests in all"]
    sessions = [load(here / f"ranks.rank{r}.session.json") for r in (0, 1)]
    assert [(s.environment.rank, s.environment.world_size) for s in sessions] == [(0, 2), (1, 2)]
    assert [[e.key[0][0] for e in s.events] for s in sessions] == [[64, 100, 1000], [128, 200, 2000]]
    assert [[e.picked for e in s.events] for s in sessions] == [[0, 0, 1], [0, 1, 2]]
    assert [[e.step for e in s.events] for s in sessions] == [[0, 1, 2], [0, 1, 2]]  # a step per compiled call
    assert "kinspect: rank 1: saved ranks.rank1.session.json: 1 sites, 3 dispatches" in done.stderr
    merged = kinspect(here, "explain", ".", COLUMNS="200")
    assert merged.returncode == 0, merged.stderr
    rows = [[c.strip() for c in line.split("│")[1:5]] for line in merged.stdout.splitlines() if "t0_0=" in line]
    assert rows == [  # step, rank, the sizes it ran, its pick: the ranks side by side
        ["0", "0", "t0_0=64 t1_0=64", "v0"], ["0", "1", "t0_0=128 t1_0=128", "v0"],
        ["1", "0", "t0_0=100 t1_0=100", "v0"], ["1", "1", "t0_0=200 t1_0=200", "v1"],
        ["2", "0", "t0_0=1000 t1_0=1000", "v1"], ["2", "1", "t0_0=2000 t1_0=2000", "v2"]]


def test_the_python_api_records_a_block_and_importing_kinspect_imports_no_torch(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE", "1")
    cheap = subprocess.run([sys.executable, "-c", "import sys, kinspect; print('torch' in sys.modules)"],
                           env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=60)
    assert cheap.stdout == "False\n"
    import kinspect
    from torch._inductor.codegen.multi_kernel import SizeHintMultiKernelCall
    from standins import StandIn

    def args(b):
        return torch.empty(b, 1024, device="meta"), torch.empty(b, 4096, device="meta")

    outside = SizeHintMultiKernelCall("multi_kernel_0", {((64, 1024), (64, 4096)): StandIn("k0")}, {0: [slice(0, 2)]})
    with kinspect.recording(tmp_path / "block.session.json") as rec:
        call = SizeHintMultiKernelCall("multi_kernel_0", {((h, 1024), (h, 4096)): StandIn(f"k{i}")
                                                          for i, h in enumerate((64, 4096))}, {0: [slice(0, 2)], 1: [slice(0, 2)]})
        call.run(*args(5000))
        outside.run(*args(100))  # made before the block: not recorded
    call.run(*args(5000))  # after the block: not recorded
    assert [(e.key[0][0], e.picked) for e in load(tmp_path / "block.session.json").events] == [(5000, 1)]
    assert rec.session.sites[0].name == "multi_kernel_0"

    @kinspect.recording(tmp_path / "each.session.json")
    def serve(b):
        fresh = SizeHintMultiKernelCall("multi_kernel_0", {((64, 1024), (64, 4096)): StandIn("k0")}, {0: [slice(0, 2)]})
        fresh.run(*args(b))

    serve(3)
    serve(9)  # each call a session of its own
    assert [e.key[0][0] for e in load(tmp_path / "each.session.json").events] == [9]


ILLEGAL = "CUDA error: an illegal memory access was encountered"


def test_a_compile_that_dies_after_another_graph_made_a_site_is_named_with_its_op_and_hint(tmp_path, monkeypatch,
                                                                                            capsys):
    """A 2-layer Llama under `kinspect run --compile-layers-once` on the H200: one graph made a
    site, then the block's compile died of a CUDA fault while autotuning at hint 4096. The
    session is saved with the site, and the last line names the graph that died, the op, the
    hint and the option, where it used to blame the regions and say nothing of the fault.
    Here through `kinspect.recording`; the command line's own test is below."""
    monkeypatch.syspath_prepend(str(PROGRAMS))
    import kinspect
    import dying_compile

    with pytest.raises(RuntimeError, match="illegal memory access"):
        with kinspect.recording(tmp_path / "llama.session.json"):
            dying_compile.dispatch()
            dying_compile.die_compiling()
    session = load(tmp_path / "llama.session.json")
    assert [s.name for s in session.sites] == ["multi_kernel_0"] and len(session.events) == 1
    last = capsys.readouterr().err.splitlines()[-1]
    assert re.fullmatch(
        r"kinspect: graph_\d \(inference\) died: Inductor raised before it wrote this graph's code, so no kernel "
        r"was chosen: it raised while autotuning mm \(buf5\) at hint 4096 \(at a hint, stock "
        r"Inductor's sizes disagree where a GEMM's rows are a product of sizes\); --one-size-per-symbol tunes each "
        r"hint on one problem", last), last


def test_whatever_measuring_raises_the_session_is_saved_with_what_was_measured(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE", "1")
    import kinspect
    from torch._inductor.codegen.multi_kernel import SizeHintMultiKernelCall
    from standins import StandIn

    from kinspect.inductor.timing.program_measure import KeySnapshots

    def broken(self, *a, **k):
        raise ValueError("a bug in timing")

    monkeypatch.setattr(KeySnapshots, "measure", broken)
    with kinspect.recording(tmp_path / "m.session.json", measure=True):
        call = SizeHintMultiKernelCall("multi_kernel_0", {((64, 1024), (64, 4096)): StandIn("k0")}, {0: [slice(0, 2)]})
        call.run(torch.empty(5, 1024, device="meta"), torch.empty(5, 4096, device="meta"))
    assert [e.key[0][0] for e in load(tmp_path / "m.session.json").events] == [5]
    err = capsys.readouterr().err
    assert "kinspect: measuring failed (ValueError: a bug in timing): saving the session with the 0 measurements " \
           "made before it\n" in err


def test_kinspect_run_names_the_compile_that_died_in_its_last_line_and_saves_the_site(here):
    """The same through the command line: the program's traceback, the session saved with the
    site the program dispatched, and the last line naming the graph, op, hint and option."""
    done = kinspect(here, "run", "--measure", "dying_compile.py")
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert lines[-1].startswith("kinspect: graph_") and lines[-1].endswith(
        "died: Inductor raised before it wrote this graph's code, so no kernel was chosen: it "
        "raised while autotuning mm (buf5) at hint 4096 (at a hint, stock Inductor's sizes disagree where a GEMM's "
        "rows are a product of sizes); --one-size-per-symbol tunes each hint on one problem"), lines[-4:]
    assert "RuntimeError: CUDA error: an illegal memory access was encountered" in done.stderr
    session = load(here / "dying_compile.session.json")
    assert [s.name for s in session.sites] == ["multi_kernel_0"] and len(session.events) == 1


def test_a_cuda_fault_under_regions_is_not_blamed_on_the_regions(tmp_path):
    """Dynamo reports a fault made while it compiled a region's frame as its own error (the
    H200's Llama: InternalTorchDynamoError from restoring the RNG state); only an error no
    CUDA error is behind points at --compile-layers-once."""
    from torch._dynamo.exc import InternalTorchDynamoError

    from kinspect.core.recording_files import recording_files
    from kinspect.inductor import ProgramRecording, RunOptions

    files = recording_files(None, tmp_path / "llama_serve.session.json")
    rec = ProgramRecording(RunOptions(files, "llama_serve.py"))
    rec.layer_groups = [type("Group", (), {"text": "layers (2 × LlamaDecoderLayer)"})()]

    def dynamo_error(cause: BaseException) -> BaseException:
        try:
            raise InternalTorchDynamoError(f"{type(cause).__name__}: {cause}") from cause
        except InternalTorchDynamoError as e:
            return e

    assert rec.regions_failed(dynamo_error(RuntimeError(ILLEGAL))) is None
    assert rec.regions_failed(ValueError("the program's own")) is None
    assert rec.regions_failed(dynamo_error(KeyError("L['self'].layers[0]"))) == (
        "Dynamo failed tracing the program with layers (2 × LlamaDecoderLayer) as nested compile regions "
        "(--compile-layers-once); without the switch its blocks compile as stock Inductor's do")


def test_compile_layers_once_marks_the_programs_repeated_blocks_and_the_session_says_so(here):
    done = kinspect(here, "run", "--compile-layers-once", "layers.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["8 same as eager: True", "24 same as eager: True"]
    assert "kinspect: compiling the blocks of layers (3 × Block) in Model once (nested compile regions)" in done.stderr
    config = load(here / "layers.session.json").environment.config
    assert config["layers_compiled_once"] == ["layers (3 × Block)"]
    failed = kinspect(here, "run", "--compile-layers-once", "-o", "dynamic.session.json", "layers.py", DYNAMIC="1")
    if failed.returncode != 0:  # torch 2.13's Dynamo: KeyError tracing a region under dynamic=True
        assert failed.stderr.splitlines()[-3] == (
            "kinspect: Dynamo failed tracing the program with layers (3 × Block) as nested compile regions "
            "(--compile-layers-once); without the switch its blocks compile as stock Inductor's do")


def test_one_size_per_symbol_is_stated_and_the_program_compiles_in_caches_of_its_own(here):
    """`--one-size-per-symbol` on a program: the session and explain say each hint was tuned at
    one size per symbol, and the program ran with Inductor's cache directory pointed at one of
    the run's own (nothing tuned so leaks into its caches, nor theirs in)."""
    # kinspect's hooks (and the run's own caches) go in once the program brings in Inductor.
    (here / "cache_dir.py").write_text("import os\nimport torch._inductor\n"
                                       "print('cache', os.environ.get('TORCHINDUCTOR_CACHE_DIR'))\n")
    done = kinspect(here, "run", "--one-size-per-symbol", "cache_dir.py")
    assert done.returncode == 0, done.stderr
    (cache,) = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("cache ")]
    assert cache != str(here / "inductor-cache") and "kinspect-inductor-" in cache
    assert "kinspect: --one-size-per-symbol: each hint tuned, keyed and launched at one size per symbol" in done.stderr
    assert load(here / "cache_dir.session.json").environment.config["one_size_per_symbol"] is True
    explained = subprocess.run([sys.executable, "-m", "kinspect", "explain", "cache_dir.session.json"], cwd=here,
                               env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "300"},
                               capture_output=True, text=True, timeout=120)
    assert "tuned, keyed and launched at one size per symbol by kinspect (--one-size-per-symbol)" in explained.stdout


def test_fusion_per_hint_is_stated_with_the_other_switch_and_compiles_in_caches_of_its_own(here):
    """`--fusion-per-hint` beside `--one-size-per-symbol`: one line each, the program's Inductor
    caches its own, and the session, its banner and explain say both."""
    (here / "cache_dir.py").write_text("import os\nimport torch._inductor\n"
                                       "print('cache', os.environ.get('TORCHINDUCTOR_CACHE_DIR'))\n")
    done = kinspect(here, "run", "--fusion-per-hint", "--one-size-per-symbol", "cache_dir.py")
    assert done.returncode == 0, done.stderr
    (cache,) = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("cache ")]
    assert "kinspect-inductor-" in cache
    said = [line for line in done.stderr.splitlines() if line.startswith("kinspect: --")]
    assert said == ["kinspect: --one-size-per-symbol: each hint tuned, keyed and launched at one size per symbol",
                    "kinspect: --fusion-per-hint: each hint's fused epilogue picked among that hint's own choices, "
                    "compiled in a cache directory of this run's own"]
    config = load(here / "cache_dir.session.json").environment.config
    assert config["fusion_per_hint"] is True and config["one_size_per_symbol"] is True
    explained = subprocess.run([sys.executable, "-m", "kinspect", "explain", "cache_dir.session.json"], cwd=here,
                               env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "300"},
                               capture_output=True, text=True, timeout=120)
    assert "Each hint's fused epilogue was picked among that hint's own choices by kinspect (--fusion-per-hint)" \
        in explained.stdout


def test_autotune_device_time_is_said_stated_and_compiles_in_caches_of_its_own(here):
    """`--autotune-device-time`: one line, the program's Inductor caches its own (a stock
    compile's timings must not pick its configs), and the session and explain say it."""
    (here / "cache_dir.py").write_text("import os\nimport torch._inductor\n"
                                       "print('cache', os.environ.get('TORCHINDUCTOR_CACHE_DIR'))\n")
    done = kinspect(here, "run", "--autotune-device-time", "cache_dir.py")
    assert done.returncode == 0, done.stderr
    (cache,) = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("cache ")]
    assert "kinspect-inductor-" in cache
    said = [line for line in done.stderr.splitlines() if line.startswith("kinspect: --")]
    assert said == ["kinspect: --autotune-device-time: Inductor's benchmarks timed by the GPU's work alone, "
                    "compiled in a cache directory of this run's own"]
    assert load(here / "cache_dir.session.json").environment.config["autotune_device_time"] is True
    done = kinspect(here, "run", "--autotune-device-time", "--fit-benchmark-tensors", "cache_dir.py")
    assert done.returncode == 0, done.stderr
    assert ("kinspect: --autotune-device-time: Inductor's benchmarks timed by the GPU's work alone (not the GEMMs' in "
            "the autotune subprocess --fit-benchmark-tensors runs them in), compiled in a cache directory of this "
            "run's own") in done.stderr.splitlines()
    explained = subprocess.run([sys.executable, "-m", "kinspect", "explain", "cache_dir.session.json"], cwd=here,
                               env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "300"},
                               capture_output=True, text=True, timeout=120)
    assert "Inductor's autotune benchmarks timed the GPU's work alone by kinspect (--autotune-device-time)" \
        in explained.stdout


def test_without_a_gpu_what_runs_and_what_does_not_is_said_up_front_in_one_line(here):
    """On a CPU, --hints makes GEMMs Inductor cannot compile (NoValidChoicesError): the program
    dies compiling, and the last line says why there is no multi-kernel, not that nothing was
    compiled. A program that dies at once stands in for that compile."""
    (here / "dies.py").write_text("raise RuntimeError('NoValidChoicesError, as Inductor says it')\n")
    done = kinspect(here, "run", "--hints", "64,256", "--measure", "dies.py")
    lines = done.stderr.splitlines()
    assert lines[0] == ("kinspect: no CUDA GPU here: the program runs and kinspect records what Inductor compiles, "
                        "but a size-hint multi-kernel is a Triton GEMM template, which needs one; --hints asks for "
                        "Triton GEMMs, which Inductor cannot compile here (NoValidChoicesError); --measure times "
                        "nothing; record on a GPU machine, and open the recording anywhere")
    assert lines[-1] == ("kinspect: no size-hint multi-kernel (the program ended before its compiles did): there is "
                         "no CUDA GPU here, and a size-hint multi-kernel is a Triton GEMM template, which needs one")
    assert "compiled nothing" not in done.stderr


def test_a_program_that_never_imports_torch_runs_without_it_and_one_that_only_imports_it_without_inductor(here):
    """kinspect run's hooks go in at the program's first torch.compile (or Inductor's import),
    so a program that does not compile pays nothing for them (benchmarks/run_startup.py times it)."""
    (here / "plain.py").write_text("import sys\nprint('torch' in sys.modules)\n")
    (here / "torch_only.py").write_text("import sys, torch\nprint('torch._inductor' in sys.modules)\n")
    for name in ("plain.py", "torch_only.py"):
        done = kinspect(here, "run", name)
        assert done.returncode == 0 and done.stdout == "False\n", done.stderr
    assert load(here / "plain.session.json").environment.torch == torch.__version__  # named all the same


def test_after_import_runs_once_the_module_is_whole(tmp_path, monkeypatch):
    from kinspect.inductor.hooks.after_import import after_import

    (tmp_path / "freshly_made.py").write_text("VALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    with after_import("freshly_made", lambda: seen.append(sys.modules["freshly_made"].VALUE)):
        assert seen == []
        import freshly_made  # noqa: F401

        assert seen == [42]
    with after_import("freshly_made", lambda: seen.append("already")):
        pass
    assert seen == [42, "already"]
    sys.modules.pop("freshly_made")
