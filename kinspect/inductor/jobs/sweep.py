"""A sweep on the GPU: every variant of every site timed at each planned size.

The sizes come from the core (`kinspect.core.quality.sweep_plan`: grid, both sides of each
decision boundary, the workload's sizes); each is measured by the pipeline's kernel-level
method with CUPTI's cross-check, so a sweep is a batch of ordinary measurements plus a
`Sweep` record saying what was swept. A size the GPU cannot hold is skipped with its
reason; a cancel (escape in the inspector, Ctrl-C on the command line) stops between
sizes and keeps what was measured.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from kinspect.core.errors import KinspectError
from kinspect.core.session.runtime import Sweep
from kinspect.core.quality.sweep_plan import plan
from kinspect.core.dispatch.shapes import sizes_text

if TYPE_CHECKING:
    from kinspect.inductor.recording.pipeline import LivePipeline


def run_sweep(live: LivePipeline, ranges: Mapping[str, tuple[int, int]], points: int,
              progress: Callable[[str], None], cancel: threading.Event | None = None,
              sizes: Sequence[Mapping[str, int]] | None = None) -> Sweep:
    """Measure at every planned size (or at exactly `sizes`: `advise` measures its
    workload's); the returned sweep is also added to the session."""
    from kinspect.inductor.timing.measure import Cancelled

    session = live.session
    live.mf.check_names(ranges, "--range")
    if sizes is None:
        sizes = plan(session, ranges, points, live.examples, live.mf.workload)
    measured: list[dict[str, int]] = []
    skipped: list[tuple[dict[str, int], str]] = []
    stop = ""
    for i, point in enumerate(sizes, 1):
        if cancel is not None and cancel.is_set():
            stop = "cancelled"
        if stop:
            skipped.append((point, stop))
            continue
        say = (lambda text, i=i: progress(f"[{i}/{len(sizes)}] {text}"))
        say(f"measuring every site at {sizes_text(point)}")
        try:
            live.measure(point, progress=say, cancel=cancel)
        except (Cancelled, KeyboardInterrupt):
            stop = "cancelled" if cancel is not None and cancel.is_set() else "interrupted"
            skipped.append((point, stop))
            continue
        except KinspectError as e:  # too large for memory, a failing run: this size only
            skipped.append((point, str(e)))
            progress(f"[{i}/{len(sizes)}] skipped {sizes_text(point)}: {e}")
            continue
        measured.append(point)
    sweep = Sweep(dict(ranges), tuple(measured), tuple(skipped))
    session.sweeps.append(sweep)
    return sweep
