"""What `kinspect run` adds to a program: `kinspect run prog.py` against `python prog.py`,
in fresh processes, run for run, each figure against its target.

Two programs: one that imports nothing (what kinspect's own start costs: target 1 s), and
one that imports torch without compiling (what installing the hooks after the program's
`import torch` adds; reported, no target: a program that compiles pays Inductor's import
at its first compile anyway). Without a GPU, kinspect run also says so in a line (on stderr).

Both as the machine is and with one core kept busy beside it, by default (`--busy` or
`--quiet`: one of them).

Usage: python benchmarks/run_startup.py [--runs 5] [--busy | --quiet]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import busy_core, load_note

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 1.0
"""The most `kinspect run` may add to a program that imports nothing."""
PROGRAMS = {"noop.py": "print('noop')\n", "torch_only.py": "import torch\nprint(torch.ones(2).sum().item())\n"}


def wall(argv: list[str], cwd: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    t = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, check=True, capture_output=True)
    return time.perf_counter() - t


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--busy", action="store_true", help="only with one core kept busy beside it")
    p.add_argument("--quiet", action="store_true", help="only as the machine is")
    args = p.parse_args()
    for busy in [c for c, wanted in ((False, not args.busy), (True, not args.quiet)) if wanted]:
        print(f"== {'one core kept busy beside it' if busy else 'as the machine is'}; {load_note()}")
        run_case(args, busy)


def run_case(args: argparse.Namespace, busy: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp, busy_core(busy):
        here = Path(tmp)
        for name, text in PROGRAMS.items():
            (here / name).write_text(text)
        for name in PROGRAMS:
            plain, under = [], []
            for _ in range(args.runs):  # interleaved: a slow minute of the machine hits both alike
                plain.append(wall([sys.executable, name], here))
                under.append(wall([sys.executable, "-m", "kinspect", "run", name], here))
            added = [u - q for u, q in zip(under, plain)]
            median = statistics.median(added)
            target = f" (target {TARGET_S:.1f} s: {'met' if median <= TARGET_S else 'NOT met'})" \
                if name == "noop.py" else " (no target: reported)"
            print(f"{name}: python {statistics.median(plain):.2f} s, kinspect run {statistics.median(under):.2f} s; "
                  f"added {median:.2f} s median, {min(added):.2f}-{max(added):.2f} s over {args.runs} runs{target}")
    print(f"after: {load_note()}")


if __name__ == "__main__":
    main()
