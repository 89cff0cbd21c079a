"""Kernel-level latency of every variant of a site, with the arguments of a real call.

Timing the whole compiled call hides 4-50 us kernels under ~80 us of Python and launch
overhead, so kinspect launches each variant's kernel itself (`kernel.run` on the filtered
arguments, as `SizeHintMultiKernelCall.run` does) and times it with CUDA events:

- a sample is the difference between the CUDA-event spans of two graphs of back-to-back
  launches of one variant (n + m launches and m launches), divided by n: neither the CPU's
  launch cost nor the fixed cost of a timed graph replay enters it. That fixed cost is
  1.5-6.5 us on an H200 and depends on the kernel (benchmarks/event_vs_cupti.py fits it),
  so dividing one span by its launch count read up to 5.7% high on 45-100 us kernels. The GPU
  is held by a sleep kernel while a round is queued;
- variants are interleaved round by round, so drift hits all of them alike, and the
  median with its p20-p80 spread is reported, never one number;
- warm-up launches (which also compile a variant that never ran) are excluded;
- every tensor argument is snapshotted and restored after each variant's batch, so a
  kernel that writes an input cannot change what the next variant reads;
- optionally a 256 MiB buffer is written between launches to flush L2.

CUPTI kernel durations from `torch.profiler` give an independent cross-check.
"""

from __future__ import annotations

import statistics
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kinspect.core.printing import Passing

_SLEEP_CYCLES = 2_000_000
"""About 1 ms at H200 clocks: long enough for the CPU to queue one batch of launches."""
_FLUSH_BYTES = 256 << 20


class Cancelled(Exception):
    """The user cancelled a measurement in progress."""


@dataclass
class Timing:
    median_us: float
    p20_us: float
    p80_us: float
    samples: int


def quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def summarize(samples: Sequence[float]) -> Timing:
    return Timing(statistics.median(samples), quantile(samples, 0.2), quantile(samples, 0.8), len(samples))


class VariantLauncher:
    """Launches variant i of a `SizeHintMultiKernelCall` on captured arguments."""

    def __init__(self, call: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> None:
        import torch

        self.call = call
        self.kernels = call.kernels
        self.args = list(args)
        self.kwargs = dict(kwargs)
        self._tensors = [a for a in self.args if isinstance(a, torch.Tensor)]
        with torch.no_grad():
            self._snapshot = [t.detach().clone() for t in self._tensors]
        self._filtered = [call._get_filtered_args(self.args, i) for i in range(len(self.kernels))]

    def launch(self, i: int) -> None:
        import torch

        kw = dict(self.kwargs)
        if "stream" in kw:
            kw["stream"] = torch.cuda.current_stream().cuda_stream
        self.kernels[i].run(*self._filtered[i], **kw)

    def restore(self) -> None:
        import torch

        with torch.no_grad():  # parameters are leaves that require grad
            for t, saved in zip(self._tensors, self._snapshot):
                t.copy_(saved)

    def release(self) -> None:
        self._snapshot.clear()


def warm_up(launcher: VariantLauncher, v: int) -> float:
    """Run a variant a few times (compiling it if it never ran); its rough time in us."""
    import torch

    launcher.launch(v)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(3):
        launcher.launch(v)
    end.record()
    torch.cuda.synchronize()
    launcher.restore()
    return start.elapsed_time(end) * 1000.0 / 3


def launch_graph(launcher: VariantLauncher, v: int, n: int) -> Any:
    """A CUDA graph of n back-to-back launches of variant v (None if it cannot be captured)."""
    import torch

    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph, stream=stream):
            for _ in range(n):
                launcher.launch(v)
    except Exception:  # a kernel that cannot be captured is timed launch by launch
        torch.cuda.synchronize()
        return None
    torch.cuda.current_stream().wait_stream(stream)
    return graph


def time_variants(
    launcher: VariantLauncher,
    variants: Sequence[int],
    overheads: dict[str, float] | None = None,
    l2_flush: bool = False,
    progress: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
) -> dict[int, Timing | str]:
    """Median kernel time per variant, or the error that variant raised.

    Without L2 flushing, each sample is (span of a graph of n + m launches - span of a
    graph of m launches) / n, with n sized to ~200 us of GPU work: what a timed replay
    costs besides its kernels cancels. What remains per launch is the GPU's gap between
    back-to-back kernels, measured once by `measure_overheads` the same way and
    subtracted. With flushing, each launch gets its own event pair after a write of a
    256 MiB buffer, and the cost of an event pair around one launch is subtracted.
    A kernel that cannot be captured in a graph is timed launch by launch in the same way.
    """
    import torch

    results: dict[int, Timing | str] = {}
    rough: dict[int, float] = {}
    for v in variants:
        try:
            rough[v] = max(warm_up(launcher, v), 1.0)
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            results[v] = "CUDA out of memory"
        except Exception as e:  # a failing kernel is that variant's problem only
            results[v] = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
    if not rough:
        return results
    flush = torch.empty(_FLUSH_BYTES, dtype=torch.uint8, device="cuda") if l2_flush else None
    plans = {v: _Plan(launcher, v, t, flush is None) for v, t in rough.items()}
    launcher.restore()
    gap = (overheads or {}).get("launch_gap_us", 0.0)
    pair = (overheads or {}).get("event_pair_us", 0.0)
    rounds = min(25, max(7, int(150_000 / sum(p.gpu_us for p in plans.values()))))
    samples: dict[int, list[float]] = {v: [] for v in rough}
    order = list(rough)
    for r in range(rounds):
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        if progress is not None:
            progress(Passing(f"timing {len(order)} variants: round {r + 1}/{rounds}"))
        order = order[1:] + order[:1]
        torch.cuda._sleep(_SLEEP_CYCLES)  # hold the GPU while the round is queued
        pending = []
        for v in order:
            if flush is not None:
                flush.zero_()
                pending.append((v, event_span(lambda v=v: launcher.launch(v)), None))
            else:
                pending.append((v, event_span(plans[v].run_long), event_span(plans[v].run_short)))
        torch.cuda.synchronize()
        for v, long, short in pending:
            if short is None:
                samples[v].append(max(span_us(long) - pair, 0.0))
            else:
                n = plans[v].n
                samples[v].append(max((span_us(long) - span_us(short)) / n - gap, 0.0))
        launcher.restore()
    del plans
    for v in rough:
        results[v] = summarize(samples[v])
    return results


class _Plan:
    """How one variant is timed: graphs of m + n and of m launches (or plain launches when
    the kernel cannot be captured)."""

    def __init__(self, launcher: VariantLauncher, v: int, rough_us: float, graphs: bool) -> None:
        self.launcher, self.v = launcher, v
        self.n = min(50, max(1, int(200 / rough_us)))
        self.m = max(1, self.n // 4)
        self.long = launch_graph(launcher, v, self.m + self.n) if graphs else None
        self.short = launch_graph(launcher, v, self.m) if self.long is not None else None
        self.gpu_us = rough_us * ((self.m * 2 + self.n) if graphs else 1)

    def run_long(self) -> None:
        self._run(self.long, self.m + self.n)

    def run_short(self) -> None:
        self._run(self.short, self.m)

    def _run(self, graph: Any, count: int) -> None:
        if graph is not None:
            graph.replay()
        else:
            for _ in range(count):
                self.launcher.launch(self.v)


def event_span(fn: Callable[[], Any]) -> tuple[Any, Any]:
    """Queue fn between two timing events; read them with `span_us` after a sync."""
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    return start, end


def span_us(events: tuple[Any, Any]) -> float:
    return events[0].elapsed_time(events[1]) * 1000.0


def kernel_durations(fn: Callable[[], Any], launches: int, name: str = "") -> list[float]:
    """CUPTI's durations (us) of the GPU kernels `fn` launches, through torch.profiler."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(launches):
            fn()
        torch.cuda.synchronize()
    return [
        float(e.time_range.elapsed_us()) for e in prof.events()
        if getattr(e, "device_type", None) is not None and e.device_type.name == "CUDA"
        and (not name or name in e.name)
    ]


def cupti_times(launcher: VariantLauncher, variants: Sequence[int], launches: int = 20) -> dict[int, Timing]:
    """Kernel durations as CUPTI saw them, per variant: the independent cross-check."""
    out: dict[int, Timing] = {}
    for v in variants:
        name = str(launcher.kernels[v].inductor_meta.get("kernel_name", ""))
        durations = kernel_durations(lambda v=v: launcher.launch(v), launches, name)
        launcher.restore()
        if durations:
            out[v] = summarize(durations)
    return out


def measure_overheads() -> dict[str, float]:
    """What event timing adds to a kernel's own duration on this GPU, measured once.

    A reference kernel (a ~20 us bf16 matmul) is timed three ways: by CUPTI (its true
    duration); as `time_variants` times a graph sample, the span of a graph of 5 + 20
    launches less that of a graph of 5, over 20 (adds the gap between back-to-back
    launches); and with one event pair per launch (adds the pair's cost). The
    differences are the overheads.
    """
    import torch

    n, m = 20, 5
    a = torch.randn(2048, 2048, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(2048, 2048, dtype=torch.bfloat16, device="cuda")
    c = torch.empty(2048, 2048, dtype=torch.bfloat16, device="cuda")

    def mm() -> None:
        torch.mm(a, b, out=c)

    true_us = statistics.median(kernel_durations(mm, n))
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        mm()
    torch.cuda.current_stream().wait_stream(stream)
    graphs = {}
    for count in (m, m + n):
        graphs[count] = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graphs[count], stream=stream):
            for _ in range(count):
                mm()
    graph_us, pair_us = [], []
    for _ in range(10):
        torch.cuda._sleep(_SLEEP_CYCLES)
        long, short = event_span(graphs[m + n].replay), event_span(graphs[m].replay)
        pairs = [event_span(mm) for _ in range(4)]
        torch.cuda.synchronize()
        graph_us.append((span_us(long) - span_us(short)) / n)
        pair_us += [span_us(p) for p in pairs]
    del graphs
    return {
        "launch_gap_us": round(max(statistics.median(graph_us) - true_us, 0.0), 3),
        "event_pair_us": round(max(statistics.median(pair_us) - true_us, 0.0), 3),
    }


def measure_peaks() -> dict[str, float]:
    """The GPU's ceilings as measured here: bf16 matmul TFLOP/s and device copy GB/s, each
    from the fastest of several short batches: another process on the GPU slows some batches
    and speeds none, so the fastest is the nearest to the ceiling (still only a floor of it:
    `core.quality.ceilings` says what a bound takes instead)."""
    import torch

    def timed(fn: Callable[[], Any], n: int, batches: int = 5) -> float:
        for _ in range(3):
            fn()
        best = float("inf")
        for _ in range(batches):
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(n):
                fn()
            end.record()
            torch.cuda.synchronize()
            best = min(best, start.elapsed_time(end) / 1000.0 / n)
        return best

    def matmul_seconds(n: int) -> float:
        # Each test's tensors live in its own frame, so they are freed before the next.
        a = torch.randn(n, n, dtype=torch.bfloat16, device="cuda")
        b = torch.randn(n, n, dtype=torch.bfloat16, device="cuda")
        return timed(lambda: a @ b, 4)

    def copy_seconds() -> tuple[float, int]:
        src = torch.randn(1 << 28, device="cuda")
        dst = torch.empty_like(src)
        return timed(lambda: dst.copy_(src), 4), 2 * src.numel() * src.element_size()

    n = 8192
    t_mm = matmul_seconds(n)
    t_copy, nbytes = copy_seconds()
    torch.cuda.empty_cache()
    return {"tflops_bf16": 2 * n**3 / t_mm / 1e12, "gbps": nbytes / t_copy / 1e9}
