"""`kinspect advise` on the GPU: compile with every candidate hint, time every variant at
the workload's sizes, choose the best subset in the core, then verify it by compiling.

Three phases, each timed: the candidate compile (one variant per power of two in the
range) and its sweep over the workload's sizes, in kinspect's process; the search
(`kinspect.core.quality.advise`, no GPU); the verification: the proposed hints and the default
[64, 256, 4096], each compiled afresh `compiles` times in processes of their own and timed
at the same sizes (`kinspect.inductor.jobs.recompile`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kinspect.core.quality import advise
from kinspect.core.errors import KinspectError
from kinspect.core.quality.side_by_side import site_labels
from kinspect.core.session.runtime import Recompile
from kinspect.core.session.model import Session
from kinspect.inductor.jobs import recompile as fresh
from kinspect.inductor.jobs.sweep import run_sweep

if TYPE_CHECKING:
    from kinspect.inductor.recording.pipeline import LivePipeline


@dataclass
class Advice:
    workload: advise.Workload
    proposals: list[advise.Proposal]
    best: advise.Proposal
    default: advise.Proposal | None
    """The default hints' prediction, when every one of them was a candidate."""
    measured: dict[tuple[int, ...], list[float]] = field(default_factory=dict)
    """Per verified hint set, each fresh compile's measured workload regret."""
    dispatch: dict[tuple[int, ...], list[advise.RunDispatch]] = field(default_factory=dict)
    """Per verified hint set, each fresh run's pick over its own fastest variant, where the run
    is a whole session (`advise --run`)."""
    failed: list[str] = field(default_factory=list)
    """Each verification that gave no figure, and why."""
    notes: list[str] = field(default_factory=list)
    """What the figures leave out, where they were made anyway."""
    missing: list[dict[str, int]] = field(default_factory=list)
    left_out: dict[str, str] = field(default_factory=dict)
    """Sites the figures leave out, each with why (`advise.Tables.left_out`)."""
    misaligned: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Per site, the call sites that hand Inductor keys laid out otherwise than its tensors."""
    phases: dict[str, float] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    """The candidate compile's sites as the user calls them (`site_labels`): another compile
    numbers its multi-kernels apart, so figures name sites by these."""

    def note_ties(self, tabs: Sequence[advise.SiteTable]) -> None:
        """A line on the keys where the proposal's variants tie and Inductor runs the slower."""
        note = advise.ties_note(advise.ties(tabs, self.best.hints), self.best.hints, self.labels)
        if note:
            self.notes.append(note)


def run_advise(live: LivePipeline, spans: Mapping[str, tuple[int, int]], workload: advise.Workload, max_hints: int,
               compiles: int, workdir: str | Path, progress: Callable[[str], None]) -> Advice:
    """The candidate compile is `live` (compiled here with the candidate hints); `spans`
    are the ranges advised over (several: a grid of sizes such as B and S)."""
    phases: dict[str, float] = {}
    started = time.perf_counter()
    live.compile()
    phases["candidate compile"] = time.perf_counter() - started
    full = live.examples
    sizes = [{**full, **s} for s, _ in workload.points]
    started = time.perf_counter()
    progress(f"timing every variant of every site at the workload's {len(sizes)} sizes")
    sweep = run_sweep(live, spans, len(sizes), progress, sizes=sizes)
    phases["candidate sweep"] = time.perf_counter() - started
    if any(why == "interrupted" for _, why in sweep.skipped):
        raise KeyboardInterrupt  # Ctrl-C: no minutes of verification compiles; the command saves what was timed
    started = time.perf_counter()
    tabs = advise.tables(live.session, workload)
    proposals = advise.search(tabs.sites, max_hints)
    if not proposals:
        why = "; ".join(advise.untimed_reasons(live.session, workload))
        raise KinspectError(f"no workload size has every variant timed at every site, nothing to advise on"
                            f"{': ' + why if why else ''}")
    for site, why in tabs.left_out.items():
        progress(f"{site} is left out of the advice: every variant was timed at no workload size ({why})")
    phases["search"] = time.perf_counter() - started
    out = Advice(workload, proposals, proposals[0], advise.default_prediction(tabs.sites), missing=tabs.missing, left_out=tabs.left_out,
                 misaligned={t.site: t.misaligned for t in tabs.sites if t.misaligned}, phases=phases,
                 labels=site_labels(live.session))
    out.note_ties(tabs.sites)
    measured_sizes = [dict(p) for p in sweep.points]
    started = time.perf_counter()
    for hints in dict.fromkeys([out.best.hints, advise.DEFAULT_HINTS]):
        for c in range(1, compiles + 1):
            progress(f"verifying hints {list(hints)}: compile {c}/{compiles} in a fresh process")
            r, own = fresh.compile_afresh(live.mf.path, hints, measured_sizes, "verify", workdir, progress,
                                          changes=live.options.changes)
            live.session.recompiles.append(r)
            _score(live, tabs.sites, r, own, out)
    phases["verification compiles"] = time.perf_counter() - started
    return out


def _score(live: LivePipeline, tabs: Sequence[advise.SiteTable], r: Recompile, own: Session | None,
           out: Advice) -> None:
    regret = None if r.error else advise.measured_regret(live.session, tabs, r, own)
    if regret is None:
        out.failed.append(f"hints {list(r.hints)}: {r.error or 'not every size was timed'}")
    else:
        out.measured.setdefault(tuple(r.hints), []).append(regret)
