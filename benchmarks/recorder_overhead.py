"""What kinspect's recorder adds to one size-hint dispatch on a cache hit.

A cache hit is the common case of a running model and costs Inductor a few microseconds
of Python, so the recorder must add well under that (target: < 1 us). Three modes run
the real `SizeHintMultiKernelCall.run` of the installed torch with stand-in kernels (a
`run` that does nothing) on meta tensors, so the figures are the Python cost alone:

- unhooked: an instance built without kinspect;
- hooked (memory): built inside `with Recorder()`, events kept in memory;
- hooked + LiveLog: the same, also writing the crash-safe recording log.

Each round builds fresh instances (so a growing event store does not dominate) and takes
the best of three timeit repeats per mode; modes are interleaved round by round so that
drift on a shared machine hits all of them alike. The clock is the timing thread's CPU
time (`time.thread_time`), so other processes on a shared machine do not stretch it. The table gives the min and median
over rounds; "added" is against the unhooked mode. The hook alone
(`_get_cached_shape_choice`, the method the recorder replaces) is timed the same way,
which isolates the added cost from the rest of `run`. A further figure is taken with a
million events already recorded. No GPU is needed (the stand-ins run anywhere); on a
CUDA machine the same measurement runs.

The miss path (a key the instance has not seen: Inductor computes its distances and
caches its pick) is timed last, over MISS_KEYS new keys per round, in memory and with
the log, no key foreseen, as under `kinspect run` (kinspect's prediction is made by the
log's reader, never on the run's path). The cache store alone (`_cache_shape_choice`,
the method the recorder replaces on a miss) is timed the same way, without Inductor's
distance computation around it.

The log is written by its own thread (`LiveLog.feed`), not by the dispatch: its CPU time
per event (`writer thread`) is printed beside the figures, measured on that thread's
clock, so that no cost moves out of sight.

Run: python benchmarks/recorder_overhead.py [ROUNDS]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ["TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE"] = "1"  # no disk cache keyed by real kernels

import torch  # noqa: E402
from torch._inductor.codegen.multi_kernel import SizeHintMultiKernelCall  # noqa: E402

from kinspect.core.session.model import Environment, Session  # noqa: E402
from kinspect.core.session.format.log import FLUSH_S, LiveLog  # noqa: E402
from kinspect.inductor.hooks.recorder import Recorder  # noqa: E402

HINTS = (64, 256, 4096)
NUMBER = 20_000
TARGET_NS = 1000
MISS_TARGET_NS = 2000
LONG_RUN = 1_000_000
MISS_KEYS = 2000
CLOCK = time.thread_time


class StandIn:
    def __init__(self, index: int) -> None:
        self.inductor_meta = {"kernel_name": f"stand_in_{index}"}

    def run(self, *args: Any, **kwargs: Any) -> None:
        pass


def new_call() -> SizeHintMultiKernelCall:
    """An addmm-like site: x (B, 1024) and out (B, 4096), one variant per hint."""
    kernels = {((h, 1024), (h, 4096)): StandIn(i) for i, h in enumerate(HINTS)}
    return SizeHintMultiKernelCall("multi_kernel_0", kernels, {i: [slice(0, 2)] for i in range(len(HINTS))})


ARGS = (torch.empty(100, 1024, device="meta"), torch.empty(100, 4096, device="meta"))
KEY = tuple(tuple(a.shape) for a in ARGS)


class Mode:
    def __init__(self, name: str, hooked: bool, log_dir: Path | None = None) -> None:
        self.name, self.hooked, self.log_dir = name, hooked, log_dir
        self.recorder: Recorder | None = None
        self.log: LiveLog | None = None

    def fresh(self) -> SizeHintMultiKernelCall:
        """A new instance, recorder and log (a log belongs to one recorder: it caches
        event lines by the recorder's combo ids), warmed so the next call is a hit."""
        if not self.hooked:
            call = new_call()
        else:
            with Recorder() as self.recorder:
                call = new_call()
            if self.log_dir is not None:
                self.close()
                self.log = LiveLog(self.log_dir / "bench.jsonl", Session(Environment(created="benchmark")))
                self.recorder.configure(log=self.log)
        call.run(*ARGS)
        return call

    def close(self) -> None:
        if self.log is not None:
            self.log.close()


MISS_ARGS = [(torch.empty(b, 1024, device="meta"), torch.empty(b, 4096, device="meta"))
             for b in range(1000, 1000 + MISS_KEYS)]


MISS_KEYS_ONLY = [tuple(tuple(t.shape) for t in a) for a in MISS_ARGS]


def miss_rounds(modes: list[Mode], n: int, store_only: bool = False) -> dict[str, list[float]]:
    """ns per dispatch over MISS_KEYS keys new to a fresh instance (`store_only`: the
    cache store alone, as `_select_kernel_by_shape` calls it with its pick)."""
    out: dict[str, list[float]] = {m.name: [] for m in modes}
    for r in range(n):
        for m in modes[r % len(modes):] + modes[:r % len(modes)]:
            call = m.fresh()
            store = call._cache_shape_choice
            t0 = CLOCK()
            if store_only:
                for k in MISS_KEYS_ONLY:
                    store(k, 1)
            else:
                for a in MISS_ARGS:
                    call.run(*a)
            out[m.name].append((CLOCK() - t0) / MISS_KEYS * 1e9)
    return out


def writer_ns(mode: Mode, dispatch: Callable[[SizeHintMultiKernelCall], Callable[[], Any]], events: int) -> float:
    """CPU time of the log's writer thread per event it writes, on that thread's own clock."""
    call = mode.fresh()
    log = mode.log
    assert log is not None and log._thread is not None
    clock = time.pthread_getcpuclockid(log._thread.ident)
    time.sleep(3 * FLUSH_S)  # what fresh() dispatched is written
    before = time.clock_gettime(clock)
    run = dispatch(call)
    for _ in range(events):
        run()
    time.sleep(3 * FLUSH_S)
    return (time.clock_gettime(clock) - before) / events * 1e9


def per_call_ns(fn: Callable[[], Any], number: int = NUMBER) -> float:
    return min(timeit.repeat(fn, timer=CLOCK, number=number, repeat=3)) / number * 1e9


def rounds(modes: list[Mode], what: Callable[[SizeHintMultiKernelCall], Callable[[], Any]], n: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {m.name: [] for m in modes}
    for r in range(n):
        for m in modes[r % len(modes):] + modes[:r % len(modes)]:
            out[m.name].append(per_call_ns(what(m.fresh())))
    return out


def table(title: str, figures: dict[str, list[float]]) -> None:
    base = figures[next(iter(figures))]
    base_min, base_med = min(base), statistics.median(base)
    print(f"\n{title}")
    print(f"  {'mode':<32}{'min ns':>9}{'median ns':>11}{'added (min)':>13}{'added (median)':>16}")
    for name, xs in figures.items():
        lo, med = min(xs), statistics.median(xs)
        added = "" if xs is base else f"{lo - base_min:+13.0f}{med - base_med:+16.0f}"
        print(f"  {name:<32}{lo:9.0f}{med:11.0f}{added}")


def main() -> int:
    n_rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    print(f"torch {torch.__version__}, CUDA {'available: ' + torch.cuda.get_device_name() if torch.cuda.is_available() else 'not available'}")
    print(f"stand-in kernels on meta tensors, key {KEY}; {n_rounds} rounds x best of 3 x {NUMBER} calls")
    with tempfile.TemporaryDirectory() as tmp:
        modes = [Mode("unhooked", False), Mode("hooked (memory)", True),
                 Mode("hooked + LiveLog", True, Path(tmp))]
        full = rounds(modes, lambda call: lambda: call.run(*ARGS), n_rounds)
        table("SizeHintMultiKernelCall.run on a cache hit, ns per dispatch", full)
        hook = rounds(modes, lambda call: lambda: call._get_cached_shape_choice(KEY), n_rounds)
        table("_get_cached_shape_choice alone (the replaced method), ns per call", hook)

        print(f"\nlong run: {LONG_RUN:,} events already recorded, then run() timed")
        long_figures: dict[str, list[float]] = {}
        for m in modes:
            call = m.fresh()
            run_once = call._get_cached_shape_choice  # records one hit event per call
            for _ in range(LONG_RUN):
                run_once(KEY)
            held = len(m.recorder) if m.recorder is not None else 0
            long_figures[m.name] = [per_call_ns(lambda: call.run(*ARGS)) for _ in range(3)]
            if m.hooked:
                assert held >= LONG_RUN, held
        table(f"run() with {LONG_RUN:,} events held, ns per dispatch", long_figures)
        print(f"\nlog of the long run: {(Path(tmp) / 'bench.jsonl').stat().st_size / 2**20:.1f} MiB")
        miss = miss_rounds(modes, n_rounds)
        table(f"SizeHintMultiKernelCall.run on a cache miss ({MISS_KEYS:,} new keys a round), ns per dispatch", miss)
        store = miss_rounds(modes, n_rounds, store_only=True)
        table("_cache_shape_choice alone (the replaced method, a miss's store), ns per call", store)
        logged = modes[-1]
        keys = iter(MISS_ARGS)
        hit_writer = writer_ns(logged, lambda call: lambda: call.run(*ARGS), 50_000)
        miss_writer = writer_ns(logged, lambda call: lambda: call.run(*next(keys)), MISS_KEYS)
        print(f"\nthe log's writer thread (every {FLUSH_S:g} s, not on the dispatch's thread): "
              f"{hit_writer:.0f} ns per cache-hit event, {miss_writer:.0f} ns per cache-miss event")
        logged.close()

    worst = max(statistics.median(full[m.name]) - statistics.median(full["unhooked"]) for m in modes[1:])
    worst_hook = max(statistics.median(hook[m.name]) - statistics.median(hook["unhooked"]) for m in modes[1:])
    verdict = "met" if max(worst, worst_hook) < TARGET_NS else "NOT met"
    print(f"\ntarget: < {TARGET_NS} ns added per cache-hit dispatch; worst median added: "
          f"{worst:.0f} ns (whole run), {worst_hook:.0f} ns (hook alone): {verdict}")
    for what, figures in (("whole run", miss), ("store alone", store)):
        base = statistics.median(figures["unhooked"])
        for name in ("hooked (memory)", "hooked + LiveLog"):
            added = statistics.median(figures[name]) - base
            print(f"target: < {MISS_TARGET_NS} ns added per cache miss, {name}, no key expected ({what}): "
                  f"{added:.0f} ns: {'met' if added < MISS_TARGET_NS else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
