"""Repeated layers on the GPU: does a recording cost what a plain compile costs, and does
GPT-2 at 12 layers compile in little more time than at 2?

Each figure is one compile in a fresh process (Dynamo's and Inductor's in-process caches
start empty): the wall time of the first call of `torch.compile` with kinspect's settings
(multi_kernel_hints, max-autotune, Triton GEMMs, caches off), against `kinspect record`'s
compile of the same model, and kinspect's compile of GPT-2 at 12 layers against 2.
Prints each ratio against its target.

Usage (CUDA, transformers installed): python benchmarks/repeated_layers.py [--fit-benchmark-tensors]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "samples" / "gpt2.py"

STOCK = """
import sys, time, torch, torch._inductor.config as ic
sys.path.insert(0, {samples!r})
import gpt2
ic.multi_kernel_hints = list(gpt2.hints); ic.max_autotune = True; ic.max_autotune_gemm = True
ic.max_autotune_gemm_backends = "TRITON"; ic.force_disable_caches = True; ic.autotune_in_subproc = {subproc}
m = gpt2.model.cuda().eval(); x = gpt2.inputs().cuda()
torch._dynamo.mark_dynamic(x, 0); torch._dynamo.mark_dynamic(x, 1)
t = time.perf_counter()
with torch.no_grad():
    torch.compile(m)(x)
torch.cuda.synchronize(); print(time.perf_counter() - t)
"""

KINSPECT = """
import sys, time
from kinspect.inductor.modelfile import load_model_file
from kinspect.inductor.pipeline import LivePipeline, Options
mf = load_model_file({model!r})
t = time.perf_counter()
with LivePipeline(mf, Options(fit_benchmark_tensors={fit})) as live:
    live.compile()
print(time.perf_counter() - t)
"""


def _seconds(code: str, layers: int) -> float:
    env = {**os.environ, "GPT2_LAYERS": str(layers), "PYTHONPATH": f"{ROOT}:{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=1500)
    if done.returncode != 0:
        raise SystemExit(f"{layers} layers: the compile failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--fit-benchmark-tensors", action="store_true", help="record with kinspect's fit (and the "
                   "plain compile autotuning in a subprocess, as the fit does)")
    a = p.parse_args()
    started = time.perf_counter()
    stock = _seconds(STOCK.format(samples=str(MODEL.parent), subproc=a.fit_benchmark_tensors), 2)
    two = _seconds(KINSPECT.format(model=str(MODEL), fit=a.fit_benchmark_tensors), 2)
    twelve = _seconds(KINSPECT.format(model=str(MODEL), fit=a.fit_benchmark_tensors), 12)
    print(f"GPT-2, 2 layers: torch.compile {stock:.0f} s, kinspect record's compile {two:.0f} s: "
          f"x{two / stock:.2f} (target x1.2 or less)")
    print(f"kinspect record's compile, GPT-2 at 12 layers {twelve:.0f} s against 2 layers {two:.0f} s: "
          f"x{twelve / two:.2f} (target x1.5 or less)")
    print(f"({time.perf_counter() - started:.0f} s in all, one compile each, fresh processes)")


if __name__ == "__main__":
    main()
