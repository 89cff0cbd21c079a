"""Repeated layers on the GPU: does GPT-2's compile under kinspect grow with its layers
(which share every GEMM layout), and does it cost what a stock compile costs?

Each figure is one compile in a fresh process with cold caches (Inductor's and Triton's
cache directories fresh for it): the wall time of `kinspect record`'s compile
(`LivePipeline.compile`) of samples/gpt2.py at each layer count, and of a stock
`torch.compile` with the same settings (multi_kernel_hints, max-autotune, Triton GEMMs,
Inductor's default caches) at one of them. Beside each, where the time went: Inductor's
template benchmarks (how many ran, against the distinct op/layout/hint triples they
cover: more runs than triples means identical GEMMs were tuned again) and its fused
epilogue benchmarks (run, and reused from its own benchmark cache), and the compile's own
phase clock (torch._dynamo.utils.compilation_time_metrics: Dynamo, AOT, lowering, scheduling,
code generation, kernel compiles), so growth with the layers can be laid at a phase's door.
With --profile N, the compile at N layers also runs under cProfile and the functions with
the most time of their own are written to --profile-out. With --layers-once, kinspect
records with `--compile-layers-once` (GPT-2's blocks as one nested compile region) and the
stock compile marks the same blocks with `torch.compiler.nested_compile_region` itself, so
both compile the same program. Every compile also times each config inside Inductor's
autotune subprocess (benchmarks/autotune_child.py) and prints a line of where that time went,
how many configs the subprocess had to compile itself, and the parent's template precompiles
by path (its own threads, the compile pool); --child-log keeps the per-config lines.

Prints each layer count's compile time against the smallest's (target x1.5 or less) and
kinspect against the stock compile (target x1.2 or less).

Usage (CUDA, transformers installed):
    python benchmarks/repeated_layers.py [--layers 1,2,4] [--stock 2] [--fit-benchmark-tensors] [--layers-once]
        [--profile 12 --profile-out profile.txt] [--child-log autotune-child.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import autotune_child  # noqa: E402  (beside this script; the compiles' autotune children import it too)

CHILD_LOGS: str | None = None
"""With --child-log, every compile's per-config lines are appended there, each with its run."""
MODEL = ROOT / "samples" / "gpt2.py"
LAYER_TARGET = 1.5
STOCK_TARGET = 1.2

COUNTERS = """
import json, os, time
import torch
from torch._inductor.codegen.triton import TritonScheduling
from torch._inductor.select_algorithm import AlgorithmSelectorCache
COUNTS = {"tuned": 0, "tune_s": 0.0, "fused": 0, "fused_reused": 0, "fused_s": 0.0}
TUNED = set()
_autotune = AlgorithmSelectorCache.autotune
def autotune(self, name, input_nodes, layout, input_gen_fns, choices, *a, **k):
    t = time.perf_counter()
    try:
        return _autotune(self, name, input_nodes, layout, input_gen_fns, choices, *a, **k)
    finally:
        COUNTS["tuned"] += 1
        COUNTS["tune_s"] += time.perf_counter() - t
        TUNED.add((name, repr([AlgorithmSelectorCache.key_of(n) for n in input_nodes]), k.get("hint_override")))
AlgorithmSelectorCache.autotune = autotune
_bench = TritonScheduling.benchmark_codegened_module
def bench(self, mod, *a, **k):
    reused = os.path.exists(os.path.splitext(mod.__file__)[0] + ".kernel_perf")
    t = time.perf_counter()
    try:
        return _bench(self, mod, *a, **k)
    finally:
        COUNTS["fused"] += 1
        COUNTS["fused_reused"] += reused
        COUNTS["fused_s"] += time.perf_counter() - t
TritonScheduling.benchmark_codegened_module = bench
_call = AlgorithmSelectorCache.__call__
def call(self, *a, **k):
    t = time.perf_counter()
    try:
        return _call(self, *a, **k)
    finally:
        COUNTS["select_s"] += time.perf_counter() - t
COUNTS["select_s"] = 0.0
AlgorithmSelectorCache.__call__ = call
CHILD_LOG = os.environ.get("REPEATED_LAYERS_CHILD_LOG")
if CHILD_LOG:
    import functools
    import autotune_child
    from torch._inductor.autotune_process import TuningProcess
    _put = TuningProcess.put
    def put(self, req, *a, **k):
        if getattr(req, "__name__", "") == "benchmark" and hasattr(req, "__self__"):
            parent = {"parent_cached_gb": round(torch.cuda.memory_reserved() / 2**30, 2),
                      "load_avg": round(os.getloadavg()[0], 1)}
            req = functools.partial(autotune_child.timed, req.__self__, CHILD_LOG, time.time(), parent)
        return _put(self, req, *a, **k)
    TuningProcess.put = put
PRECOMPILES = {"in_process": 0, "in_pool": 0}
from torch._inductor.select_algorithm import TritonTemplateCaller
from torch._inductor.async_compile import AsyncCompile
_precompile = TritonTemplateCaller.precompile
def precompile(self, *a, **k):
    PRECOMPILES["in_process"] += 1
    return _precompile(self, *a, **k)
TritonTemplateCaller.precompile = precompile
_triton = AsyncCompile.triton
def triton(self, kernel_name, source_code, *a, **k):
    if kernel_name.startswith("triton_mm") or kernel_name.startswith("triton_tem"):
        PRECOMPILES["in_pool"] += 1
    return _triton(self, kernel_name, source_code, *a, **k)
AsyncCompile.triton = triton
COUNTS["precompiles"] = PRECOMPILES
PROFILE = os.environ.get("REPEATED_LAYERS_PROFILE")
if PROFILE:
    import cProfile
    PROFILER = cProfile.Profile()
    PROFILER.enable()
def report(seconds):
    from torch._dynamo.utils import compilation_time_metrics
    phases = {k: round(sum(v), 2) for k, v in compilation_time_metrics.items() if sum(v) >= 0.5}
    if PROFILE:
        import io, pstats
        PROFILER.disable()
        text = io.StringIO()
        stats = pstats.Stats(PROFILER, stream=text)
        stats.sort_stats("tottime").print_stats(40)
        stats.sort_stats("cumulative").print_stats(60)
        with open(PROFILE, "w") as f:
            f.write(text.getvalue())
    print("RESULT " + json.dumps({"seconds": seconds, "distinct": len(TUNED), "phases": phases, **COUNTS}))
"""

STOCK = COUNTERS + """
import sys, torch._inductor.config as ic
sys.path.insert(0, @SAMPLES@)
import gpt2
if @ONCE@:
    from transformers.models.gpt2.modeling_gpt2 import GPT2Block
    GPT2Block.forward = torch.compiler.nested_compile_region(GPT2Block.forward)
ic.multi_kernel_hints = list(gpt2.hints); ic.max_autotune = True; ic.max_autotune_gemm = True
ic.max_autotune_gemm_backends = "TRITON"; ic.autotune_in_subproc = @FIT@
m = gpt2.model.cuda().eval(); x = gpt2.inputs().cuda()
torch._dynamo.mark_dynamic(x, 0); torch._dynamo.mark_dynamic(x, 1)
t = time.perf_counter()
with torch.no_grad():
    torch.compile(m)(x)
torch.cuda.synchronize(); report(time.perf_counter() - t)
"""

KINSPECT = COUNTERS + """
from kinspect.inductor.launch.modelfile import load_model_file
from kinspect.core.session.compile_changes import CompileChanges
from kinspect.inductor.recording.pipeline import LivePipeline, Options
mf = load_model_file(@MODEL@)
t = time.perf_counter()
with LivePipeline(mf, Options(changes=CompileChanges(fit_benchmark_tensors=@FIT@, layers_once=@ONCE@))) as live:
    live.compile()
report(time.perf_counter() - t)
"""


def _code(template: str, fit: bool, once: bool) -> str:
    return (template.replace("@SAMPLES@", repr(str(MODEL.parent))).replace("@MODEL@", repr(str(MODEL)))
            .replace("@FIT@", repr(fit)).replace("@ONCE@", repr(once)))


def _run(code: str, layers: int, what: str, profile: str | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="repeated-layers-") as cold:
        env = {**os.environ, "GPT2_LAYERS": str(layers), "TORCHINDUCTOR_CACHE_DIR": cold,
               "TRITON_CACHE_DIR": os.path.join(cold, "triton"),
               "REPEATED_LAYERS_FIRST_TRITON_DIR": os.path.join(cold, "triton"),
               "PYTHONPATH": f"{ROOT}:{HERE}:{os.environ.get('PYTHONPATH', '')}"}
        if profile:
            env["REPEATED_LAYERS_PROFILE"] = profile
        child_log = env["REPEATED_LAYERS_CHILD_LOG"] = os.path.join(cold, "autotune-child.jsonl")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=1500)
        child = autotune_child.summary(child_log)
        if CHILD_LOGS and os.path.exists(child_log):
            with open(child_log) as f, open(CHILD_LOGS, "a") as every:
                every.writelines(json.dumps({**json.loads(line), "run": f"{what}, {layers} layers"}) + "\n" for line in f)
    result = next((line for line in done.stdout.splitlines() if line.startswith("RESULT ")), None)
    if done.returncode != 0 or result is None:
        raise SystemExit(f"{what}, {layers} layers: the compile failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    got = json.loads(result[len("RESULT "):])
    print(f"GPT-2, {layers} layer{'s' if layers > 1 else ''}: {what} {got['seconds']:.0f} s (template benchmarks "
          f"{got['tuned']} for {got['distinct']} distinct op/layout/hint: {got['tune_s']:.0f} s; fused-kernel benchmarks "
          f"{got['fused'] - got['fused_reused']} run, {got['fused_reused']} reused: {got['fused_s']:.0f} s; "
          f"template selection in all {got['select_s']:.0f} s{', under cProfile' if profile else ''})", flush=True)
    print(f"  {child}; the parent's template precompiles: {got['precompiles']}", flush=True)
    phases = sorted(got["phases"].items(), key=lambda kv: -kv[1])
    print("  phases (s, nested ones inside their callers): " + ", ".join(f"{k} {v:.1f}" for k, v in phases[:14]),
          flush=True)
    return got


def _verdict(ratio: float, target: float) -> str:
    return "met" if ratio <= target else "NOT met"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--layers", default="1,2,4", help="GPT-2 layer counts to compile under kinspect (default 1,2,4)")
    p.add_argument("--stock", type=int, default=2, help="the layer count a stock torch.compile is timed at (0: none)")
    p.add_argument("--fit-benchmark-tensors", action="store_true", help="record with kinspect's fit (and the "
                   "stock compile autotuning in a subprocess, as the fit does)")
    p.add_argument("--layers-once", action="store_true", help="record with --compile-layers-once, and mark the "
                   "same blocks as nested compile regions in the stock compile")
    p.add_argument("--profile", type=int, default=0, help="also compile stock torch.compile at this layer count "
                   "under cProfile (its time is not compared)")
    p.add_argument("--profile-out", default="repeated-layers.profile.txt", help="where the profile's tables go")
    p.add_argument("--child-log", help="append each compile's per-config lines from the autotune subprocess "
                   "(benchmarks/autotune_child.py) to this JSON-lines file")
    a = p.parse_args()
    global CHILD_LOGS
    CHILD_LOGS = a.child_log
    counts = sorted({int(n) for n in a.layers.split(",")})
    started = time.perf_counter()
    fit, once = a.fit_benchmark_tensors, a.layers_once
    what = "kinspect record's compile" + (" (--compile-layers-once)" if once else "")
    stock_what = "stock torch.compile" + (" (blocks as nested compile regions)" if once else "")
    kinspect = {n: _run(_code(KINSPECT, fit, once), n, what) for n in counts}
    base = counts[0]
    for n in counts[1:]:
        ratio = kinspect[n]["seconds"] / kinspect[base]["seconds"]
        print(f"kinspect record's compile at {n} layers against {base}: x{ratio:.2f} "
              f"(target x{LAYER_TARGET} or less: {_verdict(ratio, LAYER_TARGET)})")
    if a.stock:
        stock = _run(_code(STOCK, fit, once), a.stock, stock_what)
        mine = kinspect.get(a.stock) or _run(_code(KINSPECT, fit, once), a.stock, what)
        ratio = mine["seconds"] / stock["seconds"]
        print(f"kinspect record's compile against stock torch.compile at {a.stock} layers: x{ratio:.2f} "
              f"(target x{STOCK_TARGET} or less: {_verdict(ratio, STOCK_TARGET)})")
    if a.profile:
        _run(_code(STOCK, fit, once), a.profile, stock_what, profile=os.path.abspath(a.profile_out))
        print(f"profile of that compile: {a.profile_out}")
    print(f"({time.perf_counter() - started:.0f} s in all, one compile each, fresh processes, cold caches)")


if __name__ == "__main__":
    main()
