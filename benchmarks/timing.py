"""The one timing helper the CPU benchmarks share (run them as scripts from benchmarks/ or
the repo root: Python puts this folder on the path)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def best_of(repeat: int, fn: Callable[[], T]) -> tuple[float, T]:
    """Fastest of `repeat` runs in seconds, and the last run's result."""
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result  # type: ignore[return-value]
