"""What a site's variants cost at a key nobody measured, read off the keys that were.

The question a user brings ("how slow is my model at B=37 S=200?") is rarely at a shape
the sweep timed. The nearest measured keys (by Inductor's own distance, L1 of log2 sizes)
with their figures say what is known around it, and each variant's time there can be
estimated from two measured keys of that variant on either side of it: time is
interpolated in log time against log work (a GEMM's 2*M*N*K, else the elements of its
tensors), between the nearest measured key with less work and the nearest with more.

An estimate is not a measurement: every reader marks it as one and names the keys it
came from, and a variant whose measured keys do not reach past the shape on both sides
gets none (extrapolating a kernel's time past its measured tiles is a guess).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from kinspect.core.dispatch.batch import layout_of
from kinspect.core.dispatch.heuristics import log2_or_minus_one
from kinspect.core.dispatch.shapes import Key, format_key, sizes_or_key
from kinspect.core.numbers import distance, ratio, us_text
from kinspect.core.quality.overview import picks, session_namer
from kinspect.core.quality.roofline import gemm_flops
from kinspect.core.session.model import Session, Site
from kinspect.core.session.timings import KeyTimings

NEAREST = 3
"""How many measured keys an unmeasured shape lists."""

GEMM_WORK = "GEMM work (2·M·N·K)"
ELEMENTS = "tensor elements"


@dataclass(frozen=True)
class Nearby:
    """A measured key near the shape asked about, decided and compared as measured there."""

    key: Key
    distance: float
    """Inductor's distance from the shape asked about (L1 of log2 sizes)."""
    timings: KeyTimings
    picked: int

    @property
    def regret(self) -> float | None:
        return self.timings.regret(self.picked)

    @property
    def slower(self) -> bool:
        return self.timings.slower(self.picked)


@dataclass(frozen=True)
class VariantEstimate:
    """One variant's estimated median at the shape, and the two measured keys it is read from
    (one key twice where a measured key has the shape's very work)."""

    variant: int
    median_us: float
    below: Key
    above: Key


@dataclass(frozen=True)
class Estimate:
    """The measured keys nearest a site's unmeasured key and its variants' estimated times."""

    nearest: tuple[Nearby, ...]
    variants: Mapping[int, VariantEstimate]
    axis: str
    """What the interpolation runs along: `GEMM_WORK` or `ELEMENTS`."""
    names: Mapping[Key, Mapping[str, int]]
    """The user's sizes giving each key named here (empty where unknown)."""

    def sizes(self, key: Key) -> Mapping[str, int]:
        return self.names.get(key, {})

    @property
    def fastest(self) -> int | None:
        """The variant with the lowest estimate (ties to the lower index)."""
        if not self.variants:
            return None
        return min(self.variants.values(), key=lambda e: (e.median_us, e.variant)).variant

    def median(self, variant: int) -> float | None:
        e = self.variants.get(variant)
        return None if e is None else e.median_us

    def regret(self, picked: int) -> float | None:
        """The pick's estimate over the lowest estimate: an estimate of the regret."""
        mine, fastest = self.median(picked), self.fastest
        best = None if fastest is None else self.median(fastest)
        return None if mine is None or not best else mine / best

    def sources(self) -> list[tuple[Key, Key]]:
        """The distinct pairs of measured keys the estimates came from, in variant order."""
        return list(dict.fromkeys((e.below, e.above) for e in self.variants.values()))

    def to_json(self) -> dict[str, Any]:
        def where(key: Key) -> dict[str, Any]:
            return {"key": [list(t) for t in key], "sizes": dict(self.sizes(key))}

        return {
            "estimated": True,
            "basis": f"interpolated in log time against log {self.axis} between measured keys of the same variant",
            "variants": [{"index": e.variant, "median_us": round(e.median_us, 3), "from": [where(e.below), where(e.above)]}
                         for e in self.variants.values()],
            "fastest": self.fastest,
            "nearest": [{**where(n.key), "distance": n.distance, "picked": n.picked, "fastest": n.timings.fastest,
                         "median_us": {str(v): n.timings.median(v) for v in n.timings.measured},
                         "regret": n.regret, "slower": n.slower} for n in self.nearest],
        }


@dataclass(frozen=True)
class _Measured:
    """A site's measured keys of one layout as arrays: log2 sizes, log work, log times."""

    keys: list[Key]
    timings: list[KeyTimings]
    logs: np.ndarray
    """Keys x dims: `log2_or_minus_one` of each size, as Inductor's distance takes it."""
    work: np.ndarray
    times: np.ndarray
    """Keys x variants: the log of each variant's median, NaN where it was not timed."""
    picked: list[int]
    """Inductor's pick at each key, decided once (the nearest are asked at every keystroke)."""
    axis: str


def estimate(session: Session, site: Site, key: Key) -> Estimate | None:
    """The nearest measured keys of `site` to `key` and each variant's estimate there;
    None where no key of its layout was measured."""
    table = session.from_timings(("estimate table", site.name, layout_of(key)), lambda: _table(session, site, key))
    if table is None:
        return None
    namer = session_namer(session)
    logs = np.array([log2_or_minus_one(x) for t in key for x in t])
    far = np.abs(table.logs - logs).sum(axis=1)
    order = np.argsort(far, kind="stable")[:NEAREST]
    near = tuple(Nearby(table.keys[i], float(far[i]), table.timings[i], table.picked[i]) for i in order)
    work = _log_work(site, key, table.axis)
    variants = {}
    for v in range(len(site.variants)):
        found = _between(table, v, work, far)
        if found is not None:
            variants[v] = found
    named = {k: namer(site, k) for k in [n.key for n in near] + [k for e in variants.values() for k in (e.below, e.above)]}
    return Estimate(near, variants, table.axis, named)


def _between(table: _Measured, v: int, work: float, far: np.ndarray) -> VariantEstimate | None:
    """Variant `v` interpolated between its nearest timed key at or below `work` and its
    nearest at or above it."""
    timed = ~np.isnan(table.times[:, v])
    ends = []
    for side in (table.work <= work, table.work >= work):
        where = np.flatnonzero(timed & side)
        if not len(where):
            return None
        ends.append(int(where[np.argmin(far[where])]))
    lo, hi = ends
    span = table.work[hi] - table.work[lo]
    frac = 0.5 if span <= 0 else (work - table.work[lo]) / span
    t = table.times[lo, v] + frac * (table.times[hi, v] - table.times[lo, v])
    return VariantEstimate(v, math.exp(t), table.keys[lo], table.keys[hi])


def _table(session: Session, site: Site, like: Key) -> _Measured | None:
    layout = layout_of(like)
    axis = GEMM_WORK if gemm_flops(site, like) else ELEMENTS
    rows = [(key, t) for (_, key), t in session.site_timings(site.name).items()
            if t.fastest is not None and layout_of(key) == layout]
    if not rows:
        return None
    keys = [k for k, _ in rows]
    timings = [t for _, t in rows]
    times = np.full((len(rows), len(site.variants)), np.nan)
    for i, t in enumerate(timings):
        for v in range(len(site.variants)):
            m = t.median(v)
            if m is not None and m > 0:
                times[i, v] = math.log(m)
    logs = np.array([[log2_or_minus_one(x) for s in k for x in s] for k in keys], dtype=np.float64)
    work = np.array([_log_work(site, k, axis) for k in keys])
    return _Measured(keys, timings, logs.reshape(len(keys), -1), work, times, picks(site, keys), axis)


def _log_work(site: Site, key: Key, axis: str) -> float:
    if axis == GEMM_WORK:
        flops = gemm_flops(site, key)
        if flops:
            return math.log(flops)
    return math.log(max(1, sum(math.prod(s) for s in key)))


def where_text(est: Estimate, key: Key, inductor_names: bool = False) -> str:
    """A key named here: `B=32 S=256`, or the key itself (always, with Inductor's names)."""
    return format_key(key) if inductor_names else sizes_or_key(est.sizes(key), key)


def basis_text(est: Estimate, site: Site, inductor_names: bool = False) -> str:
    """What the estimates are and where they come from, in one line."""
    if not est.variants:
        return "no estimate: the shape lies outside the measured keys of every variant"
    pairs = [" and ".join(dict.fromkeys((where_text(est, lo, inductor_names), where_text(est, hi, inductor_names))))
             for lo, hi in est.sources()]
    missing = len(site.variants) - len(est.variants)
    out = (f"~ is an estimate, interpolated in log time against log {est.axis} between the measured "
           f"{'; '.join(pairs)} (each variant's own times)")
    if missing > 0:
        out += f"; {missing} variant{'s' if missing != 1 else ''} lie outside their measured keys: no estimate"
    return out


def nearest_text(est: Estimate, site: Site, inductor_names: bool = False) -> list[str]:
    """Each nearest measured key with what was measured there: the pick, the fastest, the cost."""
    out = []
    for n in est.nearest:
        t = n.timings
        line = f"{where_text(est, n.key, inductor_names)} (distance {distance(n.distance)}): v{n.picked} picked"
        fastest = t.fastest
        if fastest is None or t.is_fastest(n.picked):
            line += ", the fastest" if fastest is not None else ""
        else:
            regret = n.regret
            line += (f", {ratio(regret)} the fastest v{fastest}" if regret is not None else f", fastest v{fastest}")
            line += " (slower beyond noise)" if n.slower else " (within noise)"
        mine = t.median(n.picked)
        if mine is not None:
            line += f" · {us_text(mine)}"
        out.append(line)
    return out
