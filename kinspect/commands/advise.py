"""`kinspect advise model.py --range B=1..16384 [--range S=16..1024]`: the hints that cost the
workload least, predicted from one compile with every candidate hint, then verified by
compiling them. Several ranges make a grid (a transformer's B and S): the hints stay single
values applied to every dynamic dim, and each subset is decided on the real keys.

`kinspect advise --run script.py ARGS...`: the same for an unmodified program, weighed over
the dispatches it makes itself (each phase the program under `kinspect run --measure`)."""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from kinspect.commands import terminal
from kinspect.commands import recording
from kinspect.commands.compare_view import phases_line
from kinspect.commands.options import check_points, parse_hints, compile_flags, compile_options
from kinspect.core.printing import progress
from kinspect.commands.stderr_log import log_path_for
from kinspect.core.quality import advise
from kinspect.core.errors import KinspectError
from kinspect.core.numbers import ratio
from kinspect.core.recording_files import recording_files
from kinspect.core.store import read_text
from kinspect.core.quality.sweep_plan import parse_ranges

if TYPE_CHECKING:
    from kinspect.inductor import Advice

MAX_WORKLOAD_BYTES = 64 << 20
"""A workload file is a line per size: 64 MiB is millions of them."""


def workload_for(path: str | None, model_steps: list[dict[str, int]], spans: dict[str, tuple[int, int]],
                 points: int) -> advise.Workload:
    """`--workload FILE`, else the model file's `workload`, else uniform over the range (or
    the grid of ranges) in log space."""
    if path is not None:
        try:
            text = read_text(path, MAX_WORKLOAD_BYTES)
        except KinspectError as e:
            raise KinspectError(f"--workload {e}") from None
        return advise.parse_workload_file(text, Path(path).name)
    if model_steps:
        return advise.steps_workload(model_steps, "the model file's workload")
    return advise.uniform_grid(spans, points)


def add_args(a: argparse.ArgumentParser) -> None:
    a.description = (
        "Compile model.py once with every candidate hint (each power of two in the range), time every "
        "variant at the workload's sizes, choose the subset of at most --max-hints hints that Inductor's "
        "own heuristic would dispatch best among, then compile it (and the default 64,256,4096) afresh "
        "and measure. Workload: --workload FILE (B=... per line, an optional count: B=1000 x40, or "
        "B=4 S=128 for a grid), else the model file's workload, else uniform over the range (the grid "
        "of ranges) in log space.")
    a.add_argument("model", nargs="?", help="the model file (or --run and a program)")
    a.add_argument("--range", dest="ranges", action="append", metavar="NAME=LO..HI",
                   help="a size the hints are for and its range, e.g. B=1..16384 (repeat for a grid: "
                        "--range B=2..32 --range S=16..1024; each hint applies to every dynamic dim)")
    a.add_argument("--workload", metavar="FILE", help="sizes to weigh, one per line (B=1000, or B=1000 x40)")
    a.add_argument("--max-hints", type=int, default=3, help="at most this many hints (default 3)")
    a.add_argument("--compiles", type=int, default=1, help="fresh compiles per verified hint set (default 1)")
    a.add_argument("--points", type=int, default=24, help="sizes of the uniform workload (default 24)")
    a.add_argument("--candidates", help="candidate hints, comma-separated (default: every power of two in the range)")
    a.add_argument("-o", "--output", metavar="FILE", help="session file (default: MODEL.advise.session.json beside it)")
    compile_flags(a)
    a.add_argument("--run", dest="program", nargs=argparse.REMAINDER, metavar="script.py ARGS",
                   help="advise on an unmodified program instead, over the dispatches it makes (as kinspect run "
                        "takes it: script.py ARGS... or -m module ARGS...; last, everything after it is the "
                        "program's); candidates default to 16,64,256,1024,4096")


def run(args: argparse.Namespace) -> int:
    if args.program is not None:
        return _program(args)
    if args.model is None or not args.ranges:
        raise KinspectError("kinspect advise needs a model file and --range (kinspect advise model.py --range "
                            "B=2..16384), or a program: kinspect advise --run script.py ARGS...")
    model, ranges, workload, max_hints, compiles = args.model, args.ranges, args.workload, args.max_hints, args.compiles
    points, candidates, out = args.points, args.candidates, args.output
    from kinspect.inductor import LivePipeline, Options, run_advise, load_model_file

    spans = parse_ranges(ranges)
    if max_hints < 1 or compiles < 1:
        raise KinspectError("--max-hints and --compiles take 1 or more")
    check_points(points)
    cands = parse_hints(candidates) if candidates else advise.grid_candidates(spans)
    recording.needs_gpu_first(model, "kinspect advise")
    mf = load_model_file(model)
    mf.check_names(spans, "--range")
    load = advise.within_all(workload_for(workload, [dict(w) for w in mf.workload], spans, points), spans)
    mf.check_names({k for s, _ in load.points for k in s}, "--workload")
    if not recording.cuda_available():
        raise KinspectError(recording.no_cuda(mf.path, "kinspect advise"))
    files = recording_files(out, mf.path.with_name(mf.path.stem + ".advise.session.json"), [mf.path])
    if files.taken is not None:
        progress(files.taken_text())
    target = files.shown
    progress(f"workload: {load.source}")
    progress(f"candidate hints: {cands} (one variant each, compiled together)")
    options = Options(hints=cands, log_path=files.log, progress=progress,
                               failure_log=log_path_for(mf.path), **compile_options(args))
    with LivePipeline(mf, options) as live, tempfile.TemporaryDirectory(prefix="kinspect-") as work:
        try:
            advice = run_advise(live, spans, load, max_hints, compiles, work, progress)
        except KinspectError as e:
            if not live.session.sites:
                raise
            live.save(files.session)
            raise KinspectError(f"{e} (what was compiled and timed is saved in {target})") from e
        except BaseException:  # Ctrl-C, a crash: what was timed is kept all the same
            if live.session.sites:
                live.save(files.session)
            raise
        live.save(files.session)
    files.settle()
    progress(f"saved {target} (the candidate compile, its sweep and the verification compiles)")
    return _report(advice)


def _program(args: argparse.Namespace) -> int:
    """`kinspect advise --run script.py ARGS...`."""
    from kinspect.commands.launch import Program
    from kinspect.core.recording_files import free_path
    from kinspect.core.store import output_path

    if args.model is not None or args.ranges or args.workload is not None:
        raise KinspectError("kinspect advise --run weighs the program's own dispatches: it takes no model file, "
                            "--range or --workload (kinspect advise --run script.py ARGS...)")
    if args.max_hints < 1 or args.compiles < 1:
        raise KinspectError("--max-hints and --compiles take 1 or more")
    tokens = list(args.program)
    if not tokens or tokens == ["-m"]:
        raise KinspectError("kinspect advise --run needs a program: kinspect advise --run script.py ARGS... "
                            "(or --run -m package.module ARGS...)")
    program = Program.parse(tokens[1:], []) if tokens[:1] == ["-m"] else Program.parse(None, tokens)
    cands = parse_hints(args.candidates) if args.candidates else list(advise.PROGRAM_CANDIDATES)
    if not recording.cuda_available():
        raise KinspectError("kinspect advise --run times every variant at the keys the program runs, which needs a "
                            "CUDA GPU; record on a GPU machine (kinspect run --measure), and open the recording "
                            "anywhere")
    default = program.session_path()
    default = default.with_name(default.name.replace(".session.json", ".advise.session.json"))
    out = Path(args.output) if args.output is not None else free_path(default)
    output_path(out, program.files())
    from kinspect.inductor import run_program_advise

    progress(f"candidate hints: {cands} (one variant each, compiled together)")
    changes = compile_options(args)["changes"]
    advice = run_program_advise(tokens, cands, args.max_hints, args.compiles, out.absolute(), changes, progress)
    progress(f"saved {out} (the candidate run), each verification run beside it")
    return _report(advice)


def _report(advice: Advice) -> int:
    """What advise prints on stdout: the proposals, the verification and the hints to set."""
    console = terminal.table_console()
    console.print(f"workload: {advice.workload.source}", markup=False, soft_wrap=True)
    if advice.missing:
        console.print(f"{len(advice.missing)} workload sizes had no timing for every variant and are left out",
                      markup=False, soft_wrap=True)
    for site, why in advice.left_out.items():
        console.print(f"{site} is left out: every variant was timed at no workload size ({why})",
                      markup=False, soft_wrap=True)
    for site, where in advice.misaligned.items():
        console.print(f"{site}: {', '.join(where)} hand Inductor keys laid out otherwise than the site's tensors; "
                      "weighed at the keys they were recorded with, decided as Inductor decides them",
                      markup=False, soft_wrap=True)
    console.print(proposals_table(advice.proposals, advice.labels), advice_table(advice))
    for why in advice.failed:
        console.print(f"verification failed for {why}", markup=False, soft_wrap=True)
    for note in advice.notes:
        console.print(note, markup=False, soft_wrap=True)
    console.print(phases_line(advice.phases), markup=False, soft_wrap=True)
    chosen, note = choice(advice)
    if note:
        console.print(note, markup=False, soft_wrap=True)
    console.print(f"torch._inductor.config.multi_kernel_hints = {list(chosen)}", markup=False, soft_wrap=True)
    return 0


def proposals_table(proposals: list[advise.Proposal], labels: Mapping[str, str], rows: int = 5) -> Table:
    t = Table(title=Text("best hint sets, predicted from the candidate compile (one compile)"), title_justify="left",
              caption=Text("predicted regret: the workload's GPU time at the sites with Inductor deciding among "
                           "these hints' variants, over the fastest candidate kernel at each size; worst site: "
                           "the same at the site that fares worst"),
              caption_justify="left", min_width=80)
    t.add_column("hints")
    t.add_column("predicted regret", justify="right")
    t.add_column("worst site")
    for p in proposals[:rows]:
        worst = "" if p.worst_site is None or p.worst is None else \
            f"{ratio(p.worst)} ({labels.get(p.worst_site, p.worst_site)})"
        t.add_row(Text(", ".join(map(str, p.hints))), ratio(p.regret), Text(worst))
    return t


def advice_table(advice: Advice) -> Table:
    t = Table(title=Text("verified by compiling afresh: predicted vs measured workload regret against the oracle"),
              title_justify="left", min_width=80,
              caption=Text("predicted: the candidate compile's kernels; measured: each hint set compiled afresh and "
                           "timed at the same sizes, over the same oracle (a measured figure below ×1.00 means a "
                           "fresh compile found a kernel faster than every candidate's)"), caption_justify="left")
    runs = bool(advice.dispatch)  # whole runs (`--run`): each one's own dispatch, as explain gives it
    cols = ["", "hints", "predicted (one compile)", "measured", *(["pick / fastest variant"] if runs else [])]
    for col in cols:
        t.add_column(col, justify="right" if col.startswith(("predicted", "measured", "pick")) else "left")
    sets = [("proposed", advice.best.hints, advice.best)]
    if advice.best.hints != advise.DEFAULT_HINTS:
        sets.append(("default", advise.DEFAULT_HINTS, advice.default))
    for label, hints, predicted in sets:
        t.add_row(label, Text(", ".join(map(str, hints))),
                  "not a candidate subset" if predicted is None else ratio(predicted.regret),
                  advise.spread_text(advice.measured.get(hints, [])),
                  *([Text(advise.dispatch_text(advice.dispatch.get(hints, [])))] if runs else []))
    if runs:
        t.caption = Text(f"{t.caption}; pick / fastest variant: each run's pick over the fastest of its own "
                         "variants, whole model and worst site (a single hint has one variant: its pick is its "
                         "fastest)")
    return t


def choice(advice: Advice) -> tuple[tuple[int, ...], str]:
    """The proposal, unless every fresh compile of the default measured better than every
    fresh compile of the proposal: then the default, and why."""
    mine, default = advice.measured.get(advice.best.hints), advice.measured.get(advise.DEFAULT_HINTS)
    if mine and default and advice.best.hints != advise.DEFAULT_HINTS and max(default) < min(mine):
        return advise.DEFAULT_HINTS, ("measured, the default beat the proposal in every compile: the prediction did "
                                      "not survive recompiling; keep the default")
    if not mine:
        return advice.best.hints, "the proposal is unverified (no fresh compile of it gave a figure: see above): treat it as a prediction"
    return advice.best.hints, ""
