"""`kinspect sweep model.py --range B=1..16384`: every variant of every site timed across
the shape space on the GPU, saved with the session, summed up as dispatch quality."""

from __future__ import annotations

import argparse
import threading
import time


from kinspect.commands import terminal
from kinspect.commands import recording
from kinspect.commands.options import check_points, parse_hints, session_and_hints, compile_flags, compile_options
from kinspect.core.printing import progress
from kinspect.commands.quality_view import print_what_if, quality_table
from kinspect.commands.stderr_log import log_path_for
from kinspect.core.dispatch.shapes import sizes_text
from kinspect.core.errors import KinspectError
from kinspect.core.numbers import seconds
from kinspect.core.recording_files import recording_files
from kinspect.core.store import recording_path
from kinspect.core.quality.overview import model_quality
from kinspect.core.quality.sweep_plan import describe, parse_ranges
from kinspect.core.quality.whatif import what_ifs


def add_args(w: argparse.ArgumentParser) -> None:
    w.description = (
        "Compile model.py with hints, run its workload, then time every variant of every site at "
        "log-spaced sizes over each --range, both sides of every decision boundary, and the "
        "workload's sizes. With two ranges the sizes form a grid. A size not swept stays at its "
        "example value; where a key's dim is a product (B*S rows), sweeping B moves that product "
        "with S at its example. Ctrl-C stops and keeps what was measured.")
    w.add_argument("model")
    w.add_argument("--range", dest="ranges", action="append", required=True, metavar="NAME=LO..HI",
                   help="a size and its range, e.g. B=1..16384 (repeat for a second size: a grid)")
    w.add_argument("--points", type=int, default=48, help="grid points in all (default 48; a 2-D grid takes about its square root per size)")
    session_and_hints(w)
    compile_flags(w)


def run(args: argparse.Namespace) -> int:
    model, ranges, points, out, hints = args.model, args.ranges, args.points, args.output, args.hints
    from kinspect.inductor import LivePipeline, Options, load_model_file, run_sweep

    say = progress
    check_points(points)
    spans = parse_ranges(ranges)
    hint_list = parse_hints(hints) if hints else None
    recording.needs_gpu_first(model, "kinspect sweep")
    mf = load_model_file(model)  # its problems first, on any machine
    mf.check_names(spans, "--range")  # before minutes of compiling, and before anything is saved
    if not recording.cuda_available():
        raise KinspectError(recording.no_cuda(mf.path, "kinspect sweep"))
    files = recording_files(out, recording_path(mf.path), [mf.path])
    if files.taken is not None:
        say(files.taken_text())
    target = files.shown
    options = Options(hints=hint_list, log_path=files.log, progress=say,
                               failure_log=log_path_for(mf.path), **compile_options(args))
    cancel = threading.Event()
    with LivePipeline(mf, options) as live:
        live.compile()
        live.run_workload()
        started = time.perf_counter()
        try:
            sweep = run_sweep(live, spans, points, say, cancel)
        finally:
            live.save(files.session)
        took = time.perf_counter() - started
        session = live.session
    files.settle()
    kept = len(sweep.points)
    say(f"saved {target}: {describe(spans, kept)} in {seconds(took)}" +
        (f"; {len(sweep.skipped)} skipped" if sweep.skipped else ""))
    for sizes, why in sweep.skipped[:10]:
        say(f"  skipped {sizes_text(sizes)}: {why}")
    console = terminal.table_console()
    console.print(quality_table(model_quality(session)))
    results = what_ifs(session)
    if results:
        print_what_if(console, results, session)
    return 130 if any(why == "interrupted" for _, why in sweep.skipped) else 0
