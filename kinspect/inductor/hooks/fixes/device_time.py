"""`--autotune-device-time`: Inductor's autotune benchmarks time the GPU's work alone.

Inductor's benchmarker (`InductorBenchmarker.benchmark_gpu`, 2.11 to 2.15) flushes the L2
(`buffer.zero_()`), records a start event, calls the choice and records an end event. The
GPU reaches the start event as soon as the flush ends; where the host takes longer to launch
the choice than the flush takes to run (a Python launcher, a fusion benchmark's module call),
the GPU idles between the events until the launch arrives, and the time is the host's
latency plus the kernel's. On a host slower to launch, every small problem is timed on such
a floor (the H200 machine: every config of a 4.5 µs GEMM at hint 64 read 24-49 µs; an
H100's host: 5.0-8.4 µs), the configs are ranked on it, and a variant may run one slow across its
range (docs/upstream/autotune-launch-latency.md has the sessions, and what they leave open).

In this mode every start event is preceded by a spin kernel (`torch.cuda._sleep`) longer
than the host took to launch the last choice timed on this thread, so the launch is queued
while the GPU still spins and the two events bracket the GPU's work alone. Inductor's own
loop, flush, iteration counts, locks and return modes are untouched: the mode wraps the
event pairs `get_event_pairs` hands that loop. Benchmarks Inductor runs in its autotune
subprocess (`autotune_in_subproc`, which `--fit-benchmark-tensors` turns on) are outside
this process and keep the stock timing.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from typing import Any

from kinspect.inductor.hooks.fixes.modes import Mode

MIN_SPIN_US = 50.0
"""The shortest hold: a Python launch of one kernel takes 10-40 µs on the hosts measured."""
MAX_SPIN_US = 2000.0
"""The longest: a launch slowed by a garbage collection must not hold every later one."""
SPIN_PER_LAUNCH = 2.0
"""The hold over the last launch's host time, for a launch that varies from call to call."""


class Gpu:
    """The few CUDA calls the hold makes, one place for a test to stand in a GPU."""

    def sleep(self, cycles: int) -> None:
        import torch

        torch.cuda._sleep(cycles)

    def event(self) -> Any:
        import torch

        return torch.cuda.Event(enable_timing=True)

    def synchronize(self) -> None:
        import torch

        torch.cuda.synchronize()

    clock: Callable[[], float] = staticmethod(time.perf_counter)


class Hold:
    """How long to spin before a start event, learnt from the launches it brackets."""

    def __init__(self, gpu: Gpu) -> None:
        self.gpu = gpu
        self._cycles_per_us: float | None = None
        self._last = threading.local()

    def cycles_per_us(self) -> float:
        """The spin kernel's clock, timed once: `_sleep` counts cycles, and clocks differ by GPU."""
        if self._cycles_per_us is None:
            cycles = 1_000_000
            start, end = self.gpu.event(), self.gpu.event()
            self.gpu.sleep(cycles // 10)  # busy first, so the timed spin's own launch is not in its time
            start.record()
            self.gpu.sleep(cycles)
            end.record()
            self.gpu.synchronize()
            self._cycles_per_us = cycles / max(start.elapsed_time(end) * 1000.0, 1e-3)
        return self._cycles_per_us

    def spin_us(self) -> float:
        last = getattr(self._last, "us", None)
        wanted = MIN_SPIN_US if last is None else SPIN_PER_LAUNCH * last
        return min(max(wanted, MIN_SPIN_US), MAX_SPIN_US)

    def spin(self) -> None:
        self.gpu.sleep(int(self.spin_us() * self.cycles_per_us()))

    def launched(self, seconds: float) -> None:
        self._last.us = seconds * 1e6


class _Wrapped:
    """One of Inductor's events, read through: Inductor asks `start.elapsed_time(end)`."""

    def __init__(self, event: Any) -> None:
        self.event = event

    def elapsed_time(self, end: Any) -> float:
        return self.event.elapsed_time(getattr(end, "event", end))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.event, name)


class HeldStart(_Wrapped):
    """A start event whose record first queues the spin."""

    def __init__(self, event: Any, hold: Hold) -> None:
        super().__init__(event)
        self.hold = hold
        self.host_at: float | None = None

    def record(self, *a: Any, **k: Any) -> Any:
        self.hold.spin()
        done = self.event.record(*a, **k)
        self.host_at = self.hold.gpu.clock()
        return done


class TimedEnd(_Wrapped):
    """An end event that tells the hold how long the host took to launch what it closes."""

    def __init__(self, event: Any, start: HeldStart) -> None:
        super().__init__(event)
        self.start = start

    def record(self, *a: Any, **k: Any) -> Any:
        done = self.event.record(*a, **k)
        if self.start.host_at is not None:
            self.start.hold.launched(self.start.hold.gpu.clock() - self.start.host_at)
        return done


HOLD = Hold(Gpu())


def _event_pairs(orig: Any) -> Any:
    @functools.wraps(orig)
    def wrapped(benchmarker: Any, *a: Any, **k: Any) -> Any:
        pairs = orig(benchmarker, *a, **k)
        if not MODE.active:
            return pairs
        held = []
        for start, end in pairs:
            first = HeldStart(start, HOLD)
            held.append((first, TimedEnd(end, first)))
        return held
    return wrapped


def _benchmarker_class() -> Any:
    from torch._inductor.runtime import benchmarking

    return getattr(benchmarking, "InductorBenchmarker", None)


def _install() -> None:
    """`get_event_pairs` wrapped on Inductor's benchmarker class, acting only in this mode."""
    cls = _benchmarker_class()
    cls.get_event_pairs = _event_pairs(cls.get_event_pairs)


def _missing() -> list[str]:
    from torch._inductor.runtime import benchmarking

    cls = _benchmarker_class()
    if not hasattr(cls, "get_event_pairs"):
        return ["InductorBenchmarker.get_event_pairs"]
    have = getattr(benchmarking, "benchmarker", None)
    if not isinstance(have, cls):
        import torch

        why = ("TORCHINDUCTOR_USE_EXPERIMENTAL_BENCHMARKER=0 selects it" if torch.cuda.is_available()
               else "Inductor makes it where CUDA is missing")
        return [f"Inductor's event-timing benchmarker (this process has {type(have).__name__}: {why})"]
    return []


MODE = Mode("--autotune-device-time", _install, _missing)
autotune_device_time = MODE.on
"""`with autotune_device_time():` every Inductor benchmark in this process times the GPU's
work alone."""
