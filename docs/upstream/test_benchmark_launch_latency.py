# Owner(s): ["module: inductor"]
"""`InductorBenchmarker.benchmark_gpu` times the GPU's work alone, also on a host slower to
launch the benchmarked callable than the GPU runs the L2 flush before it
(autotune-launch-latency.patch). Stock Inductor's events then take the launch latency in.
The GPU is simulated: one stream whose work starts when both the GPU is free and the host
has queued it. In PyTorch's tree this sits beside test/inductor/test_benchmarking.py; run it
here with `python test_benchmark_launch_latency.py`."""

import types
import unittest.mock

import torch
from torch._inductor.runtime import benchmarking
from torch._inductor.test_case import run_tests, TestCase

FLUSH_US = 17.0  # an L2-sized zero_() on an H100 (50 MB at about 3 TB/s)
KERNEL_US = 4.0


class _Stream:
    def __init__(self, flush_launch_us):
        self.flush_launch_us = flush_launch_us
        self.host = self.free = 0.0

    def enqueue(self, host_us, gpu_us):
        self.host += host_us
        start = max(self.free, self.host)
        self.free = start + gpu_us
        return start

    def synchronize(self):
        self.host = max(self.host, self.free)

    def sleep(self, cycles):
        self.enqueue(2.0, cycles / 1980.0)  # a 1.98 GHz clock

    def event(self, enable_timing=True):
        stream = self

        class _Event:
            at = None

            def record(self, *args, **kwargs):
                self.at = stream.enqueue(1.0, 0.0)

            def elapsed_time(self, end):
                return (end.at - self.at) / 1000.0

        return _Event()


class _Torch:
    """`torch` as the benchmarking module sees it, with its CUDA calls on the stream."""

    def __init__(self, stream):
        self._stream = stream
        self.cuda = types.SimpleNamespace(synchronize=stream.synchronize, Event=stream.event,
                                          _sleep=stream.sleep, is_available=lambda: True)

    def empty(self, *args, **kwargs):
        return types.SimpleNamespace(zero_=lambda: self._stream.enqueue(self._stream.flush_launch_us, FLUSH_US))

    def __getattr__(self, name):
        return getattr(torch, name)


class TestBenchmarkLaunchLatency(TestCase):
    def _timed_us(self, flush_launch_us, launch_us):
        stream = _Stream(flush_launch_us)
        patches = [unittest.mock.patch.object(benchmarking, "torch", _Torch(stream)),
                   unittest.mock.patch.object(benchmarking, "time", types.SimpleNamespace(
                       perf_counter=lambda: stream.host / 1e6))]
        if hasattr(benchmarking, "get_interface_for_device"):
            interface = types.SimpleNamespace(synchronize=stream.synchronize, Event=stream.event)
            patches.append(unittest.mock.patch.object(benchmarking, "get_interface_for_device",
                                                      lambda device: interface))
        cycles = getattr(benchmarking, "_sleep_cycles_per_second", None)
        if cycles is not None:
            cycles.cache_clear()
        for p in patches:
            p.start()
            self.addCleanup(p.stop)
        bench = benchmarking.InductorBenchmarker()
        bench.__dict__["L2_cache_size"] = 50 << 20
        timed = bench.benchmark_gpu(lambda: stream.enqueue(launch_us, KERNEL_US), is_vetted_benchmarking=True)
        if cycles is not None:
            cycles.cache_clear()
        return timed * 1000.0

    def test_a_fast_host_times_the_kernel(self):
        # The memory warm-up's flushes leave the GPU behind the host, which hides the launches.
        self.assertAlmostEqual(self._timed_us(flush_launch_us=2.0, launch_us=30.0), KERNEL_US)

    def test_a_slow_host_times_the_kernel_too(self):
        # The host queues each flush slower than the GPU runs it: stock, the GPU waits for the
        # 30 µs launch between the events and the 4 µs kernel reads 18 µs.
        self.assertAlmostEqual(self._timed_us(flush_launch_us=20.0, launch_us=30.0), KERNEL_US)

    def test_a_long_launch_is_held_for(self):
        # A fusion benchmark's module call launches for longer than one kernel does.
        self.assertAlmostEqual(self._timed_us(flush_launch_us=20.0, launch_us=150.0), KERNEL_US)


if __name__ == "__main__":
    run_tests()
