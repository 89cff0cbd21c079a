"""Inductor's choice for many runtime keys at once: sweeps, heat maps, workload replays.

A sweep over one symbol (B = 1 .. 1,000,000) asks the same question a million times;
`decide` answers it in Python per key, this module answers it with numpy per column.
The answers must be Inductor's to the last bit, because a sweep is mostly interesting
at the geometric midpoints where two variants tie and the first one wins. Two rules
keep them identical to `SizeHintMultiKernelCall._dist_heuristic`:

- logarithms come from `math.log2` on each distinct size, never `np.log2`, which may
  round differently by one ulp and turn an exact tie into a strict win;
- terms are added in Inductor's order (per tensor left to right from 0, then tensors
  left to right), never with `np.sum`, whose pairwise summation rounds differently.

Only the `inductor` heuristic is vectorised: the others exist for one-off what-if
comparisons, where `decide` is fast enough.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kinspect.core.dispatch.decision import key_mismatch
from kinspect.core.errors import ShapeError
from kinspect.core.dispatch.heuristics import NO_KEY_DISTANCE, log2_or_minus_one
from kinspect.core.dispatch.shapes import Key

Layout = tuple[int, ...]
"""The rank of each tensor of a key: `(1, 2, 2, 2)` for addmm's (bias, x, weight, out)."""


@dataclass(frozen=True)
class BatchScores:
    chosen: np.ndarray
    """Per runtime key, the index of the variant Inductor runs (first minimum)."""
    distances: np.ndarray
    """Per runtime key and variant, Inductor's distance (2**62 for a variant without key)."""
    mismatch: tuple[str | None, ...]
    """Per variant, why its key does not line up with the runtime keys' layout, or None."""


def layout_of(key: Key) -> Layout:
    return tuple(map(len, key))  # a generator costs a 300,000-key sweep's quality a second


def of_layout(keys: Sequence[Key], layout: Layout) -> np.ndarray:
    """Per key, whether it has `layout`: the ranks of all keys compared at once, as a
    sweep's 300,000 keys are each checked before scoring."""
    n = len(keys)
    fits = np.fromiter(map(len, keys), np.int64, n) == len(layout)
    if not fits.all():
        return np.array([layout_of(k) == layout for k in keys], dtype=bool)
    ranks = np.fromiter(map(len, itertools.chain.from_iterable(keys)), np.int64, n * len(layout))
    return (ranks.reshape(n, len(layout)) == np.asarray(layout, dtype=np.int64)).all(axis=1)


def keys_to_array(keys: Sequence[Key]) -> tuple[np.ndarray, Layout]:
    """Flatten keys of one layout into an (N, total rank) int64 array."""
    if not keys:
        raise ShapeError("no runtime keys to score")
    layout = layout_of(keys[0])
    fits = of_layout(keys, layout)
    if not fits.all():
        i = int(np.argmin(fits))
        raise ShapeError(f"runtime key {i} has tensor ranks {layout_of(keys[i])}, key 0 has {layout}: "
                         f"a batch holds keys of one layout")
    width = sum(layout)
    flat = np.fromiter(
        itertools.chain.from_iterable(itertools.chain.from_iterable(keys)),
        dtype=np.int64,
        count=len(keys) * width,
    )
    return flat.reshape(len(keys), width), layout


def _column_logs(column: np.ndarray) -> np.ndarray | float:
    """Inductor's log of every size in one column, via `math.log2` on the distinct sizes."""
    first = int(column[0])
    if (column == first).all():
        return log2_or_minus_one(first)
    if (column[1:] >= column[:-1]).all():  # a sweep: distinct sizes without sorting
        starts = np.empty(len(column), dtype=bool)
        starts[0] = True
        np.not_equal(column[1:], column[:-1], out=starts[1:])
        distinct, where = column[starts], np.cumsum(starts) - 1
    else:
        distinct, where = np.unique(column, return_inverse=True)
    positive = int(np.searchsorted(distinct, 0, side="right"))  # sorted: sizes <= 0 come first
    logs = np.full(len(distinct), -1.0)
    logs[positive:] = np.fromiter(map(math.log2, distinct[positive:].tolist()), np.float64, len(distinct) - positive)
    return logs[where]


class _Terms:
    """Per-column terms |log2 x - log2 y|, each computed once.

    Logs are shared between identical columns (B appears in both x and out), and a term
    is shared between variants and tensors that compare the same column with the same
    hint size.
    """

    def __init__(self, sizes: np.ndarray) -> None:
        self.sizes = sizes
        self.canonical: dict[int, int] = {}
        self.logs: dict[int, np.ndarray | float] = {}
        self.terms: dict[tuple[int, float], np.ndarray | float] = {}

    def _canonical(self, j: int) -> int:
        if j not in self.canonical:
            column = self.sizes[:, j]
            same = next((i for i in self.logs if self._same(i, column)), None)
            self.canonical[j] = j if same is None else same
            if same is None:
                self.logs[j] = _column_logs(column)
        return self.canonical[j]

    def _same(self, i: int, column: np.ndarray) -> bool:
        if not isinstance(self.logs[i], np.ndarray):
            return False
        other = self.sizes[:, i]
        return other[0] == column[0] and other[-1] == column[-1] and np.array_equal(other, column)

    def __call__(self, j: int, y: int) -> np.ndarray | float:
        c, ly = self._canonical(j), log2_or_minus_one(y)
        if (c, ly) not in self.terms:
            self.terms[(c, ly)] = np.abs(self.logs[c] - ly)
        return self.terms[(c, ly)]


def _distance(terms: _Terms, layout: Layout, hint: Key) -> np.ndarray | float:
    # Inductor: out = 0; for each zipped tensor, out += sum(term for each zipped dim).
    out: np.ndarray | float = 0.0
    start = 0
    for rank, hint_shape in zip(layout, hint):
        tensor: np.ndarray | float = 0.0
        for j, y in zip(range(start, start + rank), hint_shape):
            tensor = _add(tensor, terms(j, y))
        out = _add(out, tensor)
        start += rank
    return out


def _add(acc: np.ndarray | float, x: np.ndarray | float) -> np.ndarray | float:
    """`acc + x`, skipping the addition when either side is a scalar 0.

    Terms are never negative, so adding 0 is exact either way: skipping it changes no
    bit, and saves a pass over N keys for each constant dim that equals its hint.
    """
    if not isinstance(acc, np.ndarray) and acc == 0.0:
        return x
    if not isinstance(x, np.ndarray) and x == 0.0:
        return acc
    return acc + x


def score_array(sizes: np.ndarray, layout: Sequence[int], hint_keys: Sequence[Key | None]) -> BatchScores:
    """Score N runtime keys, given as an (N, sum(layout)) integer array, against V variants."""
    sizes = np.asarray(sizes)
    layout = tuple(layout)
    if not hint_keys:
        raise ValueError("a site needs at least one variant")
    if sizes.ndim != 2 or sizes.shape[1] != sum(layout) or not np.issubdtype(sizes.dtype, np.integer):
        raise ShapeError(
            f"runtime sizes must be an integer array of shape (N, {sum(layout)}), "
            f"got {sizes.dtype} {sizes.shape}"
        )
    n = sizes.shape[0]
    by_variant = np.empty((len(hint_keys), n), dtype=np.float64)  # rows: contiguous writes
    if n == 0:
        return BatchScores(np.empty(0, dtype=np.int64), by_variant.T, _mismatches(layout, hint_keys))
    terms = _Terms(sizes.astype(np.int64, copy=False))
    for v, hint in enumerate(hint_keys):
        by_variant[v] = NO_KEY_DISTANCE if hint is None else _distance(terms, layout, hint)
    chosen = np.argmin(by_variant, axis=0)
    return BatchScores(chosen, by_variant.T, _mismatches(layout, hint_keys))


def score_keys(keys: Sequence[Key], hint_keys: Sequence[Key | None]) -> BatchScores:
    """Score runtime keys of one layout against V variants."""
    sizes, layout = keys_to_array(keys)
    return score_array(sizes, layout, hint_keys)


def _mismatches(layout: Layout, hint_keys: Sequence[Key | None]) -> tuple[str | None, ...]:
    shape_only = tuple((0,) * r for r in layout)
    return tuple(key_mismatch(shape_only, h) for h in hint_keys)
