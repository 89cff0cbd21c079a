"""How long the CPU test suite takes, as CI runs it (`scripts/test`: ruff, then pytest with
one worker per core), against its target: under 4 minutes with one core kept busy beside
it, since CI's machines are shared and its limit is 6.

By default one run with the busy core (`--quiet`: as the machine is, `--both`: each once).
The suite's order is fixed (`-p no:randomly`) so two runs time the same work. The machine's
load average is printed with each figure: other work on it slows the suite as much as the
spinning core does.

Usage: python benchmarks/suite_time.py [--quiet | --both] [-- extra pytest arguments]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import time
from pathlib import Path

from timing import busy_core, load_note

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 240.0
"""The most the suite may take with one core kept busy beside it."""


def timed_suite(extra: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([str(REPO / "scripts" / "test"), "-p", "no:randomly", *extra], cwd=REPO,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - started
    tail = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
    if done.returncode != 0:
        tail = f"exit {done.returncode}: {tail}"
    return seconds, re.sub(r"\s+", " ", tail)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quiet", action="store_true", help="only as the machine is")
    g.add_argument("--both", action="store_true", help="as the machine is, then with one core kept busy")
    p.add_argument("extra", nargs="*", help="more pytest arguments (after --)")
    args = p.parse_args()
    cases = [False, True] if args.both else [not args.quiet]
    for busy in cases:
        before = load_note()
        with busy_core(busy):
            seconds, said = timed_suite(args.extra)
        minutes = f"{int(seconds // 60)}m{seconds % 60:02.0f}s"
        verdict = f"target under {TARGET_S / 60:.0f} min: {'met' if seconds < TARGET_S else 'NOT met'}" if busy \
            else "no target as the machine is"
        print(f"{'one core kept busy' if busy else 'as the machine is'}: {minutes} ({said}); {verdict}; before: {before}")


if __name__ == "__main__":
    main()
