"""What kinspect costs a training program's compile: a loop with backward (forward and
backward graphs, every GEMM a size-hint multi-kernel) run once under `kinspect run` and once
under stock Inductor with the same options (`scripts/with_hints.py`: multi_kernel_hints,
max-autotune, Triton GEMMs), each in a fresh process with cold caches (Inductor's and
Triton's cache directories fresh for it), timed whole.

Prints both wall times and kinspect's against stock's (target x1.2 or less). One run each:
autotuning's time differs between compiles, so a ratio near the target is noise.

Usage (CUDA): python benchmarks/training_compile.py [--program tests/gpu/programs/mlp_train.py]
    [--hints 64,256,4096] [--kinspect-flag --one-size-per-symbol ...] [--together]
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


def timed(cmds: dict[str, list[str]], together: bool) -> dict[str, tuple[float, int, str]]:
    """Each command's wall time, exit status and stderr's end, each in a fresh process with
    caches of its own; one after another, or all at once (`together`: on a GPU machine
    something else is using, so both compiles see the same load). stderr goes to a file: a
    full pipe would stall a compile mid-way and be timed as its own."""
    out: dict[str, tuple[float, int, str]] = {}
    with tempfile.TemporaryDirectory(prefix="kinspect-cold-") as cold:
        running: dict[str, tuple[subprocess.Popen[bytes], float, Path]] = {}
        for i, (name, cmd) in enumerate(cmds.items()):
            env = {**os.environ, "PYTHONPATH": str(ROOT), "TORCHINDUCTOR_CACHE_DIR": os.path.join(cold, f"inductor{i}"),
                   "TRITON_CACHE_DIR": os.path.join(cold, f"triton{i}")}
            err = Path(cold) / f"stderr{i}"
            with err.open("wb") as f:
                running[name] = (subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=f),
                                 time.perf_counter(), err)
            while not together and running[name][0].poll() is None:
                time.sleep(0.2)
        while len(out) < len(running):
            for name, (proc, started, err) in running.items():
                if name not in out and proc.poll() is not None:
                    out[name] = (time.perf_counter() - started, proc.returncode,
                                 err.read_bytes()[-2000:].decode(errors="replace"))
            time.sleep(0.2)
    return out


def main() -> None:
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("--program", default=str(ROOT / "tests" / "gpu" / "programs" / "mlp_train.py"))
    a.add_argument("--hints", default="64,256,4096")
    a.add_argument("--kinspect-flag", action="append", default=[], help="a flag for kinspect run (repeat)")
    a.add_argument("--together", action="store_true",
                   help="run both compiles at once (a GPU something else is using: both see its load)")
    args = a.parse_args()
    with tempfile.TemporaryDirectory() as out:
        cmds = {"stock": [sys.executable, str(ROOT / "scripts" / "with_hints.py"), "--hints", args.hints, args.program],
                "kinspect run": [sys.executable, "-m", "kinspect", "run", "--hints", args.hints, *args.kinspect_flag,
                                 "-o", os.path.join(out, "s.session.json"), args.program]}
        times = timed(cmds, args.together)
    for name, (_, rc, err) in times.items():
        if rc != 0:
            print(f"{name} exited {rc}:\n{err}")
    (stock_s, _, _), (ours_s, _, _) = times["stock"], times["kinspect run"]
    name = Path(args.program).name
    how = "at once" if args.together else "one after the other"
    ours = " ".join(["kinspect run", *args.kinspect_flag])
    print(f"{name}, hints {args.hints}, cold caches, one run each, {how}: stock {stock_s:.0f} s, {ours} {ours_s:.0f} s: "
          f"x{ours_s / stock_s:.2f} (target x{TARGET} or less)")


if __name__ == "__main__":
    main()
