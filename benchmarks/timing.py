"""The one timing helper the CPU benchmarks share (run them as scripts from benchmarks/ or
the repo root: Python puts this folder on the path)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
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


@contextlib.contextmanager
def busy_core(on: bool = True) -> Iterator[None]:
    """Keep one core busy beside the benchmark (`--busy`), as another job on the same
    machine does: a process of its own spinning until the block ends."""
    if not on:
        yield
        return
    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        spin.kill()
        spin.wait()


def load_note() -> str:
    """The machine's load average, printed with every figure: other work shares the cores."""
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min), {os.cpu_count()} cores"
