"""One dispatch decision: which variant a site picks for a runtime key, and why.

The decision mirrors `SizeHintMultiKernelCall._select_kernel_by_shape`: a distance per
variant (2**62 for a variant without a key), then `dists.index(min(dists))`, so the first
minimum wins. On top it keeps what Inductor throws away: the per-dimension terms, every
variant tied at the minimum, and whether the keys even line up (Inductor's `zip` silently
drops the tail of the longer key).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kinspect.core.dispatch.heuristics import HEURISTICS, Heuristic, distance_text
from kinspect.core.dispatch.shapes import Key


@dataclass(frozen=True)
class VariantScore:
    index: int
    key: Key | None
    distance: float
    terms: tuple[tuple[float, ...], ...]
    mismatch: str | None
    """Why this key does not line up with the runtime key, or None when it does."""


@dataclass(frozen=True)
class Decision:
    runtime_key: Key
    heuristic: str
    scores: tuple[VariantScore, ...]
    chosen: int
    tied: tuple[int, ...]
    """Every variant at the minimum distance; Inductor takes the first of them."""

    @property
    def is_tie(self) -> bool:
        return len(self.tied) > 1

    @property
    def mismatched(self) -> tuple[int, ...]:
        return tuple(s.index for s in self.scores if s.mismatch)

    def reason(self, labels: Sequence[str] | None = None) -> str:
        """One sentence for a user: why this variant, in terms of the runtime key."""
        def name(i: int) -> str:
            return labels[i] if labels else f"variant {i}"

        best = self.scores[self.chosen]
        if len(self.scores) == 1:
            return f"{name(self.chosen)} is the only variant"
        if self.is_tie:
            others = ", ".join(name(i) for i in self.tied[1:])
            return (
                f"tie at distance {distance_text(best.distance, self.heuristic)} between {name(self.chosen)} and {others}: "
                f"the first minimum wins"
            )
        runner = min(
            (s for s in self.scores if s.index != self.chosen), key=lambda s: s.distance
        )
        return (
            f"{name(self.chosen)} is nearest at distance {distance_text(best.distance, self.heuristic)}; "
            f"next is {name(runner.index)} at {distance_text(runner.distance, self.heuristic)}"
        )


def key_mismatch(runtime: Key, hint: Key | None) -> str | None:
    if hint is None:
        return "variant has no key (Inductor charges 2**62)"
    if len(runtime) != len(hint):
        return (
            f"runtime key has {len(runtime)} tensors, hint key {len(hint)}: "
            f"Inductor compares only the first {min(len(runtime), len(hint))}"
        )
    for i, (a, b) in enumerate(zip(runtime, hint)):
        if len(a) != len(b):
            return (
                f"tensor {i} has rank {len(a)} at run time but {len(b)} in the hint key: "
                f"Inductor compares only the first {min(len(a), len(b))} dims"
            )
    return None


def decide(
    hint_keys: Sequence[Key | None], runtime: Key, heuristic: str | Heuristic = "inductor"
) -> Decision:
    if not hint_keys:
        raise ValueError("a site needs at least one variant")
    h = HEURISTICS[heuristic] if isinstance(heuristic, str) else heuristic
    scores = tuple(
        VariantScore(
            index=i,
            key=k,
            distance=h.distance(runtime, k),
            terms=h.terms(runtime, k) if k is not None else (),
            mismatch=key_mismatch(runtime, k),
        )
        for i, k in enumerate(hint_keys)
    )
    dists = [s.distance for s in scores]
    best = min(dists)
    chosen = dists.index(best)
    tied = tuple(i for i, d in enumerate(dists) if d == best)
    return Decision(runtime, h.name, scores, chosen, tied)
