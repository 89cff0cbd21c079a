"""`kinspect run`: record an unmodified program, the way `python -m cProfile` profiles one.

The program runs in this process as Python would run it (kinspect.commands.launch) while
kinspect records whatever it compiles and every size-hint dispatch it makes; the session
is saved whatever way the program ends (it returns, raises, calls `sys.exit`, or is
interrupted), and its exit status is passed through. A killed program leaves its
crash-safe log (`.jsonl`), which opens like the session. kinspect's own lines go to
stderr, so they never mix into the program's output.

Under torchrun each rank records its own session (`script.rankN.session.json`); the
program joins its process group itself, as it does without kinspect.
"""

from __future__ import annotations

import argparse

from kinspect.commands.options import compile_flags, compile_options
from kinspect.core.errors import KinspectError


def add_args(r: argparse.ArgumentParser) -> None:
    r.description = (
        "Run a Python program as `python script.py ARGS...` (or `python -m module ARGS...`) would, and "
                    "record what it compiles with Inductor and every size-hint dispatch it makes into a session. "
                    "The program keeps its argv, stdin, stdout and exit status, its own torch.compile calls and "
                    "Inductor settings. kinspect's options go before the program; everything after it is the "
                    "program's.")
    r.add_argument("-o", "--output", metavar="FILE",
                   help="session file (default: SCRIPT.session.json beside it, or MODULE.session.json here)")
    r.add_argument("--hints", help="multi_kernel_hints (comma-separated) for a program that sets none, with "
                                   "max-autotune and Triton GEMMs; a program that sets its own keeps them")
    r.add_argument("--measure", action="store_true",
                   help="after the program, time every variant at each distinct key it ran (CUDA GPU)")
    compile_flags(r)
    r.add_argument("-m", dest="module", nargs=argparse.REMAINDER, metavar="MODULE ARGS",
                   help="run a module as python -m does")
    r.add_argument("program", nargs=argparse.REMAINDER, metavar="script.py ARGS", help="the program and its arguments")


def run(args: argparse.Namespace) -> int:
    from kinspect.core.recording_files import recording_files
    from kinspect.commands.launch import Program, print_program_traceback
    from kinspect.commands.options import parse_hints
    from kinspect.core.printing import progress
    from kinspect.inductor import torchrun

    program = Program.parse(args.module, args.program)
    hints = parse_hints(args.hints) if args.hints else None
    rank = torchrun.from_environment()
    say = progress
    if rank is not None:  # one file each, and each line says whose
        say = lambda text: progress(type(text)(f"rank {rank.rank}: {text}"))  # noqa: E731  (a passing line stays one)
    files = recording_files(args.output, program.session_path(), program.files(), None if rank is None else rank.rank)
    if files.taken is not None:
        say(files.taken_text())
    target = files.shown
    from kinspect.commands.recording import cuda_available
    from kinspect.inductor import ProgramRecording, RunOptions

    rec = ProgramRecording(RunOptions(files, program.name, hints, args.measure, rank, say, **compile_options(args)))
    gpu = cuda_available()
    ended: BaseException | None = None
    with rec:  # the session's file is checked first: a refusal is its one line
        if not gpu:
            say(without_gpu(hints is not None, args.measure))
        try:
            program.run()
        except BaseException as e:  # noqa: BLE001 - every ending is the program's to report
            ended = e
    if ended is not None and not isinstance(ended, (SystemExit, KeyboardInterrupt)):
        print_program_traceback(ended)
        regions = rec.regions_failed(ended)
        if regions is not None:
            say(regions)
    try:
        session = rec.finish()
    except KinspectError as e:
        raise KinspectError(f"{e}; what was recorded is in {files.log}, which opens as the session does") from None
    if rec.forked:  # the program's own fork, returning here as its parent will
        if isinstance(ended, (SystemExit, KeyboardInterrupt)):
            raise ended
        return 0 if ended is None else 1
    how = "" if ended is None else (
        f" (the program exited with status {_status(ended)})" if isinstance(ended, SystemExit)
        else " (interrupted)" if isinstance(ended, KeyboardInterrupt)
        else f" (the program raised {type(ended).__name__})")
    if rec.kept:
        say(f"recorded nothing{how}: no session saved, {files.taken or target} is as it was")
    else:
        say(f"saved {target}{how}: {len(session.sites)} sites, {len(session.events)} dispatches, "
            f"{len(session.measurements)} measurements, {len(session.findings)} findings")
    if rec.forks:
        say(f"the program forked {rec.forks} process{'es' if rec.forks > 1 else ''}: a recording holds its own "
            "process's dispatches, so what they dispatched is not in the session")
    reason = rec.no_site_reason()
    if reason is not None:
        first = "" if ended is None or isinstance(ended, SystemExit) else " (the program ended before its compiles did)"
        say(f"no size-hint multi-kernel{first}: " + (NO_GPU_SITES if first and not gpu else reason))
    died = rec.compile_died()
    if died is not None:
        say(died)
    if isinstance(ended, (SystemExit, KeyboardInterrupt)):
        raise ended
    return 0 if ended is None else 1


NO_GPU_SITES = "there is no CUDA GPU here, and a size-hint multi-kernel is a Triton GEMM template, which needs one"


def without_gpu(hints: bool, measure: bool) -> str:
    """Up front, in one line: what a recording without a GPU records, and what it cannot."""
    out = ("no CUDA GPU here: the program runs and kinspect records what Inductor compiles, but a size-hint "
           "multi-kernel is a Triton GEMM template, which needs one")
    if hints:
        out += "; --hints asks for Triton GEMMs, which Inductor cannot compile here (NoValidChoicesError)"
    if measure:
        out += "; --measure times nothing"
    return out + "; record on a GPU machine, and open the recording anywhere"


def _status(e: SystemExit) -> int | str:
    code = e.code
    if code is None:
        return 0
    return code if isinstance(code, int) else 1
