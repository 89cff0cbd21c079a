"""Opening a recorded session of 100,000 dispatch events, up to the first screen.

A synthetic session (50 sites x 8 variants by default) with that many events is saved
to a temporary file; then, timed, it is loaded and the inspector started headless until
the variants table holds the first site's decision and a frame showing it has been
composed. The figure is split into load (read + validate the file) and first screen
(app start, event index, first decision, first frame). `--cold` also times a fresh
Python process doing the same, imports included, as `kinspect open FILE` would.

Usage: python benchmarks/tui_open.py [--events 100000] [--sites 50] [--variants 8] [--cold]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for tests.synthetic

from kinspect.core.sessionfile.files import load, save  # noqa: E402
from tests.synthetic import synthetic_session  # noqa: E402

_COLD = """
import asyncio, sys, time
t0 = time.perf_counter()
from kinspect.core.sessionfile.files import load
from kinspect.core.source import RecordedSource
from kinspect.tui.app import InspectorApp
from kinspect.tui.widgets.variants_table import VariantsTable
async def main():
    app = InspectorApp(RecordedSource(load(sys.argv[1]), sys.argv[1]))
    async with app.run_test(size=(120, 40)) as pilot:
        while app.query_one(VariantsTable).generation == 0:
            await pilot.pause(0.001)
        await pilot.pause()
        print(time.perf_counter() - t0)
asyncio.run(main())
"""


async def first_screen(path: Path) -> tuple[float, float]:
    from kinspect.core.source import RecordedSource
    from kinspect.tui.app import InspectorApp
    from kinspect.tui.widgets.variants_table import VariantsTable

    t0 = time.perf_counter()
    session = load(path)
    t1 = time.perf_counter()
    app = InspectorApp(RecordedSource(session, path))
    frames: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        display = app._display

        def timed_display(screen, renderable):  # type: ignore[no-untyped-def]
            frames.append(time.perf_counter())
            return display(screen, renderable)

        app._display = timed_display  # type: ignore[method-assign]
        table = app.query_one(VariantsTable)
        while table.generation == 0 or not frames:
            await pilot.pause(0.001)
        shown = frames[-1]
    return t1 - t0, shown - t1


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--sites", type=int, default=50)
    p.add_argument("--variants", type=int, default=8)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--cold", action="store_true", help="also time a fresh process, imports included")
    p.add_argument("--session", type=Path, help="open this recording instead of a synthetic one (e.g. samples/gpt2.session.json)")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = a.session or Path(tmp) / "big.session.json"
        if a.session is None:
            save(synthetic_session(a.sites, a.variants, a.events), path)
        mb = path.stat().st_size / 1e6
        what = f"{a.events} events, {a.sites} sites x {a.variants} variants" if a.session is None else str(path)
        print(f"session: {what}, {mb:.1f} MB")
        runs = [asyncio.run(first_screen(path)) for _ in range(a.runs)]
        loads = [r[0] for r in runs]
        screens = [r[1] for r in runs]
        totals = [x + y for x, y in runs]
        print(f"  load          median {statistics.median(loads):.3f} s  (runs: {', '.join(f'{x:.3f}' for x in loads)})")
        print(f"  first screen  median {statistics.median(screens):.3f} s  (runs: {', '.join(f'{x:.3f}' for x in screens)})")
        print(f"  total         median {statistics.median(totals):.3f} s")
        if a.cold:
            env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
            cold = [float(subprocess.run([sys.executable, "-c", _COLD, str(path)], env=env, check=True,
                                         capture_output=True, text=True).stdout.split()[-1])
                    for _ in range(a.runs)]
            print(f"  cold process  median {statistics.median(cold):.3f} s  (imports + load + first screen)")


if __name__ == "__main__":
    main()
