"""`--autotune-device-time` on the GPU: Inductor's own benchmarker timing a small GEMM while
another thread holds the GIL in turns (as a compile's threads do), so the host queues each L2
flush and each launch slower than the GPU runs them, against CUPTI's duration of the same
kernel; stock, the events take the host's wait in. The whole programs, with the switch beside both fixes, run in test_gpu_programs.py
(mode `timed`).

The hold's code on the CPU, against Inductor's benchmarker on a simulated GPU:
tests/test_device_time.py.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator

import torch
from torch._inductor.runtime import benchmarking

from kinspect.inductor.hooks.fixes.device_time import autotune_device_time
from kinspect.inductor.timing.measure import kernel_durations, summarize

LAUNCH_WAIT_US = 60.0
"""Longer than an L2 flush runs on any GPU of these machines (17-25 µs)."""
EVENTS_US = 6.0
"""What a pair of CUDA events adds to a kernel's CUPTI time with nothing waiting on the host:
3.5-4.5 µs on the H100 (Inductor's stock time of a quickly launched kernel has it too)."""


def _slow_launch(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor):
    def call() -> None:
        until = time.perf_counter() + LAUNCH_WAIT_US / 1e6
        while time.perf_counter() < until:
            pass
        torch.mm(a, b, out=out)
    return call


@contextlib.contextmanager
def _gil_taken_in_turns() -> Iterator[None]:
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            pass

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    other = threading.Thread(target=spin, daemon=True)
    other.start()
    try:
        yield
    finally:
        stop.set()
        other.join()
        sys.setswitchinterval(interval)


def test_inductors_benchmark_of_a_slow_launch_times_the_kernel_in_the_mode():
    a = torch.randn(64, 512, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(512, 2048, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(64, 2048, device="cuda", dtype=torch.bfloat16)
    kernel = summarize(kernel_durations(lambda: torch.mm(a, b, out=out), 50)).median_us
    call = _slow_launch(a, b, out)
    bench = benchmarking.benchmarker
    with _gil_taken_in_turns():
        stock = bench.benchmark_gpu(call) * 1000.0
        with autotune_device_time():
            held = bench.benchmark_gpu(call) * 1000.0
    print(f"\nmm 64x512x2048: CUPTI {kernel:.1f} µs; Inductor's benchmark with a {LAUNCH_WAIT_US:.0f} µs launch: "
          f"stock {stock:.1f} µs, --autotune-device-time {held:.1f} µs")
    assert stock > held + 10.0  # stock: the host's wait is in the time
    assert held <= kernel + EVENTS_US  # held: the kernel's own, with what the events themselves add


def test_a_triton_kernels_own_launch_is_kept_out_of_inductors_benchmark():
    """No thread beside it: a Triton kernel launched through Triton's Python launcher, as every
    config Inductor autotunes is. Stock, the time is the kernel's where the host launches it
    faster than the GPU flushes the L2, and the launch's where slower (what the H200 machine's
    autotune tables show); held, the kernel's on any host."""
    import triton
    import triton.language as tl

    @triton.jit
    def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)

    x = torch.randn(1 << 20, device="cuda")
    out = torch.empty_like(x)

    def call() -> None:
        scale[(x.numel() // 1024,)](x, out, x.numel(), BLOCK=1024)

    call()
    kernel = summarize(kernel_durations(call, 50)).median_us
    bench = benchmarking.benchmarker
    stock = bench.benchmark_gpu(call) * 1000.0
    with autotune_device_time():
        held = bench.benchmark_gpu(call) * 1000.0
    print(f"\ntriton scale of 2**20 floats: CUPTI {kernel:.1f} µs; Inductor's benchmark: stock {stock:.1f} µs, "
          f"--autotune-device-time {held:.1f} µs")
    assert held <= kernel + EVENTS_US and held <= stock + 1.0
