"""Merging a torchrun job's rank sessions: per-step tables, stragglers, divergence and the
Perfetto trace for `--ranks` ranks of `--steps` workload steps each (every batch size
measured on every rank), as `kinspect explain DIR` and `export` do them. `--sites N` gives
each rank N sites, every seventh autotuned differently on every rank, as a job whose
ranks diverge: merging is linear in ranks x sites (60 ranks of 500 sites took quadratic
time in divergence and site naming before).

Usage: python benchmarks/ranks_merge.py [--ranks 8] [--steps 10000] [--sites 1]
"""

from __future__ import annotations

import argparse
import io
import random
from dataclasses import replace
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(0, str(TESTS))  # the synthetic rank sessions

from ranks_sessions import rank_session  # noqa: E402

from kinspect.core.export.perfetto import write_ranks_trace  # noqa: E402
from kinspect.core.session.model import Session  # noqa: E402
from kinspect.core.ranks.merged import merge  # noqa: E402

BATCHES = (64, 100, 128, 129, 300, 1000, 1024, 1025, 2048, 8192)


def with_sites(session: Session, rank: int, sites: int) -> Session:
    """The rank's session with `sites` copies of its site (the first keeps its name and events)."""
    if sites == 1:
        return session
    site = session.sites[0]
    copies = [site] + [replace(site, name=f"multi_kernel_{i}", variants=tuple(
        replace(v, config={**v.config, "num_warps": rank + 1}) if i % 7 == 0 else v for v in site.variants))
        for i in range(1, sites)]
    return replace(session, sites=copies)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--sites", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(1)
    times = {(b, v): 10.0 * (1 + abs(b / (64, 256, 4096)[v] - 1) ** 0.5) for b in BATCHES for v in range(3)}
    t = time.perf_counter()
    sessions = [with_sites(rank_session(r, [rng.choice(BATCHES) for _ in range(args.steps)], times,
                                        world_size=args.ranks), r, args.sites) for r in range(args.ranks)]
    built = time.perf_counter() - t
    timings = {}
    t0 = time.perf_counter()
    merged = merge(sessions)
    for name, fn in (("steps", lambda: merged.steps), ("stragglers", lambda: merged.stragglers),
                     ("divergence", lambda: merged.divergences), ("findings", lambda: merged.findings),
                     ("table", merged.table), ("perfetto", lambda: write_ranks_trace(io.BytesIO(), merged))):
        t = time.perf_counter()
        fn()
        timings[name] = time.perf_counter() - t
    total = time.perf_counter() - t0
    events = sum(len(s.events) for s in sessions)
    print(f"{args.ranks} ranks x {args.steps} steps x {args.sites} sites ({events} events; built in {built:.2f} s): "
          f"{len(merged.stragglers)} stragglers, {len(merged.findings)} findings")
    for name, sec in timings.items():
        print(f"  {name:<11} {1000 * sec:8.1f} ms")
    print(f"  {'total':<11} {1000 * total:8.1f} ms")


if __name__ == "__main__":
    main()
