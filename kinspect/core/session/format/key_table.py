"""A session's key table checked as whole lists: a million keys of a long recording, or a
piece of them as the file streams past (`columns.cut_keys`), each checked a level at a time
by operations that run in C, before the per-key checks (`checks.a_key`) run to name the
first bad one."""

from __future__ import annotations

from itertools import chain, islice
from typing import Any

from kinspect.core.dispatch.shapes import MAX_RANK, MAX_SIZE, MAX_TENSORS, Key


class KeyTable(list):  # type: ignore[type-arg]
    """A key table already read and checked a piece at a time (`columns.cut_keys`), which `checks.a_key_table` takes as it is."""


def key_column(table: list[Any], pool: dict[tuple[int, ...], tuple[int, ...]] | None = None) -> list[Key] | None:
    """The keys of a list that holds only good ones, checked a level at a time with
    whole-list operations, else None (for a reader that names the first bad one). Each
    shape becomes a tuple once and the keys are regrouped from those in C (a sweep of
    300,000 measurements has 1,200,000 shapes); a shape met again is the same tuple (a
    weight's in every key, `(B,)` twice in a key of tiny tensors), so the table holds
    each distinct shape once."""
    counts = list(map(len, table)) if set(map(type, table)) <= {list} else None
    if counts is None or max(counts, default=0) > MAX_TENSORS:
        return None
    tensors = list(chain.from_iterable(table))
    if not set(map(type, tensors)) <= {list}:
        return None
    shapes = list(map(tuple, tensors))
    if max(map(len, shapes), default=0) > MAX_RANK:
        return None
    sizes = list(chain.from_iterable(shapes))
    if not set(map(type, sizes)) <= {int} or (sizes and (min(sizes) < 0 or max(sizes) > MAX_SIZE)):
        return None
    pool = {} if pool is None else pool
    shapes = list(map(pool.setdefault, shapes, shapes))
    if counts and counts.count(counts[0]) == len(counts) and counts[0]:
        return list(zip(*[iter(shapes)] * counts[0]))  # every key has as many tensors
    shape = iter(shapes)
    return [tuple(islice(shape, n)) for n in counts]
