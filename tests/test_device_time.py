"""`--autotune-device-time` drives Inductor's own `InductorBenchmarker.benchmark_gpu` on a
simulated GPU: one stream whose work starts when both the GPU is free and the host has
queued it. On a host that queues the L2 flush faster than the GPU runs it, the flushes of
Inductor's memory warm-up leave the GPU behind and the launches are hidden; on one slower to
launch (a compile's threads holding the GIL) the GPU waits for each launch between the
events, and the time is the launch's as much as the kernel's."""

from __future__ import annotations

import types

import pytest
import torch
from torch._inductor.runtime import benchmarking

from kinspect.core.errors import KinspectError
from kinspect.inductor.hooks.fixes import device_time
from kinspect.inductor.hooks.fixes.device_time import MAX_SPIN_US, MIN_SPIN_US, Hold, autotune_device_time

FLUSH_US = 17.0
"""An L2-sized `zero_()` on an H100 or H200 (50 MB at about 3 TB/s)."""
KERNEL_US = 4.0


class SimGpu:
    """The host's clock and the GPU's, in µs, and the `Gpu` calls the hold makes."""

    def __init__(self, cycles_per_us: float = 1980.0, flush_launch_us: float = 2.0) -> None:
        self.flush_launch_us = flush_launch_us
        self.host = 0.0
        self.free = 0.0
        self.cycles_per_us = cycles_per_us
        self.spins: list[float] = []

    def enqueue(self, host_us: float, gpu_us: float) -> float:
        self.host += host_us
        start = max(self.free, self.host)
        self.free = start + gpu_us
        return start

    def sleep(self, cycles: int) -> None:
        self.spins.append(cycles / self.cycles_per_us)
        self.enqueue(2.0, cycles / self.cycles_per_us)

    def event(self, enable_timing: bool = True) -> SimEvent:
        return SimEvent(self)

    def synchronize(self) -> None:
        self.host = max(self.host, self.free)

    def clock(self) -> float:
        return self.host / 1e6


class SimEvent:
    def __init__(self, gpu: SimGpu) -> None:
        self.gpu = gpu
        self.at: float | None = None

    def record(self, *a: object, **k: object) -> None:
        self.at = self.gpu.enqueue(1.0, 0.0)

    def elapsed_time(self, end: SimEvent) -> float:
        return (end.at - self.at) / 1000.0


class SimBuffer:
    def __init__(self, gpu: SimGpu) -> None:
        self.gpu = gpu

    def zero_(self) -> None:
        self.gpu.enqueue(self.gpu.flush_launch_us, FLUSH_US)


class SimTorch:
    """`torch` as the benchmarking module sees it: its CUDA calls and the flush buffer on
    the simulated GPU, the rest torch's own."""

    def __init__(self, gpu: SimGpu) -> None:
        self._gpu = gpu
        self.cuda = types.SimpleNamespace(synchronize=gpu.synchronize, Event=gpu.event, is_available=lambda: True)

    def empty(self, *a: object, **k: object) -> SimBuffer:
        return SimBuffer(self._gpu)

    def __getattr__(self, name: str) -> object:
        return getattr(torch, name)


@pytest.fixture
def gpu(monkeypatch: pytest.MonkeyPatch) -> SimGpu:
    sim = SimGpu()
    monkeypatch.setattr(benchmarking, "torch", SimTorch(sim))
    if hasattr(benchmarking, "get_interface_for_device"):  # torch 2.13: the device interface, not torch.cuda
        interface = types.SimpleNamespace(synchronize=sim.synchronize, Event=sim.event)
        monkeypatch.setattr(benchmarking, "get_interface_for_device", lambda device: interface)
    monkeypatch.setattr(device_time, "HOLD", Hold(sim))
    monkeypatch.setattr(benchmarking, "benchmarker", benchmarking.InductorBenchmarker())  # a CUDA machine's (2.11)
    return sim


def timed(launch_us: float, gpu: SimGpu) -> float:
    """Inductor's benchmark of one kernel whose launch takes the host `launch_us`, in µs."""
    bench = benchmarking.InductorBenchmarker()
    bench.__dict__["L2_cache_size"] = 50 << 20
    return bench.benchmark_gpu(lambda: gpu.enqueue(launch_us, KERNEL_US), is_vetted_benchmarking=True) * 1000.0


def test_stock_inductor_times_the_hosts_launch_on_a_host_slower_than_the_flush(gpu):
    assert timed(30.0, gpu) == pytest.approx(KERNEL_US)  # the warm-up's flushes keep the GPU behind the host
    gpu.flush_launch_us = 20.0
    assert timed(30.0, gpu) == pytest.approx(1.0 + 30.0 - FLUSH_US + KERNEL_US)  # the GPU waits for the launch
    assert not gpu.spins


def test_in_the_mode_a_slow_hosts_benchmark_times_the_kernel_alone(gpu):
    gpu.flush_launch_us = 20.0
    with autotune_device_time():
        assert timed(30.0, gpu) == pytest.approx(KERNEL_US)
    assert gpu.spins and min(gpu.spins) >= MIN_SPIN_US
    spins = len(gpu.spins)
    assert timed(30.0, gpu) > 3 * KERNEL_US  # the mode off: Inductor's own events again
    assert len(gpu.spins) == spins


def test_the_hold_grows_with_a_long_launch_and_stays_bounded(gpu):
    """A fusion benchmark's module call launches for longer than one kernel; the first pair
    leaks it, the next ones hold for twice the launch, and the minimum is the kernel's."""
    gpu.flush_launch_us = 20.0
    with autotune_device_time():
        assert timed(150.0, gpu) == pytest.approx(KERNEL_US)
        assert max(gpu.spins) >= 2 * 150.0
        timed(50_000.0, gpu)  # a launch held up by a collection
    assert max(gpu.spins) == pytest.approx(MAX_SPIN_US, rel=1e-3)


def test_the_spin_is_timed_on_the_gpus_own_clock(gpu):
    """`_sleep` counts cycles: the hold times its clock once, so a slower clock spins as long."""
    slow = SimGpu(cycles_per_us=1100.0)
    hold = Hold(slow)
    hold.spin()
    assert slow.spins[-1] == pytest.approx(MIN_SPIN_US, rel=1e-3)


def test_a_benchmarker_without_event_pairs_is_refused_in_one_line(monkeypatch):
    monkeypatch.setattr(benchmarking, "benchmarker", benchmarking.TritonBenchmarker())
    with pytest.raises(KinspectError) as said, autotune_device_time():
        pass
    assert "--autotune-device-time needs" in str(said.value) and "TritonBenchmarker" in str(said.value)
    assert "\n" not in str(said.value)
