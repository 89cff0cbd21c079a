"""`kinspect record`: compile a model.py with hints on the GPU, run it, save the session."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from kinspect.commands import recording
from kinspect.commands.options import (
    parse_baselines, parse_hints, parse_steps, session_and_hints, compile_flags, compile_options,
)
from kinspect.core.printing import progress
from kinspect.commands.model_output import model_output
from kinspect.commands.stderr_log import log_path_for
from kinspect.core.dispatch.shapes import sizes_text
from kinspect.core.errors import KinspectError
from kinspect.core.recording_files import recording_files
from kinspect.core.store import rank_path, recording_path

if TYPE_CHECKING:
    from kinspect.inductor import Rank


def add_args(r: argparse.ArgumentParser) -> None:
    r.add_argument("model")
    session_and_hints(r)
    r.add_argument("--shapes", nargs="+", metavar="SHAPE", help='shapes to run instead of the workload, e.g. "B=100" "B=1000"')
    r.add_argument("--measure", action="store_true", help="time every variant at each distinct shape run")
    r.add_argument("--l2-flush", action="store_true", help="with --measure: flush L2 between launches (cold-cache timings)")
    r.add_argument("--baselines", metavar="KINDS",
                   help="whole-model baselines at each distinct shape run, comma-separated from "
                        "eager,static,exact_hint,hinted (each compiled kind costs a compile per shape)")
    r.add_argument("--train", action="store_true", help="compile for training (default: inference under no_grad)")
    r.add_argument("--allow-caches", action="store_true",
                   help="use Inductor's own caches and cache directory: a graph compiled in an earlier run loads "
                        "without its compile-time facts (autotune tables, symbolic sizes). Without it the recording "
                        "has a cache directory of its own, FX graph cache off, each GEMM layout autotuned once per hint")
    compile_flags(r)


def run(args: argparse.Namespace) -> int:
    model, out, hints, shapes, train = args.model, args.output, args.hints, args.shapes, args.train
    allow_caches, measure, l2_flush, baselines = args.allow_caches, args.measure, args.l2_flush, args.baselines
    changes = compile_options(args)
    from kinspect.inductor import torchrun

    kinds = parse_baselines(baselines)
    steps = parse_steps(shapes)
    hint_list = parse_hints(hints) if hints else None
    rank = torchrun.from_environment()
    if rank is None:
        return _record(model, out, hint_list, steps, train, allow_caches, measure, l2_flush, kinds, None, changes)
    # Under torchrun: this rank's GPU and the process group before the model file is
    # imported, so that it can build DistributedDataParallel and read its rank.
    if not recording.cuda_available():
        raise KinspectError(f"{model}: rank {rank.rank}: kinspect record under torchrun needs a CUDA GPU per rank "
                            "and none is available here")
    torchrun.join(rank)
    try:
        return _record(model, out, hint_list, steps, train, allow_caches, measure, l2_flush, kinds, rank, changes)
    finally:
        torchrun.leave()


def _record(model: str, out: str | None, hint_list: list[int] | None, steps: list[dict[str, int]] | None,
            train: bool, allow_caches: bool, measure: bool, l2_flush: bool, kinds: list[str],
            rank: Rank | None, changes: dict[str, bool]) -> int:
    from kinspect.inductor import check_model_file, load_model_file, missing_imports, LivePipeline, Options

    if not recording.cuda_available():
        if not (missing_imports(model) and recording.existing_recording(Path(model))):
            with model_output(Path(model).name):
                check_model_file(model)  # its problems first, on any machine
        raise KinspectError(recording.no_cuda(Path(model), "kinspect record"))
    mf = load_model_file(model)
    mf.check_names({k for s in steps or [] for k in s}, "--shapes")
    failure_log = log_path_for(mf.path).absolute()
    say = progress
    if rank is not None:  # one file each, and each line says whose
        failure_log = rank_path(failure_log, rank.rank)
        say = lambda text: progress(f"rank {rank.rank}: {text}")  # noqa: E731
    files = recording_files(out, recording_path(mf.path), [mf.path], None if rank is None else rank.rank)
    if files.taken is not None:
        say(files.taken_text())
    options = Options(
        hints=hint_list, train=train,
        allow_caches=allow_caches, log_path=files.log, progress=say,
        failure_log=failure_log, rank=rank, **changes,
    )
    with LivePipeline(mf, options) as live:
        live.compile()
        results = live.run_workload(steps)
        seen = []
        for r in results:
            if r.error is None and r.sizes not in seen:
                seen.append(r.sizes)
        for sizes in seen if measure or kinds else []:
            try:
                live.time_at(sizes, measure=measure, kinds=kinds, l2_flush=l2_flush)
            except KinspectError as e:  # e.g. too large to measure: say so, keep going
                say(f"not measured at {sizes_text(sizes)}: {e}")
        kept = files.keeps(live.session)
        if not kept:
            live.save(files.session)
    for r in results:
        if r.error:
            say(f"step {r.step} ({sizes_text(r.sizes)}): {r.error}")
    s = live.session
    if kept:
        files.discard()
        say(f"recorded nothing: no session saved, {files.taken or files.shown} is as it was")
        return 0
    files.settle()
    say(f"saved {files.shown}: {len(s.sites)} sites, {len(s.events)} dispatches, {len(s.findings)} findings")
    return 0
