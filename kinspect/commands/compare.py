"""`kinspect compare model.py --range B=1..16384`: the PR's comparison on any model (the
whole model hinted, oracle, exact_hint, static and eager at each shape), saved with the
session, and with `--compiles N` the spread of the same hints over fresh compiles.
`kinspect compare A.session.json B.session.json`: two recordings of one program side by side
(stock against `--one-size-per-symbol`, say), on any machine."""

from __future__ import annotations

import argparse
import os
import tempfile


from kinspect.commands import terminal
from kinspect.commands import recording
from kinspect.commands.compare_view import (comparison_table, phases_line, regret_lines, side_by_side_table,
                                            spread_table)
from kinspect.commands.options import parse_hints, parse_steps, session_and_hints, compile_flags, compile_options
from kinspect.core.printing import progress
from kinspect.commands.stderr_log import log_path_for
from kinspect.core.quality.boundaries import log_grid
from kinspect.core.quality.comparison import comparison
from kinspect.core.errors import KinspectError, shown
from kinspect.core.recording_files import recording_files
from kinspect.core.store import recording_path
from kinspect.core.quality.sweep_plan import axis_points, parse_ranges
from kinspect.core.quality.variance import unstable_autotune


def shapes_for(ranges: list[str] | None, shapes: list[str] | None, points: int) -> list[dict[str, int]]:
    """`--shapes` as given, else a log-spaced grid over the `--range`s (a product for two)."""
    if bool(ranges) == bool(shapes):
        raise KinspectError("give --range NAME=LO..HI or --shapes B=... (one of them)")
    steps = parse_steps(shapes)
    if steps is not None:
        return steps
    spans = parse_ranges(ranges or [])
    if not 1 <= points <= 256:
        raise KinspectError(f"--points takes 1..256 (each costs fresh compiles), got {points}")
    out: list[dict[str, int]] = [{}]
    for name, (lo, hi) in spans.items():
        out = [{**o, name: v} for o in out for v in log_grid(lo, hi, axis_points(points, len(spans)))]
    return out


def add_args(c: argparse.ArgumentParser) -> None:
    c.description = (
        "Compile model.py with hints; at each shape time every variant, then the whole model with "
        "Inductor's picks (hinted) and with the fastest variant forced at every site (oracle), both on "
        "this compile, and exact_hint, static and eager each compiled afresh in a process of its own. "
        "Prints each kind's geometric-mean slowdown against the best kind per shape; saves it all. "
        "--compiles N compiles the same hints N times in all (fresh processes) to show the spread.")
    c.add_argument("model", nargs="+", metavar="MODEL.py | A.session.json B.session.json",
                   help="a model file to compile and time, or two recordings to put side by side (no GPU needed)")
    c.add_argument("--range", dest="ranges", action="append", metavar="NAME=LO..HI",
                   help="a size and its range: log-spaced shapes over it (repeat for a grid)")
    c.add_argument("--shapes", nargs="+", metavar="SHAPE", help='shapes instead of a range, e.g. "B=100" "B=1000"')
    c.add_argument("--points", type=int, default=8, help="shapes over the range (default 8; each costs two fresh compiles)")
    c.add_argument("--compiles", type=int, default=1, help="compiles of the same hints in all, for the spread (default 1)")
    session_and_hints(c)
    compile_flags(c)


def run(args: argparse.Namespace) -> int:
    if len(args.model) == 2:
        return _recordings(args.model)
    if len(args.model) != 1:
        raise KinspectError("compare takes a model file, or two recorded sessions to put side by side")
    model, ranges, shapes, points, compiles = args.model[0], args.ranges, args.shapes, args.points, args.compiles
    out, hints = args.output, args.hints
    from kinspect.inductor import LivePipeline, Options, run_compare, load_model_file

    sizes = shapes_for(ranges, shapes, points)
    if compiles < 1:
        raise KinspectError(f"--compiles takes 1 or more, got {compiles}")
    hint_list = parse_hints(hints) if hints else None
    recording.needs_gpu_first(model, "kinspect compare")
    mf = load_model_file(model)
    mf.check_names({k for s in sizes for k in s}, "--range" if ranges else "--shapes")
    if not recording.cuda_available():
        raise KinspectError(recording.no_cuda(mf.path, "kinspect compare"))
    files = recording_files(out, recording_path(mf.path), [mf.path])
    if files.taken is not None:
        progress(files.taken_text())
    target = files.shown
    options = Options(hints=hint_list, log_path=files.log, progress=progress,
                               failure_log=log_path_for(mf.path), **compile_options(args))
    with LivePipeline(mf, options) as live, tempfile.TemporaryDirectory(prefix="kinspect-") as work:
        live.compile()
        try:
            phases = run_compare(live, sizes, compiles, work, progress)
        finally:
            live.save(files.session)
        session = live.session
    files.settle()
    progress(f"saved {target}: {len(sizes)} shapes, {compiles} compile{'s' if compiles > 1 else ''}")
    console = terminal.table_console()
    c = comparison(session)
    if c is not None:
        console.print(comparison_table(c))
    spread = spread_table(session)
    if spread is not None:
        console.print(spread)
    for line in regret_lines(session):
        console.print(line, markup=False, soft_wrap=True)
    for f in unstable_autotune(session):
        console.print(f"unstable-autotune: {f.site}: {f.message}", markup=False, soft_wrap=True)
    console.print(phases_line(phases), markup=False, soft_wrap=True)
    return 0


def _recordings(paths: list[str]) -> int:
    from pathlib import Path

    from kinspect.core.quality.side_by_side import gaps, side_by_side, what_differed
    from kinspect.core.store import load

    a, b = (load(p) for p in paths)
    rows, whole = side_by_side(a, b)
    full = tuple(Path(p).name.removesuffix(".session.json") for p in paths)
    names = recording_labels(full[0], full[1])
    console = terminal.table_console()
    if names != full:
        console.print(shown(f"{names[0]}: {paths[0]}  ·  {names[1]}: {paths[1]}"), markup=False, soft_wrap=True)
    console.print(side_by_side_table(names, rows, whole))
    for line in what_differed(names, rows, whole):
        console.print(shown(line), markup=False, soft_wrap=True)
    for name, s in zip(names, (a, b)):
        for line in gaps(s):
            console.print(shown(f"{name}: {line}"), markup=False, soft_wrap=True)
    return 0


def recording_labels(a: str, b: str) -> tuple[str, str]:
    """Column labels for two recordings: what tells their names apart (`stock` and `fixed`
    for `mlp_train.stock` and `mlp_train.fixed`), cut at a `.`, `_` or `-`, so eight columns
    fit a terminal; the names themselves where nothing shorter tells them apart."""
    if a == b:
        return ("first", "second")
    prefix, suffix = os.path.commonprefix([a, b]), os.path.commonprefix([a[::-1], b[::-1]])
    start = max(prefix.rfind(c) for c in "._-") + 1
    end = max(suffix.rfind(c) for c in "._-") + 1
    short = (a[start:len(a) - end], b[start:len(b) - end])
    return short if all(short) and short[0] != short[1] else (a, b)
