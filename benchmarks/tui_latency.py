"""Keystroke to painted frame, in the real app driven headless through a terminal that
notes when each frame reaches it (tests/painted.py).

Sessions (all by default): each sample recording in samples/; a synthetic one of 50
sites x 8 variants; a sweep-sized one (3 sites x 8 variants, 500 measured sizes per
site), in the Variants tab and in the Map tab.

In the Variants tab the entry holds the session's shape with one size set to 1, and
each measured keystroke appends a digit to it or deletes one, so every keystroke is a
valid shape that re-decides the site. In the Map tab each keystroke is → (40 times from
B=100) then ← (40 times), again and again: the cursor moves to the next measured size
and the typed shape follows it.

Two figures per keystroke, from the key event reaching the app:
- painted (the headline): to the first frame written to the terminal after the widget
  showing the change (the variants table, the map) was rebuilt and drawn;
- rebuilt: to that widget rebuilt (`VariantsTable.show`, `DecisionMapView.show`).
Where a keystroke rebuilds the widget twice (the table's columns changed width, so it
is laid out again), both figures run to the last rebuild, and the line says how many did.
Keys are pressed with Textual's pilot, which waits for the app to go idle after each
(about 90 ms apart: a fast typist).

Each session runs twice by default: as the machine is, then with a process spinning on one
core beside the app the whole time, as another job on the same machine would (`--busy` or
`--quiet`: one of them). Each session's painted p95 is printed against the target: 33 ms (two
frames at 60 Hz), on every sample and on a 12-layer GPT-2 session (GPT-2 small, 48 call
sites: tests/fixtures/sessions/gpt2_small_h200_2026-11-30.session.json).

Usage: python benchmarks/tui_latency.py [--keys 150] [--busy | --quiet] [--only WORD ...] [--sites 50] [--variants 8] [--session FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from textual import events

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for tests.synthetic

from kinspect.core.session.runtime import Measurement, Sweep  # noqa: E402
from kinspect.core.session.model import Session  # noqa: E402
from kinspect.core.dispatch.shapes import SymbolShape  # noqa: E402
from kinspect.core.store import load  # noqa: E402
from kinspect.core.source import RecordedSource  # noqa: E402
from kinspect.tui.app import InspectorApp  # noqa: E402
from kinspect.tui.widgets.decision_map_view import DecisionMapView  # noqa: E402
from kinspect.tui.widgets.variants_table import VariantsTable  # noqa: E402
from tests.painted import painting_terminal  # noqa: E402
from tests.synthetic import synthetic_session  # noqa: E402
from timing import busy_core, load_note  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
GPT2_SMALL = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "sessions" / "gpt2_small_h200_2026-11-30.session.json"
TARGET_P95_MS = 33.0


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def typed(initial: str) -> tuple[str, list[str]]:
    """The entry's starting text (the initial shape with its first size moved last and
    set to 1) and the keys cycled through: a digit, backspace, the next digit..."""
    first, *rest = initial.split()
    name = first.split("=")[0]
    keys = [k for d in "0123456789" for k in (d, "backspace")]
    return " ".join([*rest, f"{name}=1"]), keys


async def measure(session: Session, keys: int, on_map: bool) -> dict[str, list[float]]:
    painted: list[float] = []
    app = InspectorApp(RecordedSource(session), driver_class=painting_terminal(lambda: painted.append(time.perf_counter())))
    key_at: list[float] = []

    def hook(message: object) -> None:
        if isinstance(message, events.Key) and message._sender is app:
            key_at.append(time.perf_counter())

    async with app.run_test(headless=False, size=(120, 40), message_hook=hook) as pilot:
        if on_map:  # the cursor from B=100 up 40 sizes and back down, again and again
            await pilot.press("slash", "ctrl+u", *"B=100 N=64", "enter", "8")
            shows: object = app.query_one(DecisionMapView)
            drawn: object = app.query_one("#map-plot")
            cycle = ["right"] * 40 + ["left"] * 40
        else:
            shows = drawn = app.query_one(VariantsTable)
            start, cycle = typed(app.query_one("#shape-input").value)
            await pilot.press("slash", "ctrl+u", *start)
        shown: list[float] = []
        rendered: list[float] = []
        _after(shows, "show", shown)
        _after(drawn, "render_lines", rendered)
        await pilot.pause(0.2)

        out: dict[str, list[float]] = {"painted": [], "rebuilt": [], "twice": []}
        for i in range(keys):
            key_at.clear()
            shown.clear()
            rendered.clear()
            painted.clear()
            await pilot.press(cycle[i % len(cycle)])
            deadline = time.perf_counter() + 5
            while (frame := _painted_after(shown, rendered, painted)) is None:
                assert time.perf_counter() < deadline, f"no frame showed keystroke {i} ({cycle[i % len(cycle)]})"
                await asyncio.sleep(0.001)
            await pilot.pause()
            if len(shown) > 1:  # rebuilt again (the table's columns changed width): the frame after the last counts
                out["twice"].append(i)
                while (frame := _painted_after(shown[-1:], rendered, painted)) is None:
                    assert time.perf_counter() < deadline, f"no frame after keystroke {i}'s last rebuild"
                    await asyncio.sleep(0.001)
            k = key_at[0]
            out["painted"].append((frame - k) * 1000)
            out["rebuilt"].append((shown[-1] - k) * 1000)
        return out


def _after(obj: object, name: str, times: list[float]) -> None:
    """Note in `times` when each call of obj.name returns (benchmark-only wrapping)."""
    method: Callable[..., object] = getattr(obj, name)

    def timed(*args: object, **kwargs: object) -> object:
        result = method(*args, **kwargs)
        times.append(time.perf_counter())
        return result

    setattr(obj, name, timed)


def _painted_after(shown: list[float], rendered: list[float], painted: list[float]) -> float | None:
    """The first frame written after the widget was drawn following its rebuild."""
    if not shown:
        return None
    drawn = next((r for r in rendered if r >= shown[0]), None)
    if drawn is None:
        return None
    return next((p for p in painted if p >= drawn), None)


def swept(sites: int = 3, variants: int = 8, sizes: int = 500) -> Session:
    """A sweep's worth of measurements: every variant of every site timed at `sizes`
    batch sizes (B = 16, 17, ...; N at 64), so each site's map is one curve per variant.
    Times grow with B, from a fixed cost that is larger for the variants tuned for large
    sizes, with 3% noise, so the curves cross as a real sweep's do."""
    s = synthetic_session(sites, variants, measured=False)
    rng = random.Random(5)
    for site in s.sites:
        for b in range(16, 16 + sizes):
            key = s.runtime_key(site, SymbolShape({"B": b, "N": 64}))
            for v in range(variants):
                med = (4 + 3 * v + b / (16 * (v + 1))) * rng.uniform(0.97, 1.03)
                s.measurements.append(Measurement(site.name, key, v, "cuda_events", med, med * 0.98, med * 1.02, 20))
    s.sweeps.append(Sweep({"B": (16, 15 + sizes)}, tuple({"B": b, "N": 64} for b in range(16, 16 + sizes))))
    return s


def sessions(a: argparse.Namespace) -> dict[str, tuple[Callable[[], Session], bool]]:
    out: dict[str, tuple[Callable[[], Session], bool]] = {}
    for path in sorted(SAMPLES.glob("*.session.json")):
        out[f"sample {path.name.removesuffix('.session.json')}"] = ((lambda p=path: load(p)), False)
    out["GPT-2 small, 12 layers"] = ((lambda: load(GPT2_SMALL)), False)
    out[f"{a.sites} sites x {a.variants} variants"] = ((lambda: synthetic_session(a.sites, a.variants)), False)
    out["sweep: 3 sites x 8 variants x 500 sizes"] = (swept, False)
    out["sweep, Map tab (→ x40, ← x40)"] = (swept, True)
    if a.session is not None:
        out[str(a.session)] = ((lambda: load(a.session)), False)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--keys", type=int, default=150)
    p.add_argument("--sites", type=int, default=50)
    p.add_argument("--variants", type=int, default=8)
    p.add_argument("--only", nargs="*", help="run the sessions whose name contains one of these words")
    p.add_argument("--session", type=Path, help="also this recording (e.g. benchmarks/gpt2_scale.py's)")
    p.add_argument("--busy", action="store_true", help="only with one core kept busy beside the app")
    p.add_argument("--quiet", action="store_true", help="only as the machine is, no core kept busy")
    p.add_argument("--one", help=argparse.SUPPRESS)  # the session this process measures
    a = p.parse_args()
    found = sessions(a)
    if a.one is not None:
        make, on_map = found[a.one]
        out = asyncio.run(measure(make(), a.keys, on_map))
        pt, rb = out["painted"], out["rebuilt"]
        p95 = pct(pt, 95)
        verdict = "ok" if p95 < TARGET_P95_MS else "OVER"
        print(f"  {a.one:<42} {statistics.median(pt):14.2f} {p95:6.2f} {max(pt):6.2f}   "
              f"{statistics.median(rb):14.2f} {pct(rb, 95):6.2f}   p95 {verdict} (target < {TARGET_P95_MS:.0f})"
              + (f"; {len(out['twice'])} keystrokes rebuilt twice" if out["twice"] else ""), flush=True)
        return
    for busy in [c for c, wanted in ((False, not a.busy), (True, not a.quiet)) if wanted]:
        print(f"keystroke -> painted frame, {a.keys} keystrokes per session, 120x40, each session in a process "
              f"of its own, as each kinspect is (ms); {'one core kept busy beside it' if busy else 'as the machine is'}")
        print(f"  before: {load_note()}")
        print(f"  {'session':<42} {'painted median':>14} {'p95':>6} {'max':>6}   {'rebuilt median':>14} {'p95':>6}",
              flush=True)
        for name in found:
            if a.only and not any(w in name for w in a.only):
                continue
            args = [sys.executable, __file__, "--one", name, "--keys", str(a.keys), "--sites", str(a.sites),
                    "--variants", str(a.variants), *(["--session", str(a.session)] if a.session else [])]
            with busy_core(busy):
                subprocess.run(args, check=True)
        print(f"  after: {load_note()}")


if __name__ == "__main__":
    main()
