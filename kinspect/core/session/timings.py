"""Measurements at a key: the preferred method, fastest, regret, the noise rule.

A variant is timed two ways at once: CUDA events over many interleaved samples, and
CUPTI's kernel duration as a cross-check. The two rarely agree to the last percent, so
"which variant is fastest" depends on which one is read. Every reader (the explain table
and its JSON, the inspector, the debugger's panel, breakpoints and conditions, reports,
the Perfetto trace) asks this module, so a session holding both methods cannot show
"fastest: v0" in one place and stop on v0 as "not the fastest" in another.

The rules, at one site and key:
- one method for every variant: CUDA events where any variant has a CUDA-event timing,
  else CUPTI, else whatever other method timed something (the first by name), so
  variants are never compared across methods;
- each variant's latest measurement of that method counts; a variant that only failed
  shows its latest failure;
- fastest: the lowest median, ties to the lowest variant index;
- regret: the picked variant's median over the fastest's;
- a pick is slower than the fastest only beyond noise: its p20 above the fastest's p80
  and its median at least 1.05 times the fastest's. Samples of one kernel spread by a
  few percent, and a "mispick" inside that spread is not one;
- ratios (regrets, slowdowns) average by their geometric mean (`geomean`): ×2 at one
  shape and ×0.5 at another are no loss overall.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kinspect.core.session.model import Measurement
    from kinspect.core.dispatch.shapes import Key

PREFERENCE = ("cuda_events", "cupti")
NOISE_RATIO = 1.05
"""The least median ratio that counts as slower, when the spreads do not overlap either."""

METHOD_TITLES = {"cuda_events": "CUDA events", "cupti": "CUPTI"}


def _rank(method: str) -> tuple[int, str]:
    return (PREFERENCE.index(method), "") if method in PREFERENCE else (len(PREFERENCE), method)


@dataclass(frozen=True)
class KeyTimings:
    """What the measurements at one site and key say."""

    method: str | None
    """The method every comparison here uses (None: nothing was timed)."""
    measured: Mapping[int, Measurement] = field(default_factory=dict)
    """Per variant: its latest measurement by `method`, else its latest failure."""
    fastest: int | None = None

    def median(self, variant: int) -> float | None:
        m = self.measured.get(variant)
        return None if m is None or m.method != self.method else m.median_us

    def regret(self, picked: int) -> float | None:
        """The picked variant's median over the fastest's (1.0: the fastest was picked)."""
        mine = self.median(picked)
        best = None if self.fastest is None else self.median(self.fastest)
        if mine is None or best is None or best <= 0:
            return None
        return mine / best

    def slower(self, picked: int) -> bool:
        """The noise rule: the pick's p20 above the fastest's p80, and at least 1.05x."""
        if self.fastest is None or picked == self.fastest or self.median(picked) is None:
            return False
        mine, best = self.measured[picked], self.measured[self.fastest]
        assert mine.median_us is not None and best.median_us is not None
        low = mine.p20_us if mine.p20_us is not None else mine.median_us
        high = best.p80_us if best.p80_us is not None else best.median_us
        if low <= high:
            return False
        return best.median_us <= 0 or mine.median_us / best.median_us >= NOISE_RATIO


def key_timings(measurements: Iterable[Measurement], method: str | None = None) -> KeyTimings:
    """The timings of measurements taken at one site and key, in recording order; with
    `method`, that method's alone (a cross-check column)."""
    latest: dict[str, dict[int, Measurement]] = {}
    for m in measurements:
        latest.setdefault(m.method, {})[m.variant] = m
    if method is None:
        timed = [name for name, by in latest.items() if any(m.median_us is not None for m in by.values())]
        method = min(timed, key=_rank, default=None)
        measured = dict(latest.get(method, {})) if method is not None else {}
        for by in latest.values():
            for v, m in by.items():
                if v not in measured and m.median_us is None:
                    measured[v] = m
    else:
        measured = dict(latest.get(method, {}))
    times = {v: m.median_us for v, m in measured.items() if m.method == method and m.median_us is not None}
    fastest = min(times, key=lambda v: (times[v], v), default=None)
    return KeyTimings(method, dict(sorted(measured.items())), fastest)


def timings_by_key(measurements: Iterable[Measurement]) -> dict[tuple[str, Key], KeyTimings]:
    """Every (site, key) that has measurements, for readers that look up many events."""
    groups: dict[tuple[str, Key], list[Measurement]] = {}
    for m in measurements:
        groups.setdefault((m.site, m.key), []).append(m)
    return {where: key_timings(ms) for where, ms in groups.items()}


def method_title(method: str | None) -> str:
    return METHOD_TITLES.get(method or "", method or "nothing")


def geomean(ratios: Iterable[float]) -> float | None:
    """The geometric mean of the positive ratios; None where there is none."""
    logs = [math.log(r) for r in ratios if r > 0]
    return math.exp(sum(logs) / len(logs)) if logs else None
