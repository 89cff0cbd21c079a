"""Opening the Map tab on the largest sample: key press to the first frame showing the map.

The GPT-2 sample (two swept sizes: a regret heatmap per site) and the linear sample (a
48-point sweep: latency curves) are opened headless; `8` is pressed and the time until a
frame is composed with the map drawn is taken, best of several runs.

Usage: python benchmarks/map_open.py [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from kinspect.core.store import load
from kinspect.core.source import RecordedSource
from kinspect.tui.app import InspectorApp

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


async def map_open(path: Path) -> float:
    app = InspectorApp(RecordedSource(load(path), path))
    frames: list[float] = []
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        display = app._display

        def timed_display(screen, renderable):  # type: ignore[no-untyped-def]
            frames.append(time.perf_counter())
            return display(screen, renderable)

        app._display = timed_display  # type: ignore[method-assign]
        t0 = time.perf_counter()
        await pilot.press("8")
        while not frames or app.query_one("#tabs").active != "map":
            await pilot.pause(0.001)
        await pilot.pause()
        return frames[0] - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=5)
    a = p.parse_args()
    for name in ("gpt2", "linear"):
        path = SAMPLES / f"{name}.session.json"
        times = [asyncio.run(map_open(path)) for _ in range(a.runs)]
        print(f"{name}: key to first frame with the map: median {1000 * statistics.median(times):.1f} ms, "
              f"best {1000 * min(times):.1f} ms")


if __name__ == "__main__":
    main()
