"""The inspector's debugger, driven headless: replay keys on 100,000 events, a live pause.

Replay: a recorded session of 100,000 events (benchmarks/bigsession.py) opens in the
real app; in the Debugger tab each timed key (n, p, c, C to a condition breakpoint, and
n with the Timeline tab shown) is measured from the key event reaching the app to the
debugger redrawn (`panel`) and to the next frame composed with it (`frame`, which waits
for Textual's frame pacing).

Live: the app drives Inductor's real `SizeHintMultiKernelCall` on the CPU with stand-in
kernels (tests/tui/fake_live.py). It times `n` from the key to the next pause drawn
(the model's thread released, one dispatch, blocked again, the message up, the panel
redrawn), then holds the pause for 2 s and reads the model thread's own CPU clock, and
the whole process's.

Usage: python benchmarks/debugger_speed.py [--events 100000] [--keys 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import threading
import time
from pathlib import Path

from bigsession import big_session
from textual import events

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "tui")]  # tests.synthetic, fake_live, standins

from kinspect.core.source import RecordedSource  # noqa: E402
from kinspect.tui.app import InspectorApp  # noqa: E402
from kinspect.core.debugger.cursor import PAUSED  # noqa: E402
from tests.synthetic import synthetic_session  # noqa: E402

HOLD_S = 2.0


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def line(name: str, values: list[float]) -> str:
    return (f"  {name:<28} median {statistics.median(values):7.2f}  p95 {pct(values, 95):7.2f}  "
            f"max {max(values):7.2f}")


async def replay(n_events: int, keys: int) -> dict[str, list[float]]:
    app = InspectorApp(RecordedSource(big_session(n_events)))
    key_at: list[float] = []

    def hook(message: object) -> None:
        if isinstance(message, events.Key) and message._sender is app:
            key_at.append(time.perf_counter())

    out: dict[str, list[float]] = {}
    async with app.run_test(size=(120, 40), message_hook=hook) as pilot:
        frames: list[float] = []
        shown: list[float] = []
        display = app._display

        def timed_display(screen, renderable):  # type: ignore[no-untyped-def]
            frames.append(time.perf_counter())
            return display(screen, renderable)

        def timed(show):  # type: ignore[no-untyped-def]
            def timed_show(view) -> None:  # type: ignore[no-untyped-def]
                show(view)
                shown.append(time.perf_counter())
            return timed_show

        app._display = timed_display  # type: ignore[method-assign]
        for pane in app.query("#debugger, #timeline"):  # the tab on screen draws the debugger's move
            pane.draw = timed(pane.draw)  # type: ignore[attr-defined]
        await pilot.press("6", "g", *str(n_events // 2), "enter")
        await pilot.pause(0.2)

        async def timed(name: str, key: str, count: int) -> None:
            panel, frame = out.setdefault(f"{name} panel", []), out.setdefault(f"{name} frame", [])
            for _ in range(count):
                key_at.clear()
                shown.clear()
                frames.clear()
                await pilot.press(key)
                deadline = time.perf_counter() + 10
                while not shown or not frames or frames[-1] < shown[-1]:
                    if time.perf_counter() > deadline:
                        raise SystemExit(f"{name}: the debugger did not redraw within 10 s")
                    await asyncio.sleep(0.001)
                k = key_at[0]
                panel.append((shown[0] - k) * 1000)
                frame.append((next(f for f in frames if f >= shown[0]) - k) * 1000)

        for _ in range(keys):
            await timed("n (step)", "n", 1)
            await timed("p (back)", "p", 1)
        await pilot.press("w", *"B > 8000", "enter")  # about 1 event in 40
        await timed("c (continue to B > 8000)", "c", keys // 4)
        await timed("C (reverse to B > 8000)", "C", keys // 4)
        await pilot.press("7")
        await timed("n on the timeline tab", "n", keys // 4)

        # a continue that finds nothing scans every later event and says so
        app.debugger.remove(0)
        await pilot.press("6", "w", *"B > 100000", "enter", "home")
        said: list[float] = []
        notify = app.notify

        def timed_notify(*args, **kwargs):  # type: ignore[no-untyped-def]
            said.append(time.perf_counter())
            return notify(*args, **kwargs)

        app.notify = timed_notify  # type: ignore[method-assign]
        scans = out.setdefault("c with no hit (full scan)", [])
        for _ in range(5):
            said.clear()
            key_at.clear()
            await pilot.press("c")
            deadline = time.perf_counter() + 10
            while not said:
                if time.perf_counter() > deadline:
                    raise SystemExit("a continue with no hit said nothing within 10 s")
                await asyncio.sleep(0.001)
            scans.append((said[0] - key_at[0]) * 1000)
    return out


async def live() -> tuple[list[float], float, float]:
    from fake_live import FakeLiveSource

    workload = [{"B": b, "N": 64} for b in (64, 100, 1000, 5000)] * 50
    src = FakeLiveSource(synthetic_session(sites=3, variants=3, events=0, measured=False), workload)
    model_thread: list[int] = []
    set_gate = src.set_gate

    def gate_on_thread(gate):  # type: ignore[no-untyped-def]
        def spy(event):  # type: ignore[no-untyped-def]
            if not model_thread:
                model_thread.append(threading.get_ident())
            return gate(event)
        set_gate(None if gate is None else spy)

    src.set_gate = gate_on_thread  # type: ignore[method-assign]
    app = InspectorApp(src)
    key_at: list[float] = []

    def hook(message: object) -> None:
        if isinstance(message, events.Key) and message._sender is app:
            key_at.append(time.perf_counter())

    steps: list[float] = []
    async with app.run_test(size=(120, 40), message_hook=hook) as pilot:
        while app.preparing:
            await pilot.pause(0.02)
        await pilot.press("6", "n")
        while app.debugger.state != PAUSED:
            await pilot.pause(0.001)
        shown: list[tuple[float, int]] = []
        pane = app.query_one("#debugger")
        show = pane.draw

        def timed_show(view) -> None:  # type: ignore[no-untyped-def]
            show(view)
            if app.debugger.state == PAUSED:
                shown.append((time.perf_counter(), app.debugger.paused.seq))

        pane.draw = timed_show  # type: ignore[method-assign]
        for _ in range(100):
            seq = app.debugger.paused.seq
            key_at.clear()
            shown.clear()
            await pilot.press("n")
            while not any(s != seq for _, s in shown):
                await asyncio.sleep(0.0005)
            steps.append((next(t for t, s in shown if s != seq) - key_at[0]) * 1000)
        clock = time.pthread_getcpuclockid(model_thread[0])
        thread0, proc0 = time.clock_gettime(clock), time.process_time()
        await asyncio.sleep(HOLD_S)
        thread_cpu = time.clock_gettime(clock) - thread0
        proc_cpu = time.process_time() - proc0
        assert app.debugger.state == PAUSED
        await pilot.press("q")
    return steps, thread_cpu, proc_cpu


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--keys", type=int, default=200)
    a = p.parse_args()
    out = asyncio.run(replay(a.events, a.keys))
    print(f"replay, {a.events} events, key -> debugger redrawn / next frame (ms)")
    for name, values in out.items():
        print(line(name, values))
    steps, thread_cpu, proc_cpu = asyncio.run(live())
    print("live, Inductor's SizeHintMultiKernelCall on the CPU with stand-in kernels")
    print(line("n: key -> next pause drawn", steps))
    print(f"  paused {HOLD_S:.0f} s: model thread CPU {thread_cpu * 1000:.3f} ms, "
          f"whole process CPU {proc_cpu * 1000:.1f} ms (the app idling included)")


if __name__ == "__main__":
    main()
