"""Per-rank sessions built without a GPU: one Linear site (hints 64, 256, 4096) whose picks
follow Inductor's heuristic, run by each rank at its own sizes per step, with invented
latencies per (B, variant) measured on that rank. For the merging tests."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import replace

from synthetic import linear_site

from kinspect.core.dispatch.decision import decide
from kinspect.core.session.runtime import DispatchEvent, Measurement
from kinspect.core.session.model import Environment, ModelInfo, Session, SymbolInfo

HINTS = [64, 256, 4096]


def rank_session(rank: int, steps: Sequence[int], times: Mapping[tuple[int, int], float] | None = None,
                 world_size: int = 2, config: Mapping[int, Mapping[str, int]] | None = None) -> Session:
    """`steps`: the batch B this rank runs at each workload step; `times`: (B, variant) ->
    median us, measured on this rank; `config`: variant -> config entries this rank's
    autotuning chose differently."""
    site = distinct(linear_site(0, HINTS, random.Random(0)))
    if config:
        site = replace(site, variants=tuple(replace(v, config={**v.config, **config.get(v.index, {})})
                                            for v in site.variants))
    events, picks = [], {}
    for step, b in enumerate(steps):
        key = site.runtime_key({"s0": b})
        hit = key in picks
        pick = picks.setdefault(key, decide(site.keys, key).chosen)
        events.append(DispatchEvent(len(events), site.name, key, pick, pick, hit, step, 1000 * len(events)))
    measurements = []
    for (b, v), us in (times or {}).items():
        measurements.append(Measurement(site.name, site.runtime_key({"s0": b}), v, "cuda_events", us,
                                        us * 0.99, us * 1.01, 20))
    return Session(
        environment=Environment(created="2026-11-30T00:00:00Z", gpu="synthetic", rank=rank,
                                world_size=world_size, local_rank=rank),
        model=ModelInfo(path="ddp.py", name="model", hints=tuple(HINTS), workload=tuple({"B": b} for b in steps)),
        symbols=[SymbolInfo("s0", "B", ("L['x'].size()[0]",), "x", 0, 1000)],
        sites=[site], events=events, measurements=measurements,
    )


def distinct(site):
    """Three kernels, one per hint (the synthetic site's v2 copies v0's), so each variant's
    invented latency is its own kernel's."""
    v2 = replace(site.variants[2], source_hash="rank-sessions-v2",
                 config={**site.variants[2].config, "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64,
                         "num_warps": 8, "num_stages": 4})
    return replace(site, variants=(*site.variants[:2], v2))


TIMES = {(100, 0): 10.0, (100, 1): 12.0, (100, 2): 30.0,
         (1000, 0): 80.0, (1000, 1): 50.0, (1000, 2): 40.0}
"""At B=100 Inductor picks v0, the fastest; at B=1000 it picks v1 (50 us), v2 taking 40."""
