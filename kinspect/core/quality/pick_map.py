"""Which variant runs along a range of one size, for the compiled hints and for every
subset of them: the decision map and the what-if on hints, from the compiled code alone.

Inductor decides by the keys, so no timing is needed to know what runs where: each span
is the sizes that run one kernel, its ends found with the heuristic itself
(`boundaries`). A subset of the hints keeps the variants compiled at those hints, as a
compile with fewer hints would offer them if autotuning picked the same kernels (a
prediction, as the what-if table says: `kinspect advise` compiles it to know).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping
from dataclasses import dataclass

from kinspect.core.dispatch.reach import SPECIALISED
from kinspect.core.dispatch.shapes import SymbolShape
from kinspect.core.errors import KinspectError
from kinspect.core.quality.boundaries import boundaries
from kinspect.core.quality.whatif import MAX_EXHAUSTIVE
from kinspect.core.session.model import Session, Site


@dataclass(frozen=True)
class Span:
    lo: int
    hi: int
    variants: tuple[int, ...]
    """The variants running the kernel picked here (one kernel emitted at several hints is
    several variants); empty where these sizes give the site no key."""


@dataclass(frozen=True)
class PickMap:
    site: str
    symbol: str
    hints: tuple[int, ...]
    """The hints kept; the compiled ones for the map itself."""
    spans: tuple[Span, ...]

    def text(self, labels: Mapping[int, str]) -> str:
        """`v0 (hint 64) 2..128 · v1 (hint 256) 129..8192`."""
        def who(s: Span) -> str:
            return " = ".join(labels.get(v, f"v{v}") for v in s.variants) if s.variants else "no key"
        return " · ".join(f"{who(s)} {s.lo}..{s.hi}" if s.lo != s.hi else f"{who(s)} {s.lo}" for s in self.spans)

    def to_json(self) -> dict[str, object]:
        return {"hints": list(self.hints),
                "spans": [{"lo": s.lo, "hi": s.hi, "variants": list(s.variants)} for s in self.spans]}


def pick_map(session: Session, site: Site, symbol: str, lo: int, hi: int, fixed: Mapping[str, int],
             hints: tuple[int, ...] | None = None) -> PickMap | None:
    """The spans of `symbol` over lo..hi (other sizes at `fixed`) by the kernel picked, with
    only the variants of `hints` (all: None); None when no variant is kept."""
    kept = [v for v in site.variants if hints is None or v.hint is None or v.hint in hints]
    if not kept:
        return None
    sub = site if len(kept) == len(site.variants) else dataclasses.replace(site, variants=tuple(kept))
    members: dict[int, tuple[int, ...]] = {}
    for pos, k in enumerate(sub.kernels):
        members[k] = members.get(k, ()) + (kept[pos].index,)

    def run(pick: int | None) -> tuple[int, ...]:
        return () if pick is None else members[pick]

    first = _pick(session, sub, symbol, lo, fixed)
    spans, start, now = [], lo, first
    for b in boundaries(session, sub, symbol, lo, hi, fixed):
        spans.append(Span(start, b.last, run(now)))
        start, now = b.first, b.after
    spans.append(Span(start, hi, run(now)))
    compiled = tuple(sorted({v.hint for v in site.variants if v.hint is not None}))
    return PickMap(site.name, symbol, compiled if hints is None else hints, tuple(spans))


def _pick(session: Session, site: Site, symbol: str, x: int, fixed: Mapping[str, int]) -> int | None:
    try:
        key = session.runtime_key(site, SymbolShape({**fixed, symbol: x}))
    except KinspectError:
        return None
    return site.kernels[site.decide(key).chosen]


def what_if_maps(session: Session, site: Site, symbol: str, lo: int, hi: int,
                 fixed: Mapping[str, int]) -> list[PickMap]:
    """The map with every compiled hint, then with each smaller subset of them (largest
    first; beyond `MAX_EXHAUSTIVE` hints, subsets of at most four)."""
    hints = sorted({v.hint for v in site.variants if v.hint is not None})
    largest = len(hints) - 1 if len(hints) <= MAX_EXHAUSTIVE else 4
    subsets = [c for r in range(largest, 0, -1) for c in itertools.combinations(hints, r)]
    out = [m for m in [pick_map(session, site, symbol, lo, hi, fixed)] if m is not None]
    for subset in subsets:
        m = pick_map(session, site, symbol, lo, hi, fixed, subset)
        if m is not None:
            out.append(m)
    return out


@dataclass(frozen=True)
class SizeMaps:
    """Which variant runs along one of a site's sizes, the others held where they are."""

    symbol: str
    lo: int
    hi: int
    fixed: Mapping[str, int]
    maps: tuple[PickMap, ...]


FIRST_SIZE = max(SPECIALISED) + 1
"""The least size a graph with a dynamic size sees."""


def site_maps(session: Session, site: Site, sizes: Mapping[str, int]) -> list[SizeMaps]:
    """For each of the site's sizes (the user's names), its `what_if_maps` from 2 to four
    times the largest hint (16384 at least), the other sizes at `sizes` or else at their
    example values: what a session with nothing measured (a trace) can still map."""
    labels = [session.label_of(n) for n in sorted(site.symbols)]
    examples = {s.label: s.example for s in session.symbols if s.example is not None}
    hints = [v.hint for v in site.variants if v.hint is not None]
    hi = max([16384, *(4 * h for h in hints)])
    out = []
    for symbol in labels:
        fixed = {k: v for k in labels if k != symbol
                 if (v := sizes.get(k, examples.get(k))) is not None}
        out.append(SizeMaps(symbol, FIRST_SIZE, hi, fixed, tuple(what_if_maps(session, site, symbol, FIRST_SIZE,
                                                                                 hi, fixed))))
    return out
