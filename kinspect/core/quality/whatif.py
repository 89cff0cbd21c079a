"""What-if on measurements, without recompiling: other heuristics, fewer hints.

Every variant of a site was timed at the measured keys, so the regret of any selection
rule that chooses among the *same* variants can be computed exactly: for each heuristic
the core offers and each subset of the compiled hints, pick by that rule among the
subset's variants and compare with the fastest of all variants. (Compiling with fewer
hints may emit other kernels: a prediction here is only as good as its verification by
recompiling, which `kinspect advise` does.)

Hints are a model-wide setting, so a subset applies to every site at once; the figures
are over all sites' measured keys. Distances come as matrices (keys x variants) per site
and heuristic, Inductor's exactly (`kinspect.core.dispatch.batch`), so a session with hundreds of
measured keys and 8 variants per site is answered in well under a second.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kinspect.core.dispatch.batch import keys_to_array, layout_of, score_array
from kinspect.core.dispatch.heuristics import HEURISTICS, NO_KEY_DISTANCE
from kinspect.core.session.model import Session
from kinspect.core.dispatch.shapes import Key
from kinspect.core.errors import shown
from kinspect.core.numbers import ratio
from kinspect.core.session.timings import KeyTimings, per_site

MAX_EXHAUSTIVE = 10
"""Up to this many hints every subset is tried; beyond, subsets of at most 4 hints."""


@dataclass(frozen=True)
class WhatIf:
    heuristic: str
    hints: tuple[int, ...]
    shapes: int
    geomean_regret: float
    worst_regret: float
    workload_lost: float | None
    """GPU time lost over the recorded calls (or the model's workload), share of fastest."""

    def label(self) -> str:
        return f"{self.heuristic} with hints {list(self.hints)}"

    def to_json(self) -> dict[str, object]:
        return {"heuristic": self.heuristic, "hints": list(self.hints), "shapes": self.shapes,
                "geomean_regret": round(self.geomean_regret, 4), "worst_regret": round(self.worst_regret, 4),
                "workload_lost": None if self.workload_lost is None else round(self.workload_lost, 4)}


@dataclass
class _SiteTable:
    """One site's fully measured keys: times (N x V), distances per heuristic (N x V),
    calls per key (weights), and each variant's hint."""

    times: np.ndarray
    best: np.ndarray
    weights: np.ndarray
    hints: list[int | None]
    distances: dict[str, np.ndarray]
    stands_for: list[frozenset[int]]
    """Per variant, the compiled hints it stands for (`Session.stands_for`)."""


def distance_matrix(keys: Sequence[Key], hint_keys: Sequence[Key | None], heuristic: str,
                    flat: tuple[np.ndarray, tuple[int, ...]] | None = None) -> np.ndarray:
    """Distances (keys x variants) by a heuristic; Inductor's bit for bit. `flat`: the keys
    as `keys_to_array` gives them, where they are already (one table, every heuristic).
    Keys of several layouts (a shared site's calls that hand Inductor differently shaped
    inputs) are scored a layout at a time."""
    if flat is None:
        layouts: dict[tuple[int, ...], list[int]] = {}
        for i, k in enumerate(keys):
            layouts.setdefault(layout_of(k), []).append(i)
        if len(layouts) > 1:
            out = np.empty((len(keys), len(hint_keys)))
            for rows in layouts.values():
                out[rows] = distance_matrix([keys[i] for i in rows], hint_keys, heuristic)
            return out
    sizes, layout = flat if flat is not None else keys_to_array(keys)
    if heuristic == "inductor":
        return score_array(sizes, layout, hint_keys).distances
    h = HEURISTICS[heuristic]
    out = np.empty((len(keys), len(hint_keys)))
    for v, hint in enumerate(hint_keys):
        if hint is None:
            out[:, v] = NO_KEY_DISTANCE
        elif tuple(len(t) for t in hint) == layout:
            flat = np.array([x for t in hint for x in t], dtype=np.int64)
            out[:, v] = h.vcombine(h.vterm(sizes, flat))
        else:  # keys that do not line up: Inductor's zip semantics, key by key
            out[:, v] = [h.distance(k, hint) for k in keys]
    return out


def _tables(session: Session, by_site: Mapping[str, Mapping[tuple[str, Key], KeyTimings]],
            calls: Mapping[str, Mapping[Key, int]]) -> list[_SiteTable]:
    out = []
    for site in session.sites:
        rows = []
        n = len(site.variants)
        for (_, key), t in by_site.get(site.name, {}).items():
            if t.fastest is None or len(t.measured) < n:  # a variant untimed there: no row
                continue
            times = [t.median(v.index) for v in site.variants]
            if all(x is not None and x > 0 for x in times):
                rows.append((key, times))
        if not rows:
            continue
        layouts = Counter(layout_of(k) for k, _ in rows)
        if len(layouts) > 1:  # one layout per table; the commonest wins
            common = layouts.most_common(1)[0][0]
            rows = [r for r in rows if layout_of(r[0]) == common]
        keys = [k for k, _ in rows]
        flat = keys_to_array(keys)
        times = np.array([r for _, r in rows], dtype=np.float64)
        weights = np.array([calls.get(site.name, {}).get(k, 0) for k in keys], dtype=np.float64)
        out.append(_SiteTable(times, times.min(axis=1), weights, [v.hint for v in site.variants],
                              {h: distance_matrix(keys, site.keys, h, flat) for h in HEURISTICS},
                              session.stands_for(site)))
    return out


def decided_among(hints: Sequence[int | None], stands_for: Sequence[frozenset[int]], subset: set[int]) -> list[int]:
    """The variants Inductor decides among with `subset` compiled: each whose hint, or a hint
    it stands for (`Session.stands_for`), is in it, and any whose hint is unknown."""
    return [v for v, h in enumerate(hints)
            if h is None or h in subset or (v < len(stands_for) and stands_for[v] & subset)]


def _subsets(hints: Sequence[int]) -> list[tuple[int, ...]]:
    largest = len(hints) if len(hints) <= MAX_EXHAUSTIVE else 4
    return [c for r in range(1, largest + 1) for c in itertools.combinations(hints, r)]


def what_ifs(session: Session, timings: Mapping[tuple[str, Key], KeyTimings] | None = None,
             calls: Mapping[str, Mapping[Key, int]] | None = None) -> list[WhatIf]:
    """Every heuristic with every subset of the compiled hints, best (lowest geometric-mean
    regret, then fewer hints) first; empty when no key has every variant measured."""
    by_site = {s.name: session.site_timings(s.name) for s in session.sites} if timings is None else per_site(timings)
    calls = calls if calls is not None else _calls(session)
    tables = _tables(session, by_site, calls)
    if not tables:
        return []
    hints = sorted({h for t in tables for h in t.hints if h is not None})
    out = []
    for heuristic in HEURISTICS:
        for subset in _subsets(hints):
            r = _evaluate(tables, heuristic, set(subset))
            if r is not None:
                out.append(WhatIf(heuristic, subset, *r))
    out.sort(key=lambda w: (round(w.geomean_regret, 9), len(w.hints), w.heuristic != "inductor", w.hints))
    return out


def _evaluate(tables: list[_SiteTable], heuristic: str, subset: set[int]) -> tuple[int, float, float, float | None] | None:
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # 1e308 us against 1e-300: ×inf, said so
        return _evaluated(tables, heuristic, subset)


def _evaluated(tables: list[_SiteTable], heuristic: str, subset: set[int]) -> tuple[int, float, float, float | None] | None:
    logs, worst, lost, best_total = [], 1.0, 0.0, 0.0
    for t in tables:
        cols = decided_among(t.hints, t.stands_for, subset)
        if not cols:
            return None
        d = t.distances[heuristic][:, cols]
        pick = np.asarray(cols)[np.argmin(d, axis=1)]  # first minimum, as Inductor
        mine = t.times[np.arange(len(pick)), pick]
        regret = mine / t.best
        logs.append(np.log(regret))
        worst = max(worst, float(regret.max()))
        lost += float((t.weights * (mine - t.best)).sum())
        best_total += float((t.weights * t.best).sum())
    all_logs = np.concatenate(logs)
    return (len(all_logs), float(np.exp(all_logs.mean())), worst,
            lost / best_total if best_total > 0 else None)


def _calls(session: Session) -> dict[str, dict[Key, int]]:
    """Calls per site and key: the recording's, else the model file's workload."""
    from kinspect.core.quality.overview import workload_calls

    return {s.name: workload_calls(session, s)[0] for s in session.sites}


def ran_hints(results: Sequence[WhatIf], hints: Sequence[int]) -> tuple[int, ...]:
    """The compiled hints that have a variant: the subset the session ran (hints tuned at the
    same sizes share one variant, the last hint's)."""
    present = {h for w in results for h in w.hints}
    return tuple(sorted(set(hints) & present))


def current(results: Sequence[WhatIf], hints: Sequence[int]) -> WhatIf | None:
    """The configuration the session ran: Inductor's heuristic with the compiled hints."""
    want = ran_hints(results, hints)
    return next((w for w in results if w.heuristic == "inductor" and w.hints == want), None)



def paste_line(results: Sequence[WhatIf]) -> str | None:
    """What to paste for the best row Inductor's own rule can run (the only heuristic a
    config sets); None without rows."""
    best = _best_inductor(results)
    return None if best is None else f"torch._inductor.config.multi_kernel_hints = {list(best.hints)}"


def paste_note(results: Sequence[WhatIf], hints: Sequence[int], program: str | None = None) -> str | None:
    """What the line to paste predicts against the compiled hints: a prediction from these
    kernels, which `kinspect advise` verifies by compiling (a recorded `program`: by running
    it, `advise --run`)."""
    best = _best_inductor(results)
    if best is None:
        return None
    now = current(results, hints)
    if now is None:
        return "the best subset on these measurements, from these kernels:"
    if now is best:
        return f"the compiled hints {list(hints)} are the best subset on these measurements:"
    verify = (f"kinspect advise --run {shown(program)} runs the program with more candidates and verifies"
              if program else "kinspect advise compiles it to verify")
    if ratio(best.geomean_regret) == ratio(now.geomean_regret):  # the sort put fewer hints first
        return (f"fewer hints, the same predicted geomean {ratio(best.geomean_regret)} as the compiled hints "
                f"{list(hints)}, from these kernels ({verify}):")
    return (f"predicted geomean {ratio(best.geomean_regret)} against {ratio(now.geomean_regret)} with the compiled "
            f"hints {list(hints)}, from these kernels ({verify}):")


def _best_inductor(results: Sequence[WhatIf]) -> WhatIf | None:
    return next((w for w in results if w.heuristic == "inductor"), None)
