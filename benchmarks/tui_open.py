"""From the command to the first screen.

Two parts:
- in process: a synthetic session (50 sites x 8 variants, 100,000 dispatch events by
  default) saved to a temporary file, then timed: loading it (read + validate) and the
  inspector's start until the first frame showing the first site's decision is painted
  (written to a terminal: tests/painted.py);
- `--cold`: the real commands in fresh processes on a pseudo-terminal of 120x40, timed
  from starting the process to the first frame written to that terminal that holds
  the banner and the shape entry (then `q` is typed): `kinspect samples/mlp.py` (on a
  machine without a CUDA GPU it opens the recording beside the model; with one it
  starts compiling), `kinspect open samples/mlp.session.json` and `kinspect open` of
  the large synthetic session.

Each part runs twice by default: as the machine is, then with one core kept busy beside it
(a process spinning, as another job on the same machine would); `--busy` or `--quiet` runs
one of them. The target, under 1 s from the command to its first screen, holds for both.

Usage: python benchmarks/tui_open.py [--events 100000] [--sites 50] [--variants 8] [--runs 3] [--cold] [--busy | --quiet]
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import os
import pty
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for tests.synthetic

from kinspect.core.store import load, save  # noqa: E402
from tests.painted import painting_terminal  # noqa: E402
from tests.synthetic import synthetic_session  # noqa: E402
from timing import busy_core, load_note  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BANNERS = (b"Recording made on", b"compiling")
"""A first screen's banner: a recording's, or a live model's while it compiles."""
TARGET_S = 1.0
"""Command to first screen, with one core kept busy beside it (`--busy`)."""


async def first_screen(path: Path) -> tuple[float, float]:
    from kinspect.core.source import RecordedSource
    from kinspect.tui.app import InspectorApp
    from kinspect.tui.widgets.variants_table import VariantsTable

    t0 = time.perf_counter()
    session = load(path)
    t1 = time.perf_counter()
    painted: list[float] = []
    app = InspectorApp(RecordedSource(session, path), driver_class=painting_terminal(
        lambda: painted.append(time.perf_counter())))
    async with app.run_test(headless=False, size=(120, 40)) as pilot:
        table = app.query_one(VariantsTable)
        while table.generation == 0 or not painted:
            await pilot.pause(0.001)
        shown = painted[0]
    return t1 - t0, shown - t1


def command_to_first_screen(args: list[str], size: tuple[int, int] = (120, 40), limit_s: float = 60) -> float:
    """Seconds from starting `python -m kinspect ARGS` on a pseudo-terminal to the first
    output holding a banner and the shape entry's label; then `q` ends it."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
    # The repo first, then whatever the caller's path holds (where the GPU box keeps textual).
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, PYTHONPATH=path, TERM="xterm-256color")
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "kinspect", *args], stdin=slave, stdout=slave, stderr=slave,
                            env=env, cwd=REPO, start_new_session=True)
    os.close(slave)
    seen = b""
    try:
        while not (b"shape " in seen and any(b in seen for b in BANNERS)):
            ready, _, _ = select.select([master], [], [], max(0.0, t0 + limit_s - time.perf_counter()))
            try:
                if not ready or proc.poll() is not None:
                    raise OSError
                seen += os.read(master, 1 << 16)
            except OSError:  # it exited: the terminal's other end is gone
                raise SystemExit(f"kinspect {' '.join(args)}: no first screen (it wrote {seen[-300:]!r})") from None
        took = time.perf_counter() - t0
        os.write(master, b"q")
        while proc.poll() is None:  # keep reading, so that its last writes do not block it
            if select.select([master], [], [], 0.1)[0]:
                try:
                    os.read(master, 1 << 16)
                except OSError:
                    break
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    return took


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--sites", type=int, default=50)
    p.add_argument("--variants", type=int, default=8)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--cold", action="store_true", help="also time the real commands in fresh processes")
    p.add_argument("--busy", action="store_true", help="only with one core kept busy beside it")
    p.add_argument("--quiet", action="store_true", help="only as the machine is, no core kept busy")
    p.add_argument("--session", type=Path, help="open this recording instead of a synthetic one (e.g. samples/gpt2.session.json)")
    a = p.parse_args()
    for busy in [c for c, wanted in ((False, not a.busy), (True, not a.quiet)) if wanted]:
        print(f"== {'one core kept busy beside it' if busy else 'as the machine is'}; {load_note()}")
        run_case(a, busy)


def run_case(a: argparse.Namespace, busy: bool) -> None:
    with busy_core(busy), tempfile.TemporaryDirectory() as tmp:
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
            print("cold process, command to its first screen painted on a 120x40 pseudo-terminal:")
            for args in (["samples/mlp.py"], ["open", "samples/mlp.session.json"], ["open", str(path)]):
                cold = [command_to_first_screen(args) for _ in range(a.runs)]
                med = statistics.median(cold)
                print(f"  kinspect {' '.join(args)[:48]:<48} median {med:.3f} s  "
                      f"best {min(cold):.3f} s  (runs: {', '.join(f'{x:.3f}' for x in cold)})  "
                      f"{'ok' if med < TARGET_S else 'OVER'} (target < {TARGET_S:.0f} s)", flush=True)
    print(f"after: {load_note()}")


if __name__ == "__main__":
    main()
