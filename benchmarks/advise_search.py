"""The hint-subset search of `kinspect advise`: 16 candidate hints, subsets of at most 4
(2,516 of them), 200 workload sizes (issue target: under 1 s on the 2-core CI machine).

A synthetic session with one site per `--sites` and 16 variants (hints 2**0 .. 2**15)
gains every variant timed at `--shapes` log-spaced batch sizes; then, timed separately:
building the tables (timings per size and Inductor's distances) and the exhaustive search.

Usage: python benchmarks/advise_search.py [--sites 1] [--shapes 200] [--max-hints 4]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for tests.synthetic

from timing import best_of  # noqa: E402

from kinspect.core.quality import advise  # noqa: E402
from kinspect.core.session.runtime import Measurement  # noqa: E402
from kinspect.core.session.model import Variant  # noqa: E402
from kinspect.core.dispatch.shapes import SymbolShape  # noqa: E402
from tests.synthetic import synthetic_session  # noqa: E402

HINTS = [2 ** e for e in range(16)]


def build(sites: int, shapes: int):
    s = synthetic_session(sites, 1, 0, seed=3, measured=False)
    s.sites = [replace(site, variants=tuple(Variant(i, h, tuple(t.key_at_hint(h) for t in site.tensors), f"k{i}")
                                            for i, h in enumerate(HINTS))) for site in s.sites]
    workload = advise.uniform_workload("B", 16, 2 ** 26, shapes)  # wide enough for 200 distinct sizes
    rng = random.Random(5)
    for site in s.sites:
        for sizes, _ in workload.points:
            key = s.runtime_key(site, SymbolShape({**sizes, "N": 64}))
            for v in site.variants:
                med = 10 * (1 + abs(math.log2(sizes["B"] / v.hint)) * rng.uniform(0.5, 1.5))
                s.measurements.append(Measurement(site.name, key, v.index, "cuda_events", med, med * 0.98, med * 1.02))
    return s, workload


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sites", type=int, default=1)
    p.add_argument("--shapes", type=int, default=200)
    p.add_argument("--max-hints", type=int, default=4)
    a = p.parse_args()
    session, workload = build(a.sites, a.shapes)
    took_tables, tabs = best_of(3, lambda: advise.tables(session, workload))
    took_search, found = best_of(3, lambda: advise.search(tabs.sites, a.max_hints))
    sizes = len(tabs.sites[0].keys)
    print(f"{a.sites} site(s), {len(HINTS)} candidate hints, {sizes} sizes, subsets of at most {a.max_hints}: "
          f"{len(found)} subsets")
    print(f"tables (timings and Inductor's distances): {took_tables * 1000:.0f} ms")
    print(f"exhaustive search:                        {took_search * 1000:.0f} ms")
    print(f"total:                                    {(took_tables + took_search) * 1000:.0f} ms (target < 1000 ms)")
    print(f"best: hints {list(found[0].hints)} at ×{found[0].regret:.3f} (synthetic times)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
