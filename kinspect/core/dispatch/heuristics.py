"""Distance heuristics between a runtime key and a variant's hint key.

`inductor` is Inductor's own `SizeHintMultiKernelCall._dist_heuristic`, reproduced with
the same operations in the same order so that ties (geometric midpoints between hints)
break exactly as Inductor breaks them; tests compare it with the real class. The others
exist for what-if comparison: "would another rule have picked the faster kernel?".

Every heuristic is a per-dimension term plus a way to combine terms, so that the
inspector can show which tensor and dimension drove a distance.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from kinspect.core.dispatch.shapes import Key
from kinspect.core.numbers import distance

NO_KEY_DISTANCE = 2**62
"""What Inductor charges a variant without a key (`2**62`, an int)."""

UNCOVERED = 1.0e6
"""Per-dimension charge of `ceil` when a hint is below the runtime size."""


def log2_or_minus_one(v: int) -> float:
    """Inductor's log: sizes <= 0 map to -1 rather than failing."""
    return math.log2(v) if v > 0 else -1


def _inductor_term(x: int, y: int) -> float:
    return abs(log2_or_minus_one(x) - log2_or_minus_one(y))


def _inductor_distance(runtime: Key, hint: Key) -> float:
    # Same statement shapes as Inductor: a generator sum per tensor, accumulated in order.
    out = 0
    for s1, s2 in zip(runtime, hint):
        out += sum(_inductor_term(x, y) for x, y in zip(s1, s2))
    return out


def _sum_combine(terms: Sequence[float]) -> float:
    return math.fsum(terms)


def _l2_combine(terms: Sequence[float]) -> float:
    return math.sqrt(math.fsum(t * t for t in terms))


def _max_combine(terms: Sequence[float]) -> float:
    return max(terms, default=0.0)


def _plain_term(x: int, y: int) -> float:
    return float(abs(x - y))


def _ceil_term(x: int, y: int) -> float:
    if y >= x:
        return log2_or_minus_one(y) - log2_or_minus_one(x)
    return UNCOVERED + _inductor_term(x, y)


def _log2_array(x: np.ndarray) -> np.ndarray:
    out = np.full(x.shape, -1.0)
    np.log2(x, out=out, where=x > 0)
    return out


def _v_log_term(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.abs(_log2_array(x) - _log2_array(y))


def _v_plain_term(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.abs(x - y).astype(np.float64)


def _v_ceil_term(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    lx, ly = _log2_array(x), _log2_array(y)
    return np.where(y >= x, ly - lx, UNCOVERED + np.abs(lx - ly))


def _v_sum(terms: np.ndarray) -> np.ndarray:
    return terms.sum(axis=-1)


def _v_l2(terms: np.ndarray) -> np.ndarray:
    return np.sqrt((terms * terms).sum(axis=-1))


def _v_max(terms: np.ndarray) -> np.ndarray:
    return terms.max(axis=-1, initial=0.0)


@dataclass(frozen=True)
class Heuristic:
    """A named distance: smaller is closer; the first minimum wins, as in Inductor."""

    name: str
    title: str
    doc: str
    term: Callable[[int, int], float]
    combine: Callable[[Sequence[float]], float]
    vterm: Callable[[np.ndarray, np.ndarray], np.ndarray]
    vcombine: Callable[[np.ndarray], np.ndarray]
    """The same term and combination over arrays, for what-ifs over many keys at once;
    they may differ from the scalar ones in the last bit (Inductor's own heuristic is
    scored exactly by `kinspect.core.dispatch.batch` instead)."""
    exact: Callable[[Key, Key], float] | None = None

    def terms(self, runtime: Key, hint: Key) -> tuple[tuple[float, ...], ...]:
        """Per-tensor, per-dimension terms over Inductor's zip (shorter side wins)."""
        return tuple(
            tuple(self.term(x, y) for x, y in zip(s1, s2)) for s1, s2 in zip(runtime, hint)
        )

    def distance(self, runtime: Key, hint: Key | None) -> float:
        if hint is None:
            return NO_KEY_DISTANCE
        if self.exact is not None:
            return self.exact(runtime, hint)
        flat = [t for tensor in self.terms(runtime, hint) for t in tensor]
        return self.combine(flat)


HEURISTICS: dict[str, Heuristic] = {
    h.name: h
    for h in (
        Heuristic(
            "inductor",
            "log2 L1 (Inductor)",
            "Sum over tensors and dims of |log2 runtime - log2 hint|, log2 of a size <= 0 "
            "taken as -1: exactly SizeHintMultiKernelCall._dist_heuristic.",
            _inductor_term,
            _sum_combine,
            _v_log_term,
            _v_sum,
            exact=_inductor_distance,
        ),
        Heuristic(
            "log2-l2",
            "log2 L2",
            "Euclidean distance of log2 sizes: punishes one far-off dimension more than "
            "several slightly-off ones.",
            _inductor_term,
            _l2_combine,
            _v_log_term,
            _v_l2,
        ),
        Heuristic(
            "log2-linf",
            "log2 L-infinity",
            "The largest single |log2 runtime - log2 hint|: only the worst dimension counts.",
            _inductor_term,
            _max_combine,
            _v_log_term,
            _v_max,
        ),
        Heuristic(
            "l1",
            "plain L1",
            "Sum of |runtime - hint| on raw sizes: two hints split at their arithmetic mean, "
            "not their geometric one, so a shape just past the geometric midpoint stays with "
            "the smaller hint (B=2000 between hints 256 and 4096).",
            _plain_term,
            _sum_combine,
            _v_plain_term,
            _v_sum,
        ),
        Heuristic(
            "ceil",
            "smallest hint not below",
            "Prefer a variant whose hint key is at least the runtime size in every dim "
            "(a kernel tuned for a larger problem), the smallest such; dims it does not "
            "cover cost 1e6 each plus their log2 distance, so with none covering the "
            "closest largest hint wins.",
            _ceil_term,
            _sum_combine,
            _v_ceil_term,
            _v_sum,
        ),
    )
}


def distance_text(value: float, heuristic: str = "inductor") -> str:
    """A distance as a user reads it: `no key` for Inductor's 2**62, and for `ceil` the
    dims whose hint is below the runtime size counted rather than shown as 1e6 each."""
    if value >= NO_KEY_DISTANCE:
        return "no key"
    if heuristic == "ceil" and value >= UNCOVERED:
        n = int(value // UNCOVERED)
        return f"{n} dim{'s' if n != 1 else ''} above hint + {distance(value - n * UNCOVERED)}"
    return distance(value)


def get_heuristic(name: str) -> Heuristic:
    try:
        return HEURISTICS[name]
    except KeyError:
        from kinspect.core.errors import KinspectError

        known = ", ".join(HEURISTICS)
        raise KinspectError(f"unknown heuristic {name!r}; known: {known}") from None
