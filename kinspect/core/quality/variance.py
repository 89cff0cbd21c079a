"""Compile-to-compile variance: the same hints compiled again, the same sizes timed again.

Max-autotune benchmarks each hint's configs once per compile, and close configs trade
places between compiles: on the H200 the hint-256 variant of Linear(1024->4096) ran
33.9 us at B=1000 in one compile and 22.3 us in the next. So a figure from one compile
is one draw. The session's own compile is compile 0; each `variance` recompile (the
session's hints again, fresh caches) is another. Per variant (a site's hint) and key this
module gives the spread of its time across compiles, names the hints whose emitted kernel
changed with a real latency difference (`unstable-autotune`), and the spread of each
site's geometric-mean regret.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kinspect.core.numbers import ratio, spread_text
from kinspect.core.quality.overview import SizeNamer, picks
from kinspect.core.quality.rules import session_rule
from kinspect.core.session.model import Finding, Session, Site
from kinspect.core.session.runtime import Recompile
from kinspect.core.dispatch.shapes import Key, sizes_or_key
from kinspect.core.session.timings import KeyTimings, first_of_kernel, geomean, timings_by_key

UNSTABLE_RATIO = 1.10
"""A hint is unstable where its kernel changed between compiles and its time at some key
differs by more than 10% (max over min) across them."""


@dataclass(frozen=True)
class CompileTimes:
    """One compile: each site's variants as (hint, kernel identity), and its timings."""

    label: str
    variants: Mapping[str, tuple[tuple[int | None, str], ...]]
    timings: Mapping[tuple[str, Key], KeyTimings]

    def time(self, site: str, hint: int | None, key: Key) -> float | None:
        index = next((i for i, (h, _) in enumerate(self.variants.get(site, ())) if h == hint), None)
        t = self.timings.get((site, key))
        return None if index is None or t is None else t.median(index)

    def kernel(self, site: str, hint: int | None) -> str | None:
        return next((k for h, k in self.variants.get(site, ()) if h == hint), None)


def compiles(session: Session) -> list[CompileTimes]:
    """The session's compile, then each recompile with the session's own hints."""
    out = [CompileTimes("compile 0 (inspected)", variants_of(session), session.timings())]
    for i, r in enumerate(same_hints(session.recompiles, session.compiled_hints), 1):
        out.append(CompileTimes(f"compile {i} (fresh)", r.variants, timings_by_key(r.measurements, recompile_kernels(r))))
    return out


def recompile_kernels(r: Recompile) -> dict[str, tuple[int, ...]]:
    """Per site, each of a recompile's variants' kernel: one kernel emitted at several
    hints is timed as one there too."""
    return {site: first_of_kernel([ident for _, ident in vs]) for site, vs in r.variants.items()}


def same_hints(recompiles: Iterable[Recompile], hints: Sequence[int]) -> list[Recompile]:
    want = tuple(sorted(hints))
    return [r for r in recompiles if r.error is None and tuple(sorted(r.hints)) == want]


@dataclass(frozen=True)
class Spread:
    """One variant (a site's hint) at one key, across compiles."""

    site: str
    hint: int | None
    key: Key
    times: tuple[float | None, ...]
    """Per compile, in `compiles` order (None: not timed there)."""
    kernels: tuple[str | None, ...]

    @property
    def timed(self) -> list[float]:
        return [t for t in self.times if t is not None and t > 0]

    @property
    def ratio(self) -> float | None:
        """Slowest over fastest compile (1.0: no spread); None with fewer than two times."""
        t = self.timed
        return max(t) / min(t) if len(t) >= 2 else None

    @property
    def kernel_changed(self) -> bool:
        return len({k for k in self.kernels if k is not None}) > 1


def spreads(session: Session, runs: Sequence[CompileTimes] | None = None) -> list[Spread]:
    """Every (site, hint, key) timed in at least two compiles."""
    runs = compiles(session) if runs is None else runs
    if len(runs) < 2:
        return []
    keys = sorted({where for r in runs for where in r.timings}, key=lambda w: (w[0], w[1]))
    out = []
    for site in session.sites:
        for name, key in keys:
            if name != site.name:
                continue
            for v in site.variants:
                s = Spread(site.name, v.hint, key, tuple(r.time(site.name, v.hint, key) for r in runs),
                           tuple(r.kernel(site.name, v.hint) for r in runs))
                if s.ratio is not None:
                    out.append(s)
    return out


def widest(found: Iterable[Spread]) -> list[Spread]:
    """Each variant's widest spread (over its keys), widest first: one line per variant."""
    out: dict[tuple[str, int | None], Spread] = {}
    for s in found:
        w = out.get((s.site, s.hint))
        if w is None or (s.ratio or 0) > (w.ratio or 0):
            out[(s.site, s.hint)] = s
    return sorted(out.values(), key=lambda s: -(s.ratio or 0))


@session_rule("unstable-autotune")
def unstable_autotune(session: Session) -> list[Finding]:
    """A hint whose emitted kernel changed across compiles, with more than 10% between its
    slowest and fastest time at some key. Derived on every refresh of a live session: a
    session without another compile of its hints costs nothing here."""
    if not same_hints(session.recompiles, session.compiled_hints):
        return []
    out = []
    by_hint: dict[tuple[str, int | None], list[Spread]] = {}
    for s in spreads(session):
        if s.kernel_changed and s.ratio is not None and s.ratio > UNSTABLE_RATIO:
            by_hint.setdefault((s.site, s.hint), []).append(s)
    for (site, hint), found in by_hint.items():
        worst = max(found, key=lambda s: s.ratio or 0.0)
        t = worst.timed
        sizes = SizeNamer(session)(session.site(site), worst.key)
        where = sizes_or_key(sizes, worst.key)
        kernels = len({k for k in worst.kernels if k is not None})
        index = next((v.index for v in session.site(site).variants if v.hint == hint), None)
        out.append(Finding(
            "unstable-autotune",
            f"hint {hint} emitted {kernels} different kernels over {len(worst.times)} compiles; at "
            f"{where} it ran {spread_text(min(t), max(t))} ({ratio(worst.ratio)}): "
            f"one compile's figures for this hint may mislead",
            "warning", site=site, variants=() if index is None else (index,),
        ))
    return out


def regret_spread(session: Session, runs: Sequence[CompileTimes] | None = None) -> dict[str, list[float]]:
    """Per site, each compile's geometric-mean regret of Inductor's pick over the keys
    every compile timed (the pick is the same in each: the hints are); empty with one
    compile, whose figure carries no spread (and deciding its every key again took a
    300k-measurement sweep's explain half a minute)."""
    runs = compiles(session) if runs is None else runs
    out: dict[str, list[float]] = {}
    if len(runs) < 2:
        return out
    for site in session.sites:
        keys = [k for (name, k) in runs[0].timings if name == site.name]
        keys = [k for k in keys if all((site.name, k) in r.timings for r in runs)]
        if not keys:
            continue
        hints = [site.variants[c].hint for c in picks(site, keys)]
        per = []
        for r in runs:
            mean = geomean(x for k, h in zip(keys, hints) if (x := _regret(r, site, h, k)) is not None)
            if mean is not None:
                per.append(mean)
        if per:
            out[site.name] = per
    return out


def regrets_at(runs: Sequence[CompileTimes], site: Site, pick: int, key: Key) -> list[float]:
    """The pick's regret at one key in each compile that timed every variant there; empty
    unless two compiles did (one compile's figure carries no spread)."""
    hint = site.variants[pick].hint
    found = [x for r in runs if (x := _regret(r, site, hint, key)) is not None]
    return found if len(found) > 1 else []


def _regret(run: CompileTimes, site: Site, hint: int | None, key: Key) -> float | None:
    times = [run.time(site.name, v.hint, key) for v in site.variants]
    mine = run.time(site.name, hint, key)
    if mine is None or any(t is None or t <= 0 for t in times):
        return None
    return mine / min(t for t in times if t is not None)


def variants_of(session: Session) -> dict[str, tuple[tuple[int | None, str], ...]]:
    """Each site's variants as a recompile stores them: (hint, kernel identity)."""
    return {s.name: tuple((v.hint, v.source_hash or v.kernel_name) for v in s.variants) for s in session.sites}
