"""The `kinspect` command: argument parsing and error reporting, nothing else.

Each subcommand hands its work to the core, the Inductor layer or the TUI; bad input
surfaces as one `kinspect: error:` line and exit status 2 (`--debug` keeps the
traceback).
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from kinspect.core.errors import KinspectError

FIT_HELP = ("patch Inductor's hint autotuning so each benchmark tensor holds what its kernel reads at the hint, "
            "and time configs in a child process where one that faults is skipped (the session says so)")
COMMANDS = ("open", "explain", "record", "export", "sweep", "plot", "compare", "advise")


class _Parser(argparse.ArgumentParser):
    """Usage mistakes read like every other error: one `kinspect: error:` line, status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"kinspect: error: {message} (see: {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="kinspect",
        description="Inspect PyTorch Inductor's size-hint multi-kernel dispatch.",
        epilog="kinspect PATH opens model.py live (CUDA) or a recorded session anywhere.",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    o = sub.add_parser("open", help="open a recorded session (or a torchrun job's rank sessions, or their folder)")
    o.add_argument("session", nargs="+", help="a session file; several rank sessions or a folder of them merge")

    e = sub.add_parser("explain", help="headless: what each site picks for a shape")
    e.add_argument("session", nargs="+", help="a session or model.py; several rank sessions or a folder of them merge")
    e.add_argument("--shape", help='runtime shape: "B=1000", or with --site the whole key it sees, '
                        '"(4096,),(1000,1024),(4096,1024),(1000,4096)" for samples/mlp.py\'s first site')
    e.add_argument("--site", help="restrict to one site (needed with a full key)")
    e.add_argument("--heuristic", default="inductor", help="distance to decide by (default: inductor)")
    e.add_argument("--json", action="store_true", help="print JSON instead of tables")
    e.add_argument("--measure", action="store_true", help="with model.py: time every variant at --shape on the GPU")
    e.add_argument("--hints", help="with model.py: multi_kernel_hints, comma-separated")
    e.add_argument("--l2-flush", action="store_true", help="with --measure: flush L2 between launches (cold-cache timings)")
    e.add_argument("--baselines", metavar="KINDS",
                   help="with model.py: whole-model baselines at --shape, comma-separated from eager,static,exact_hint,hinted "
                        "(each compiled kind costs a compile)")

    x = sub.add_parser("export", help="write a session as JSON, a Markdown report or a Perfetto trace")
    x.add_argument("session", nargs="+", help="a session; several rank sessions or a folder of them: perfetto only")
    x.add_argument("--format", required=True, choices=("json", "md", "perfetto"), dest="format")
    x.add_argument("-o", "--output", required=True, metavar="FILE", help="file to write")

    r = sub.add_parser("record", help="headless: compile model.py with hints on the GPU, run it, save the session")
    r.add_argument("model")
    _session_and_hints(r)
    r.add_argument("--shapes", nargs="+", metavar="SHAPE", help='shapes to run instead of the workload, e.g. "B=100" "B=1000"')
    r.add_argument("--measure", action="store_true", help="time every variant at each distinct shape run")
    r.add_argument("--l2-flush", action="store_true", help="with --measure: flush L2 between launches (cold-cache timings)")
    r.add_argument("--baselines", metavar="KINDS",
                   help="whole-model baselines at each distinct shape run, comma-separated from "
                        "eager,static,exact_hint,hinted (each compiled kind costs a compile per shape)")
    r.add_argument("--train", action="store_true", help="compile for training (default: inference under no_grad)")
    r.add_argument("--allow-caches", action="store_true",
                   help="keep Inductor's caches on: faster, but a cache hit skips the compile-time facts (autotune tables, symbolic sizes)")

    w = sub.add_parser(
        "sweep", help="GPU: time every variant of every site across a range of sizes; save the map",
        description="Compile model.py with hints, run its workload, then time every variant of every site at "
                    "log-spaced sizes over each --range, both sides of every decision boundary, and the "
                    "workload's sizes. With two ranges the sizes form a grid. A size not swept stays at its "
                    "example value; where a key's dim is a product (B*S rows), sweeping B moves that product "
                    "with S at its example. Ctrl-C stops and keeps what was measured.")
    w.add_argument("model")
    w.add_argument("--range", dest="ranges", action="append", required=True, metavar="NAME=LO..HI",
                   help="a size and its range, e.g. B=1..16384 (repeat for a second size: a grid)")
    w.add_argument("--points", type=int, default=48, help="grid points in all (default 48; a 2-D grid takes about its square root per size)")
    _session_and_hints(w)

    c = sub.add_parser(
        "compare", help="GPU: the whole model hinted, oracle, exact_hint, static and eager at each shape",
        description="Compile model.py with hints; at each shape time every variant, then the whole model with "
                    "Inductor's picks (hinted) and with the fastest variant forced at every site (oracle), both on "
                    "this compile, and exact_hint, static and eager each compiled afresh in a process of its own. "
                    "Prints each kind's geometric-mean slowdown against the best kind per shape; saves it all. "
                    "--compiles N compiles the same hints N times in all (fresh processes) to show the spread.")
    c.add_argument("model")
    c.add_argument("--range", dest="ranges", action="append", metavar="NAME=LO..HI",
                   help="a size and its range: log-spaced shapes over it (repeat for a grid)")
    c.add_argument("--shapes", nargs="+", metavar="SHAPE", help='shapes instead of a range, e.g. "B=100" "B=1000"')
    c.add_argument("--points", type=int, default=8, help="shapes over the range (default 8; each costs two fresh compiles)")
    c.add_argument("--compiles", type=int, default=1, help="compiles of the same hints in all, for the spread (default 1)")
    _session_and_hints(c)

    a = sub.add_parser(
        "advise", help="GPU: propose the hints that cost the workload least, verified by compiling them",
        description="Compile model.py once with every candidate hint (each power of two in the range), time every "
                    "variant at the workload's sizes, choose the subset of at most --max-hints hints that Inductor's "
                    "own heuristic would dispatch best among, then compile it (and the default 64,256,4096) afresh "
                    "and measure. Workload: --workload FILE (B=... per line, an optional count: B=1000 x40, or "
                    "B=4 S=128 for a grid), else the model file's workload, else uniform over the range (the grid "
                    "of ranges) in log space.")
    a.add_argument("model")
    a.add_argument("--range", dest="ranges", action="append", required=True, metavar="NAME=LO..HI",
                   help="a size the hints are for and its range, e.g. B=1..16384 (repeat for a grid: "
                        "--range B=2..32 --range S=16..1024; each hint applies to every dynamic dim)")
    a.add_argument("--workload", metavar="FILE", help="sizes to weigh, one per line (B=1000, or B=1000 x40)")
    a.add_argument("--max-hints", type=int, default=3, help="at most this many hints (default 3)")
    a.add_argument("--compiles", type=int, default=1, help="fresh compiles per verified hint set (default 1)")
    a.add_argument("--points", type=int, default=24, help="sizes of the uniform workload (default 24)")
    a.add_argument("--candidates", help="candidate hints, comma-separated (default: every power of two in the range)")
    a.add_argument("-o", "--output", metavar="FILE", help="session file (default: MODEL.advise.session.json beside it)")
    a.add_argument("--fit-benchmark-tensors", action="store_true", help=FIT_HELP)

    pl = sub.add_parser("plot", help="draw each site's decision map as an image (.png or .svg; needs matplotlib)")
    pl.add_argument("session")
    pl.add_argument("-o", "--output", required=True, metavar="FILE", help="image file: .png or .svg")
    pl.add_argument("--site", help="only this site")

    i = sub.add_parser("inspect", help="the default: kinspect PATH opens model.py live (CUDA) or its recording, or a session")
    i.add_argument("path", nargs="+")
    i.add_argument("--fit-benchmark-tensors", action="store_true", help=FIT_HELP)
    for command in sub.choices.values():  # `--debug` after the subcommand works too
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    return p


def _session_and_hints(command: argparse.ArgumentParser) -> None:
    """The two options of every command that compiles a model and saves its session."""
    command.add_argument("-o", "--output", metavar="FILE", help="session file (default: MODEL.session.json beside it)")
    command.add_argument("--hints", help="multi_kernel_hints, comma-separated (default: the model's, else 64,256,4096)")
    command.add_argument("--fit-benchmark-tensors", action="store_true", help=FIT_HELP)


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in args_list if not a.startswith("-")), None)
    if first is not None and first not in COMMANDS and first != "inspect":
        args_list.insert(args_list.index(first), "inspect")
    parser = _parser()
    args = parser.parse_args(args_list)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return _dispatch(args)
    except KinspectError as err:
        if args.debug:
            traceback.print_exc()
        print(f"kinspect: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kinspect: interrupted", file=sys.stderr)
        return 130


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "explain":
        from kinspect.commands import explain

        return explain.run(args.session, args.shape, args.site, args.heuristic, args.json,
                           args.measure, args.hints, args.l2_flush, args.baselines)
    if args.command == "export":
        from kinspect.commands import export

        return export.run(args.session, args.format, args.output)
    if args.command == "record":
        from kinspect.commands import record

        return record.run(args.model, args.output, args.hints, args.shapes, args.train,
                          args.allow_caches, args.measure, args.l2_flush, args.baselines,
                          fit=args.fit_benchmark_tensors)
    if args.command == "sweep":
        from kinspect.commands import sweep

        return sweep.run(args.model, args.ranges, args.points, args.output, args.hints, fit=args.fit_benchmark_tensors)
    if args.command == "compare":
        from kinspect.commands import compare

        return compare.run(args.model, args.ranges, args.shapes, args.points, args.compiles, args.output, args.hints,
                           fit=args.fit_benchmark_tensors)
    if args.command == "advise":
        from kinspect.commands import advise

        return advise.run(args.model, args.ranges, args.workload, args.max_hints, args.compiles, args.points,
                          args.candidates, args.output, fit=args.fit_benchmark_tensors)
    if args.command == "plot":
        from kinspect.commands import plot

        return plot.run(args.session, args.output, args.site)
    if args.command == "open":
        from kinspect.commands import inspect

        return inspect.open_session(args.session)
    if args.command == "inspect":
        from kinspect.commands import inspect

        return inspect.open_path(args.path, fit=args.fit_benchmark_tensors)
    raise AssertionError(args.command)


if __name__ == "__main__":
    sys.exit(main())
