"""Keys the program ran at which two variants are equally near, and Inductor's rule runs
the first though a later one is faster.

`SizeHintMultiKernelCall` picks `dists.index(min(dists))`: on a tie, the variant listed
first, the smaller hint's. Ties are not rare: log2 distances between powers of two are
whole numbers, so a key halfway (in log2) between two hints' problems ties exactly. The
GPT-2-family training loop at hints 16, 32 under `--one-size-per-symbol` ran 8 x 64 (512
rows) between hint 16's variant, tuned at 256 rows, and hint 32's, tuned at 1024: both 4
from it, and hint 16's ran x1.6 slower there (H100, one compile). Only a hint that puts a
variant nearer changes that. The distances are Inductor's own, bit for bit (`score_array`),
so a tie here is a tie there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from kinspect.core.dispatch.batch import keys_to_array, score_array
from kinspect.core.dispatch.shapes import Key, format_key
from kinspect.core.errors import KinspectError
from kinspect.core.numbers import ratio, us_text
from kinspect.core.quality.rules import Facts, site_rule
from kinspect.core.session.model import Finding, Site
from kinspect.core.session.timings import KeyTimings

KIND = "equally-near"
SHOWN = 3
"""Keys spelled out in one finding; the rest are counted."""
ADVISE = "kinspect advise --run with it among --candidates measures it at the sizes the program runs"


@site_rule(KIND)
def equally_near(site: Site, facts: Facts) -> list[Finding]:
    """One finding per site with keys the program ran where variants tie at Inductor's least
    distance and one it passes over ran faster, beyond noise, than the one it runs."""
    keys = sorted(k for k in facts.site_keys.get(site.name, ()) if site.lines_up(k))
    if not keys or len(site.variants) < 2:
        return []
    runtime, _ = keys_to_array(keys)
    scores = score_array(runtime, site.runtime_ranks, site.keys)
    clauses, picked_slow, between, as_far = [], set(), set(), set()
    for i, tied in least_ties(scores.distances):
        key, row = keys[i], scores.distances[i]
        picked, timings = int(scores.chosen[i]), facts.session.timings_at(site.name, key)
        faster = [v for v in tied if v != picked and timings.slower_than(picked, v)]
        if not faster:
            continue
        picked_slow.add(picked)
        best = min(faster, key=lambda v: timings.median(v) or 0.0)
        clauses.append(_clause(site, key, tied, float(row.min()), picked, best, timings))
        middle = between_hint(site.variants[picked].hint, site.variants[best].hint)
        if middle is not None:
            (between if _nearer(site, facts, runtime[i:i + 1], middle, float(row.min())) else as_far).add(middle)
    if not clauses:
        return []
    shown = clauses[:SHOWN] + ([f"{len(clauses) - SHOWN} more such keys"] if len(clauses) > SHOWN else [])
    remedy = [f"{_hints(between)}, between theirs in log2, would have a variant nearer than either"] if between else []
    if as_far - between:
        remedy.append(f"{_hints(as_far - between)}, between theirs in log2, would be no nearer by Inductor's distance "
                      "(a key with sizes on both sides of the hints, as a stock key's B and 197*B, is as far from "
                      "every hint between them)")
    text = ("variants are equally near keys the program ran and Inductor runs the first of them (its rule keeps the "
            "first least distance) where a later one is faster: "
            + "; ".join([f"{len(clauses)} of the {len(keys)} keys", *shown, *remedy, *([ADVISE] if between else [])]))
    return [Finding(KIND, text, "warning", site=site.name, graph=site.graph, variants=tuple(sorted(picked_slow)))]


def least_ties(distances: np.ndarray) -> list[tuple[int, list[int]]]:
    """Each row (a key) where several columns (variants) share the least distance, with
    those columns in order: Inductor runs the first. Found on the whole array at once: a
    recording's keys are many, its ties few."""
    at_least = distances == distances.min(axis=1, keepdims=True)
    return [(int(i), np.flatnonzero(at_least[i]).tolist()) for i in np.flatnonzero(at_least.sum(axis=1) > 1)]


def _hints(hints: set[int]) -> str:
    return f"{'hint' if len(hints) == 1 else 'hints'} {', '.join(map(str, sorted(hints)))}"


def between_hint(a: int | None, b: int | None) -> int | None:
    """The whole hint halfway between two in log2 (16 and 32: 23), None where there is none."""
    if a is None or b is None:
        return None
    middle = round(math.sqrt(a * b))
    return middle if min(a, b) < middle < max(a, b) else None


def _nearer(site: Site, facts: Facts, row: np.ndarray, hint: int, tie: float) -> bool:
    """Whether a variant for `hint` would be nearer this key than the tied ones, by
    Inductor's distance to the key it would have: each symbol at the hint where the session
    tuned one size per symbol, else the hint in each size expression (Inductor's own rule)."""
    assigned = facts.session.hint_assignments(site)
    sizes = {sym: hint for a in assigned for sym in a.values} if assigned else None
    try:
        key = tuple(t.key_at_hint(hint, sizes) for t in site.tensors)
    except KinspectError:
        return False
    return bool(score_array(row, site.runtime_ranks, [key]).distances[0, 0] < tie)


def _clause(site: Site, key: Key, tied: Sequence[int], distance: float, picked: int, best: int,
            timings: KeyTimings) -> str:
    """`at (...), v0 (hint 16) and v1 (hint 32) both 4.00 from it: v0 (hint 16) runs, 6.0 µs,
    where v1 (hint 32) takes 3.7 µs (×1.60)`."""
    labels = [site.variants[v].label for v in tied]
    names = " and ".join(labels) if len(labels) == 2 else ", ".join(labels[:-1]) + " and " + labels[-1]
    mine, theirs = timings.median(picked), timings.median(best)
    assert mine is not None and theirs is not None  # slower_than holds only where both were timed
    return (f"at {format_key(key)}, {names} {'both' if len(tied) == 2 else 'all'} {distance:.2f} from it: "
            f"{site.variants[picked].label} runs, {us_text(mine)}, where {site.variants[best].label} takes "
            f"{us_text(theirs)} ({ratio(mine / theirs)})")
