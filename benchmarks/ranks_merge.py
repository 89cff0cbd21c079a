"""Merging a torchrun job's rank sessions: per-step tables, stragglers, divergence and the
Perfetto trace for `--ranks` ranks of `--steps` workload steps each (one site, every
batch size measured on every rank), as `kinspect explain DIR` and `export` do them.

Usage: python benchmarks/ranks_merge.py [--ranks 8] [--steps 10000]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(0, str(TESTS))  # the synthetic rank sessions

from ranks_sessions import rank_session  # noqa: E402

from kinspect.core.export.perfetto import ranks_trace  # noqa: E402
from kinspect.core.ranks.merged import merge  # noqa: E402

BATCHES = (64, 100, 128, 129, 300, 1000, 1024, 1025, 2048, 8192)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--steps", type=int, default=10_000)
    args = ap.parse_args()
    rng = random.Random(1)
    times = {(b, v): 10.0 * (1 + abs(b / (64, 256, 4096)[v] - 1) ** 0.5) for b in BATCHES for v in range(3)}
    t = time.perf_counter()
    sessions = [rank_session(r, [rng.choice(BATCHES) for _ in range(args.steps)], times, world_size=args.ranks)
                for r in range(args.ranks)]
    built = time.perf_counter() - t
    timings = {}
    t0 = time.perf_counter()
    merged = merge(sessions)
    for name, fn in (("steps", lambda: merged.steps), ("stragglers", lambda: merged.stragglers),
                     ("divergence", lambda: merged.divergences), ("findings", lambda: merged.findings),
                     ("table", merged.table), ("perfetto", lambda: ranks_trace(merged))):
        t = time.perf_counter()
        fn()
        timings[name] = time.perf_counter() - t
    total = time.perf_counter() - t0
    events = sum(len(s.events) for s in sessions)
    print(f"{args.ranks} ranks x {args.steps} steps ({events} events; built in {built:.2f} s): "
          f"{len(merged.stragglers)} stragglers, {len(merged.findings)} findings")
    for name, sec in timings.items():
        print(f"  {name:<11} {1000 * sec:8.1f} ms")
    print(f"  {'total':<11} {1000 * total:8.1f} ms")


if __name__ == "__main__":
    main()
