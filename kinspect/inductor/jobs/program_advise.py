"""`kinspect advise --run script.py ARGS...`: which hints a program should set, weighed over
the program's own dispatches.

A program has no model file to compile at chosen sizes, so every phase is the program
itself under `kinspect run --measure`, in a process of its own (a fresh compile each, as the
program's own runs are): the candidate run, with every candidate hint at once, which times
every variant at every key the program ran; the search over the subsets of its hints
(`kinspect.core.quality.advise`, no GPU), Inductor's rule deciding each recorded key; and
the verification, the proposal and the default each run afresh `compiles` times, each of
their dispatches timed as it ran, over the candidate run's fastest kernel at that site and
key. Every run's session is kept, for `kinspect compare`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from kinspect.core.errors import KinspectError
from kinspect.core.quality import advise
from kinspect.core.quality.overview import model_quality
from kinspect.core.quality.side_by_side import site_labels
from kinspect.core.recording_files import free_path
from kinspect.core.session.compile_changes import CompileChanges
from kinspect.core.session.model import Session
from kinspect.core.store import load
from kinspect.inductor.jobs.advise import Advice

def run_program_advise(program: Sequence[str], candidates: Sequence[int], max_hints: int, compiles: int,
                       out: Path, changes: CompileChanges, progress: Callable[[str], None]) -> Advice:
    """`program`: `script.py ARGS...` or `-m module ARGS...`, as `kinspect run` takes it; the
    candidate session is saved to `out`, each verification's beside it."""
    phases: dict[str, float] = {}
    started = time.perf_counter()
    candidate = _record(program, candidates, out, changes, "candidate run", progress)
    asked = candidate.environment.config.get("multi_kernel_hints")
    if asked is not None and list(asked) != list(candidates):
        raise KinspectError(f"the program sets its own multi_kernel_hints ({asked}), which kinspect keeps; advise "
                            "needs a program that leaves them to --hints")
    phases["candidate run"] = time.perf_counter() - started
    started = time.perf_counter()
    tabs = advise.recorded_tables(candidate)
    proposals = advise.search(tabs.sites, max_hints)
    if not proposals:
        raise KinspectError(f"no key the program ran has every variant timed, nothing to advise on (the candidate "
                            f"run: {len(candidate.sites)} sites, {len(candidate.events)} dispatches, "
                            f"{len(candidate.measurements)} measurements; saved in {out})")
    calls = int(sum(t.weights.sum() for t in tabs.sites))
    keys = sum(len(t.keys) for t in tabs.sites)
    workload = advise.Workload((), f"the program's own dispatches ({calls} calls at {keys} site keys)")
    phases["search"] = time.perf_counter() - started
    result = Advice(workload, proposals, proposals[0], advise.default_prediction(tabs.sites), left_out=tabs.left_out,
                    phases=phases, labels=site_labels(candidate))
    result.note_ties(tabs.sites)
    if tabs.untimed_keys:
        result.notes.append(f"{tabs.untimed_keys} of the program's site keys had no time for every variant in the "
                            "candidate run and are left out")
    started = time.perf_counter()
    for hints in dict.fromkeys([result.best.hints, advise.DEFAULT_HINTS]):
        for c in range(1, compiles + 1):
            name = "-".join(map(str, hints))
            path = free_path(out.with_name(out.name.replace(".session.json", "") + f".hints-{name}.session.json"))
            try:
                run = _record(program, hints, path, changes, f"verifying hints {list(hints)} ({c}/{compiles})",
                              progress)
            except KinspectError as e:
                result.failed.append(f"hints {list(hints)}: {e}")
                continue
            held = advise.recorded_regret(candidate, tabs.sites, run)
            if held.regret is None:
                result.failed.append(f"hints {list(hints)}: no dispatch of the run could be held against the "
                                     f"candidate run's times ({'; '.join(held.gaps()) or 'it ran none of its keys'}; "
                                     f"{path})")
                continue
            result.measured.setdefault(hints, []).append(held.regret)
            dispatch = _dispatch(run, hints)
            if dispatch is not None:
                result.dispatch.setdefault(hints, []).append(dispatch)
            result.notes += [f"hints {list(hints)}, run {c}: {gap}" for gap in held.gaps()]
    phases["verification runs"] = time.perf_counter() - started
    return result


def _dispatch(run: Session, hints: Sequence[int]) -> advise.RunDispatch | None:
    """The run's own dispatch quality, as `explain` gives it; None where it timed no key."""
    quality = model_quality(run)
    worst = quality.worst_site
    if worst is None or quality.geomean_regret is None or worst.geomean_regret is None:
        return None
    label = site_labels(run).get(worst.site, worst.site)
    return advise.RunDispatch(quality.geomean_regret, label, worst.geomean_regret, len(hints) < 2)


def _record(program: Sequence[str], hints: Sequence[int], out: Path, changes: CompileChanges, what: str,
            progress: Callable[[str], None]) -> Session:
    """The program under `kinspect run --hints ... --measure` in a process of its own, its
    kinspect lines passed on as progress and its own output kept in a log beside the session."""
    log = free_path(out.with_name(out.name.replace(".session.json", "") + ".output.log"))
    progress(f"{what}: kinspect run --hints {','.join(map(str, hints))} --measure "
             f"{' '.join([*changes.flags(), *program])} (its output: {log.name})")
    cmd = [sys.executable, "-m", "kinspect", "run", "--hints", ",".join(map(str, hints)), "--measure",
           *changes.flags(), "-o", str(out), *program]
    said: list[str] = []
    with open(log, "w", encoding="utf-8", errors="replace") as sink:
        with subprocess.Popen(cmd, stdout=sink, stderr=subprocess.PIPE, text=True, errors="replace",
                              env={**os.environ, "PYTHONUNBUFFERED": "1"}) as child:
            assert child.stderr is not None
            for line in child.stderr:
                sink.write(line)
                if line.startswith("kinspect: "):
                    said.append(line[len("kinspect: "):].rstrip("\n"))
                    progress(f"{what}: {said[-1]}")
    if child.returncode != 0 or not out.exists():
        why = said[-1] if said else f"exit status {child.returncode}"
        raise KinspectError(f"{what} failed: {why} (its output: {log})")
    return load(out)
