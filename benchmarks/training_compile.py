"""What kinspect costs a training program's compile: a loop with backward (forward and
backward graphs, every GEMM a size-hint multi-kernel) run once under `kinspect run` and once
under stock Inductor with the same options (`scripts/with_hints.py`: multi_kernel_hints,
max-autotune, Triton GEMMs), each in a fresh process with cold caches (Inductor's and
Triton's cache directories fresh for it), timed whole.

Prints both wall times and kinspect's against stock's (target x1.2 or less). One run each:
autotuning's time differs between compiles, so a ratio near the target is noise.

Usage (CUDA): python benchmarks/training_compile.py [--program tests/gpu/programs/mlp_train.py]
    [--hints 64,256,4096] [--kinspect-flag --one-size-per-symbol ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 1.2


def timed(cmd: list[str]) -> tuple[float, int, str]:
    with tempfile.TemporaryDirectory(prefix="kinspect-cold-") as cold:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "TORCHINDUCTOR_CACHE_DIR": os.path.join(cold, "inductor"),
               "TRITON_CACHE_DIR": os.path.join(cold, "triton")}
        started = time.perf_counter()
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        return time.perf_counter() - started, done.returncode, done.stderr[-2000:]


def main() -> None:
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("--program", default=str(ROOT / "tests" / "gpu" / "programs" / "mlp_train.py"))
    a.add_argument("--hints", default="64,256,4096")
    a.add_argument("--kinspect-flag", action="append", default=[], help="a flag for kinspect run (repeat)")
    args = a.parse_args()
    stock_s, stock_rc, stock_err = timed([sys.executable, str(ROOT / "scripts" / "with_hints.py"), "--hints",
                                          args.hints, args.program])
    with tempfile.TemporaryDirectory() as out:
        ours_s, ours_rc, ours_err = timed([sys.executable, "-m", "kinspect", "run", "--hints", args.hints,
                                           *args.kinspect_flag, "-o", os.path.join(out, "s.session.json"),
                                           args.program])
    for name, rc, err in (("stock", stock_rc, stock_err), ("kinspect run", ours_rc, ours_err)):
        if rc != 0:
            print(f"{name} exited {rc}:\n{err}")
    name = Path(args.program).name
    print(f"{name}, hints {args.hints}, cold caches, one run each: stock {stock_s:.0f} s, kinspect run "
          f"{' '.join(args.kinspect_flag)} {ours_s:.0f} s: x{ours_s / stock_s:.2f} (target x{TARGET} or less)")


if __name__ == "__main__":
    main()
