"""Keystroke to updated variants table, in the real app driven headless.

A synthetic session of 50 sites x 8 variants; the shape entry holds `N=64 B=1…` and
each measured keystroke either appends a digit or deletes one, so every keystroke yields
a valid shape and re-decides the site. Three figures per keystroke:

- table:  the key event reaching the app -> the variants table rebuilt (its counter);
- frame:  the key event reaching the app -> the next frame composed with the new table
          (Textual paces frames at up to 60 per second, so this includes that wait);
- pilot:  the test driver's press() -> the app idle again (an upper bound).

Usage: python benchmarks/tui_latency.py [--keys 300] [--sites 50] [--variants 8]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

from textual import events

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for tests.synthetic

from kinspect.core.source import RecordedSource  # noqa: E402
from kinspect.tui.app import InspectorApp  # noqa: E402
from kinspect.tui.widgets.variants_table import VariantsTable  # noqa: E402
from tests.synthetic import synthetic_session  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


async def measure(keys: int, sites: int, variants: int) -> dict[str, list[float]]:
    app = InspectorApp(RecordedSource(synthetic_session(sites, variants)))
    key_at: list[float] = []
    frames: list[float] = []

    def hook(message: object) -> None:
        if isinstance(message, events.Key) and message._sender is app:
            key_at.append(time.perf_counter())

    async with app.run_test(size=(120, 40), message_hook=hook) as pilot:
        table = app.query_one(VariantsTable)
        display = app._display

        def timed_display(screen, renderable):  # type: ignore[no-untyped-def]
            frames.append(time.perf_counter())
            return display(screen, renderable)

        app._display = timed_display  # type: ignore[method-assign]
        original_show = table.show
        shown: list[float] = []

        def timed_show(*args, **kwargs):  # type: ignore[no-untyped-def]
            original_show(*args, **kwargs)
            shown.append(time.perf_counter())

        table.show = timed_show  # type: ignore[method-assign]
        await pilot.press("slash", "ctrl+u", *"N=64 B=1")
        await pilot.pause(0.2)

        out: dict[str, list[float]] = {"table": [], "frame": [], "pilot": []}
        digits = "0123456789"
        for i in range(keys):
            key = digits[i % 10] if i % 2 == 0 else "backspace"
            key_at.clear()
            shown.clear()
            frames.clear()
            before = table.generation
            t0 = time.perf_counter()
            await pilot.press(key)
            t1 = time.perf_counter()
            while not frames or frames[-1] < (shown[-1] if shown else t1):
                await asyncio.sleep(0.001)
            assert table.generation == before + 1, "every keystroke must rebuild the table"
            k = key_at[0]
            out["table"].append((shown[0] - k) * 1000)
            out["frame"].append((next(f for f in frames if f >= shown[0]) - k) * 1000)
            out["pilot"].append((t1 - t0) * 1000)
        return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--keys", type=int, default=300)
    p.add_argument("--sites", type=int, default=50)
    p.add_argument("--variants", type=int, default=8)
    a = p.parse_args()
    out = asyncio.run(measure(a.keys, a.sites, a.variants))
    print(f"keystroke -> variants table, {a.sites} sites x {a.variants} variants, {a.keys} keystrokes (ms)")
    for name, values in out.items():
        print(f"  {name:<6} median {statistics.median(values):6.2f}  p95 {pct(values, 95):6.2f}  "
              f"max {max(values):6.2f}")


if __name__ == "__main__":
    main()
