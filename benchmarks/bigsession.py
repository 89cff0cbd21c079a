"""A synthetic session with 100,000 dispatch events, built in well under a second.

`synthetic_session(events=N)` decides every event afresh (about 36 us each); the
benchmarks need the volume, not fresh decisions, so this decides each distinct key once
and replays the answers along a random workload, with cache hits, misses and a few
overrides as a real recording has them.
"""

from __future__ import annotations

import dataclasses
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for tests.synthetic

from kinspect.core.session.runtime import DispatchEvent  # noqa: E402
from kinspect.core.session.model import Session  # noqa: E402
from tests.synthetic import synthetic_session  # noqa: E402

BATCHES = [1, 64, 100, 128, 129, 500, 1000, 1024, 1025, 4096, 8192, *range(2000, 2600, 7)]


def big_session(events: int = 100_000, sites: int = 3, seed: int = 0) -> Session:
    base = synthetic_session(sites=sites, variants=3, events=0, seed=seed)
    rng = random.Random(seed)
    table = []
    for site in base.sites:
        for b in BATCHES:
            key = site.runtime_key({"s0": b, "s1": 64})
            table.append((site, key, site.decide(key).chosen))
    seen: set[tuple[str, tuple]] = set()
    out = []
    for seq in range(events):
        site, key, chosen = table[rng.randrange(len(table))]
        hit = (site.name, key) in seen
        seen.add((site.name, key))
        override = rng.randrange(len(site.variants)) if rng.random() < 0.001 else None
        picked = chosen if override is None else override
        out.append(DispatchEvent(seq, site.name, key, picked, chosen, hit, seq // sites, 1_000_000 + seq * 1500, override))
    return dataclasses.replace(base, events=out)
