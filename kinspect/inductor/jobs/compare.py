"""`kinspect compare` on the GPU: the PR's comparison at each shape, and the spread of
the same hints over fresh compiles.

At each shape the compile under inspection is measured (every variant of every site, so
the fastest is known), timed whole with Inductor's picks and with the fastest forced
(`whole_model.compare_at`), and the fresh-compile kinds are timed in processes of their
own (`kinspect.inductor.timing.baseline`). With `compiles` > 1 the same hints are compiled again
that many times less one, each in a fresh process, and every variant is timed at the same
shapes (`kinspect.inductor.jobs.recompile`): the session then holds each compile's timings, and
the core turns them into spreads and the `unstable-autotune` finding.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kinspect.inductor.jobs import recompile as fresh

if TYPE_CHECKING:
    from kinspect.inductor.recording.pipeline import LivePipeline

FRESH_KINDS = ("exact_hint", "static", "eager")


def run_compare(live: LivePipeline, sizes: Sequence[Mapping[str, int]], compiles: int, workdir: str | Path,
                progress: Callable[[str], None], kinds: Sequence[str] = FRESH_KINDS) -> dict[str, float]:
    """Everything `kinspect compare` measures, into the pipeline's session; returns the
    seconds each phase took."""
    phases: dict[str, float] = {}
    started = time.perf_counter()
    for i, point in enumerate(sizes, 1):
        say = (lambda text, i=i: progress(f"[{i}/{len(sizes)}] {text}"))
        live.compare_at(point, kinds, say)
    phases["shapes (variants, whole model, fresh-compile kinds)"] = time.perf_counter() - started
    started = time.perf_counter()
    for c in range(2, compiles + 1):
        progress(f"compile {c}/{compiles}: hints {live.hints} again in a fresh process, timing {len(sizes)} sizes")
        live.session.recompiles.append(fresh.recompile(live.mf.path, live.hints, sizes, "variance", workdir, progress,
                                                          changes=live.options.changes))
    if compiles > 1:
        phases[f"{compiles - 1} fresh compiles"] = time.perf_counter() - started
    return phases
