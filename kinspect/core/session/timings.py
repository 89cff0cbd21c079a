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
  variants are never compared across methods; a method that reads 0 µs for some variant
  gives way to one that reads none (CUDA events less the gap between launches floor at 0
  for a kernel shorter than that gap, where CUPTI still reads its duration);
- each variant's latest measurement of that method counts; a variant that only failed
  shows its latest failure;
- one kernel is one kernel: variants with the same source and config (Inductor emits one
  kernel for several hints when their autotuning agrees) share one measurement, that of
  the first of them timed, so two launches of one kernel are never "faster" and "slower"
  than each other and picking either costs the same;
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
from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from dataclasses import dataclass, field
from typing import Any

from kinspect.core.dispatch.shapes import Key
from kinspect.core.session.records import build
from kinspect.core.session.runtime import Measurement

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
    """The first variant of the fastest kernel."""
    kernels: tuple[int, ...] = ()
    """Each variant's kernel, as the index of the first variant with its source and config
    (empty: every variant is a kernel of its own)."""

    def kernel(self, variant: int) -> int:
        return self.kernels[variant] if 0 <= variant < len(self.kernels) else variant

    def is_fastest(self, variant: int) -> bool:
        """The variant runs the fastest kernel (it may be another hint's copy of it)."""
        return self.fastest is not None and self.kernel(variant) == self.kernel(self.fastest)

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
        return self.fastest is not None and self.slower_than(picked, self.fastest)

    def slower_than(self, picked: int, other: int) -> bool:
        """The noise rule between two variants: `picked` slower than `other`, both timed by
        the method here and not one kernel."""
        if self.median(picked) is None or self.median(other) is None or self.kernel(picked) == self.kernel(other):
            return False
        return _beyond_noise(self.measured[picked], self.measured[other])

    def against_fastest(self, picked: int) -> tuple[float, float, bool] | None:
        """(`median(picked)`, the fastest's median, `slower(picked)`) in one look, or None where
        either median is missing or the fastest's is not positive: a sweep's quality asks
        this at each of 300,000 keys."""
        fastest, method = self.fastest, self.method
        if fastest is None:
            return None
        mine, best = self.measured.get(picked), self.measured.get(fastest)
        if mine is None or best is None or mine.method != method or best.method != method:
            return None
        pick_us, best_us = mine.median_us, best.median_us
        if pick_us is None or best_us is None or best_us <= 0:
            return None
        # one measurement is never beyond noise of itself (its ratio is 1), whoever's copy it is
        return pick_us, best_us, mine is not best and not self.is_fastest(picked) and _beyond_noise(mine, best)


def _beyond_noise(mine: Measurement, best: Measurement) -> bool:
    """The pick (`mine`, timed) slower than the fastest (`best`) beyond noise."""
    assert mine.median_us is not None and best.median_us is not None
    low = mine.p20_us if mine.p20_us is not None else mine.median_us
    high = best.p80_us if best.p80_us is not None else best.median_us
    if low <= high:
        return False
    return best.median_us <= 0 or mine.median_us / best.median_us >= NOISE_RATIO


def key_timings(measurements: Iterable[Measurement], method: str | None = None,
                kernels: Sequence[int] = ()) -> KeyTimings:
    """The timings of measurements taken at one site and key, in recording order; with
    `method`, that method's alone (a cross-check column); `kernels` as `KeyTimings.kernels`."""
    return KeyTimings(**_key_timings(measurements, method, tuple(kernels), _shares_kernels(kernels)))


def _key_timings(measurements: Iterable[Measurement], method: str | None, kernels: tuple[int, ...],
                 shared: bool) -> dict[str, Any]:
    """`key_timings`'s fields, told whether any two variants share a kernel (`_shares_kernels`):
    a sweep reads hundreds of thousands of keys, so work that changes nothing is skipped."""
    latest: dict[str, dict[int, Measurement]] = {}
    for m in measurements:
        by = latest.get(m.method)
        if by is None:
            by = latest[m.method] = {}
        by[m.variant] = m
    if method is not None:
        measured = dict(latest.get(method, {}))
    elif len(latest) == 1:
        ((name, measured),) = latest.items()
        method = name if any(m.median_us is not None for m in measured.values()) else None
    else:
        timed = [name for name, by in latest.items() if any(m.median_us is not None for m in by.values())]
        resolved = [name for name in timed if all(m.median_us is None or m.median_us > 0 for m in latest[name].values())]
        method = min(resolved or timed, key=_rank, default=None)
        measured = dict(latest.get(method, {})) if method is not None else {}
        for by in latest.values():
            for v, m in by.items():
                if v not in measured and m.median_us is None:
                    measured[v] = m
    if shared:
        measured = _one_per_kernel(measured, method, kernels)
    fastest = best = None
    for v, m in measured.items():
        t = m.median_us
        if t is not None and m.method == method and (best is None or t < best or t == best and v < fastest):
            fastest, best = v, t
    if len(measured) > 1:
        measured = dict(sorted(measured.items()))
    return {"method": method, "measured": measured, "fastest": fastest, "kernels": kernels}


def _shares_kernels(kernels: Sequence[int]) -> bool:
    """Some variant runs another's kernel (`kernels` is not each variant's own index)."""
    return any(k != v for v, k in enumerate(kernels))


def _one_per_kernel(measured: Mapping[int, Measurement], method: str | None,
                    kernels: Sequence[int]) -> dict[int, Measurement]:
    """Every variant of a kernel given the kernel's measurement: its first timed variant's."""
    timed: dict[int, Measurement] = {}
    for v in sorted(measured):
        m = measured[v]
        if m.method == method and m.median_us is not None and 0 <= v < len(kernels):
            timed.setdefault(kernels[v], m)
    out = dict(measured)
    for v, k in enumerate(kernels):
        if k in timed:
            out[v] = timed[k]
    return out


def timings_by_key(measurements: Iterable[Measurement], kernels: Mapping[str, Sequence[int]] | None = None
                   ) -> dict[tuple[str, Key], KeyTimings]:
    """Every (site, key) that has measurements, for readers that look up many events;
    `kernels`: per site, each variant's kernel (`Session.kernels`)."""
    groups: dict[tuple[str, Key], list[Measurement]] = {}
    for m in measurements:
        where = (m.site, m.key)
        group = groups.get(where)
        if group is None:
            groups[where] = [m]
        else:
            group.append(m)
    per_site = {name: (tuple(ks), _shares_kernels(ks)) for name, ks in (kernels or {}).items()}
    copies = {name: _copies(ks) for name, (ks, shared) in per_site.items() if shared}
    none = ((), False)
    fields = []
    for where, ms in groups.items():
        ks, shared = per_site.get(where[0], none)
        if len(ms) == 1:  # a sweep's usual key: one variant timed once, nothing to choose
            (m,) = ms
            timed = m.median_us is not None
            same = copies[where[0]][ks[m.variant]] if shared and timed and 0 <= m.variant < len(ks) else (m.variant,)
            fields.append({"method": m.method if timed else None, "measured": dict.fromkeys(same, m),
                           "fastest": same[0] if timed else None, "kernels": ks})
        else:
            fields.append(_key_timings(ms, None, ks, shared))
    return dict(zip(groups, build(KeyTimings, fields)))


def per_site(timings: Mapping[tuple[str, Key], KeyTimings]) -> dict[str, dict[tuple[str, Key], KeyTimings]]:
    """Each site's part of a timing table, keyed as the table is: readers that go site by
    site split it once instead of scanning every key per site (a sweep has 300,000)."""
    names = set(map(itemgetter(0), timings))
    if len(names) == 1:  # one site measured: its part is the whole table, copied without hashing a key again
        return {names.pop(): dict(timings)}
    out: dict[str, dict[tuple[str, Key], KeyTimings]] = {}
    for where, t in timings.items():
        out.setdefault(where[0], {})[where] = t
    return out


def _copies(kernels: Sequence[int]) -> dict[int, tuple[int, ...]]:
    """Per kernel, its variants in order: a measurement of one is every copy's (`_one_per_kernel`)."""
    out: dict[int, list[int]] = {}
    for v, k in enumerate(kernels):
        out.setdefault(k, []).append(v)
    return {k: tuple(vs) for k, vs in out.items()}


def first_of_kernel(identities: Sequence[object]) -> tuple[int, ...]:
    """Each variant's kernel as the index of the first variant with the same identity."""
    first: dict[object, int] = {}
    return tuple(first.setdefault(ident, i) for i, ident in enumerate(identities))


def method_title(method: str | None) -> str:
    return METHOD_TITLES.get(method or "", method or "nothing")


def geomean(ratios: Iterable[float]) -> float | None:
    """The geometric mean of the positive ratios; None where there is none."""
    logs = [math.log(r) for r in ratios if r > 0]
    return math.exp(sum(logs) / len(logs)) if logs else None
