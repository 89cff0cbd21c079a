"""The whole model timed at one shape: the compile under inspection with Inductor's picks
(`hinted`) or with the fastest measured variant forced at every site (`oracle`), and the
kinds compiled afresh, each in a process of its own (`kinspect.inductor.timing.baseline`).

All of them are timed the same way (CUDA events per call, summed CUPTI kernel time per
call: `baseline.time_call`), so the five are comparable; the inspected compile's two are
marked `inspected`, since a fresh compile autotunes anew and its gap to them mixes in that
noise.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from kinspect.core.dispatch.shapes import Key
from kinspect.core.dispatch.shapes import sizes_text
from kinspect.core.session.runtime import Baseline, Measurement
from kinspect.core.session.model import Session
from kinspect.inductor.timing.baseline import run_baseline, time_call

Forced = Mapping[str, tuple[Key, int]]
"""site name -> (key, variant): what the oracle dispatches instead of Inductor's pick."""


def time_whole(run: Callable[[], Any], sizes: Mapping[str, int], kind: str) -> Baseline:
    """The inspected compile, run by `run` at these (full) sizes, timed whole; an
    out-of-memory is the baseline's error."""
    import torch

    try:
        wall, gpu = time_call(run)
        return Baseline(dict(sizes), kind, round(wall, 3), round(gpu, 3), inspected=True)
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
        return Baseline(dict(sizes), kind, error=f"CUDA out of memory at {sizes_text(sizes)}", inspected=True)


def fresh_baselines(model: str, sizes: Mapping[str, int], kinds: Sequence[str], hints: Sequence[int],
                    say: Callable[[str], None], cancel: threading.Event | None = None) -> list[Baseline]:
    """Each kind compiled afresh in a process of its own at these (full) sizes (minutes
    each for the compiled kinds); `cancel` stops between kinds."""
    out = []
    for i, kind in enumerate(kinds):
        if cancel is not None and cancel.is_set():
            break
        say(f"baseline {i + 1}/{len(kinds)}: {kind} at {sizes_text(sizes)} (compiles in a process of its own)")
        r = run_baseline(model, kind, sizes, hints)
        out.append(Baseline(dict(sizes), kind, r.get("wall_us"), r.get("gpu_us"), r.get("error")))
    return out


def fastest_forced(session: Session, measured: Sequence[Measurement]) -> tuple[dict[str, tuple[Key, int]], list[str]]:
    """The oracle's choices: each site's fastest variant at the key it was measured at,
    and the sites with no variant timed there (no oracle can be timed then)."""
    keys = {m.site: m.key for m in measured}
    forced = {}
    for site in session.sites:
        fastest = None if site.name not in keys else session.timings_at(site.name, keys[site.name]).fastest
        if fastest is not None:
            forced[site.name] = (keys[site.name], fastest)
    return forced, [s.name for s in session.sites if s.name not in forced]


class Comparable(Protocol):
    """What `compare_at` needs of a compiled model: the live pipeline, or a stand-in."""

    session: Session

    @property
    def examples(self) -> dict[str, int]: ...

    def measure(self, sizes: Mapping[str, int], site: str | None = None, *,
                progress: Callable[[str], None] | None = None) -> list[Measurement]: ...

    def time_model(self, sizes: Mapping[str, int], forced: Forced | None = None) -> Baseline: ...

    def baselines(self, sizes: Mapping[str, int], kinds: Sequence[str],
                  progress: Callable[[str], None] | None = None) -> list[Baseline]: ...


def compare_at(live: Comparable, sizes: Mapping[str, int], kinds: Sequence[str],
               say: Callable[[str], None]) -> list[Baseline]:
    """`kinspect compare` at one shape: every variant of every site timed (which one is
    fastest there), the compile timed whole with Inductor's picks and with the fastest
    forced at every site, then the kinds compiled afresh. Every baseline joins the session."""
    forced, untimed = fastest_forced(live.session, live.measure(sizes, progress=say))
    say(f"timing the whole model at {sizes_text(sizes)}: Inductor's picks, then the fastest variant forced")
    out = [live.time_model(sizes)]
    if untimed:
        oracle = Baseline({**live.examples, **sizes}, "oracle", error=f"no variant timed at {', '.join(untimed)}",
                          inspected=True)
        live.session.baselines.append(oracle)
        out.append(oracle)
    else:
        out.append(live.time_model(sizes, forced))
    return out + live.baselines(sizes, kinds, say)
