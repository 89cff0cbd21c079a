"""Frozen records built by the hundred thousand.

A frozen dataclass's `__init__` sets each field through `object.__setattr__` (its own
`__setattr__` refuses), which costs about 4 µs for a measurement's twelve fields: reading a
sweep of 300,000 measurements spent more than a second there, and reading its timings and
quality as much again. `build` makes the same records in C loops: each new instance gets
the dict of its fields as its `__dict__`, which is all that `__init__` leaves behind for a
dataclass with no `__post_init__` and no slots. While they are built the cycle collector
is best kept off (`collector_paused`).
"""

from __future__ import annotations

import gc
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import repeat
from typing import Any, TypeVar

R = TypeVar("R")


def build(cls: type[R], fields: Iterable[dict[str, Any]]) -> list[R]:
    """`[cls(**f) for f in fields]` for a frozen dataclass, each `f` holding every field of
    `cls` and nothing else (the caller's promise: nothing fills in defaults here)."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or hasattr(cls, "__post_init__") or hasattr(cls, "__slots__"):
        raise TypeError(f"{cls.__name__} is not a frozen dataclass whose __init__ only sets its fields")
    dicts = list(fields)
    records = list(map(object.__new__, repeat(cls, len(dicts))))
    deque(map(object.__setattr__, records, repeat("__dict__"), dicts), maxlen=0)
    return records


@contextmanager
def collector_paused(freeze: bool = False) -> Iterator[None]:
    """The cycle collector off for a block that makes records by the hundred thousand: it
    would walk them over and over meanwhile, for nothing, as they hold no cycles (with it
    on, the quality overview of a 300,000-key sweep takes about a third longer). With
    `freeze`, what is alive when the block ends is kept out of the collector's later
    passes too (`gc.freeze`), for records that live as long as the process."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if freeze:
                gc.freeze()
            gc.enable()
