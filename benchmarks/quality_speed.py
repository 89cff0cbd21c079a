"""Regret and what-if on a sweep-sized session: 100,000 events and 500 measured keys with
8 variants per site (issue target: under 1 s on the 2-core CI machine).

A synthetic session (`--sites` sites x `--variants` variants, `--events` events) gains
`--keys` measured batch sizes per site, every variant timed; then, timed separately:
the per-site and model quality summary (`model_quality`), the slow-pick findings, and
the what-if over every heuristic and hint subset (`what_ifs`).

Usage: python benchmarks/quality_speed.py [--sites 1] [--variants 8] [--keys 500] [--events 100000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for tests.synthetic

from kinspect.core.quality.findings import slow_picks  # noqa: E402
from kinspect.core.quality.overview import model_quality  # noqa: E402
from kinspect.core.session.runtime import Measurement  # noqa: E402
from kinspect.core.dispatch.shapes import SymbolShape  # noqa: E402
from kinspect.core.session.timings import timings_by_key  # noqa: E402
from kinspect.core.quality.whatif import what_ifs  # noqa: E402
from tests.synthetic import synthetic_session  # noqa: E402


def build(sites: int, variants: int, keys: int, events: int):
    s = synthetic_session(sites, variants, events, seed=3)
    rng = random.Random(5)
    for site in s.sites:
        for b in range(16, 16 + keys):
            key = s.runtime_key(site, SymbolShape({"B": b, "N": 64}))
            for v in range(variants):
                med = rng.uniform(5, 50)
                s.measurements.append(Measurement(site.name, key, v, "cuda_events", med, med * 0.98, med * 1.02, 20))
    return s


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sites", type=int, default=1)
    p.add_argument("--variants", type=int, default=8)
    p.add_argument("--keys", type=int, default=500)
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--runs", type=int, default=3)
    a = p.parse_args()
    s = build(a.sites, a.variants, a.keys, a.events)
    print(f"session: {a.sites} sites x {a.variants} variants, {a.keys} measured keys per site, "
          f"{len(s.measurements)} measurements, {len(s.events)} events")
    figures: dict[str, list[float]] = {"quality": [], "slow-pick findings": [], "what-if": [], "total": []}
    for _ in range(a.runs):
        t0 = time.perf_counter()
        timings = timings_by_key(s.measurements)
        model_quality(s, timings=timings)
        t1 = time.perf_counter()
        slow_picks(s)
        t2 = time.perf_counter()
        results = what_ifs(s, timings)
        t3 = time.perf_counter()
        figures["quality"].append(t1 - t0)
        figures["slow-pick findings"].append(t2 - t1)
        figures["what-if"].append(t3 - t2)
        figures["total"].append(t3 - t0)
    for name, values in figures.items():
        print(f"  {name:<20} median {statistics.median(values):.3f} s")
    print(f"  what-if rows: {len(results)}; best: {results[0].label()} at x{results[0].geomean_regret:.3f}")


if __name__ == "__main__":
    main()
