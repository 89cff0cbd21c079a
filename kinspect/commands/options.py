"""What the commands' flags mean, parsed once for all commands (record, explain, sweep) and
the benchmarks that take the same flags."""

from __future__ import annotations

import argparse
from kinspect.core.errors import KinspectError, echo
from kinspect.core.session.compile_changes import CompileChanges
from kinspect.core.dispatch.shapes import MAX_SIZE, SymbolShape, parse_shape
from kinspect.core.quality.sweep_plan import MAX_POINTS


def session_and_hints(parser: argparse.ArgumentParser) -> None:
    """The two options of every command that compiles a model and saves its session."""
    parser.add_argument("-o", "--output", metavar="FILE", help="session file (default: MODEL.session.json beside it)")
    parser.add_argument("--hints", help="multi_kernel_hints, comma-separated (default: the model's, else 64,256,4096)")


def check_points(points: int, flag: str = "--points") -> int:
    """`--points`, refused before anything else runs (a model load, the GPU check): each
    point is measured, and a sweep plans at most `MAX_POINTS`."""
    if not 1 <= points <= MAX_POINTS:
        raise KinspectError(f"{flag} {echo(points)}: takes 1 to {MAX_POINTS:,}")
    return points


def parse_steps(shapes: list[str] | None) -> list[dict[str, int]] | None:
    if not shapes:
        return None
    steps = []
    for text in shapes:
        parsed = parse_shape(text)
        if not isinstance(parsed, SymbolShape):
            raise KinspectError(f"--shapes takes symbol values like B=1000, not a full key: {echo(text)}")
        steps.append(parsed.values)
    return steps


def parse_baselines(text: str | None) -> list[str]:
    from kinspect.core.session.runtime import BASELINE_KINDS as KINDS

    kinds = [k for k in (text or "").replace(" ", "").split(",") if k]
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise KinspectError(f"--baselines takes {', '.join(KINDS)}; not {echo(bad[0])}")
    return kinds


def parse_hints(text: str) -> list[int]:
    words = [h for h in text.replace(" ", "").split(",") if h]
    if not all(w.isdigit() and len(w) <= len(str(MAX_SIZE)) for w in words):  # before int(): 4,300 digits at most
        raise KinspectError(f"--hints takes comma-separated positive integers up to 2**62, got {echo(text)}")
    hints = [int(h) for h in words]
    if not hints or any(h <= 0 or h > MAX_SIZE for h in hints):
        raise KinspectError(f"--hints takes comma-separated positive integers up to 2**62, got {echo(text)}")
    return hints


FIT_HELP = ("patch Inductor's hint autotuning so each benchmark tensor holds what its kernel reads at the hint, "
            "and time configs in a child process where one that faults is skipped (the session says so)")


SIZES_HELP = ("tune, key and launch each hint's variant at one size per symbol (each dynamic size the hint within its "
              "bounds, the hint rounded to a multiple of 2, 4, 8, ... or halved where the graph could not run "
              "there: a guard, 32-bit indexing, a GEMM over a quarter of the GPU's memory): stock Inductor gives a "
              "product such as B*S the hint itself in the grid, key and benchmark tensors but hint² inside the kernel "
              "(the session lists the sizes)")


FUSION_HELP = ("pick each hint's fused epilogue among that hint's own choices: stock Inductor's fusion benchmark at a "
               "later hint also compares the earlier hints' choices, timed on their smaller problems, so a larger "
               "hint's variant runs a config tuned for a smaller one (the session says so)")


DEVICE_TIME_HELP = ("time Inductor's autotune benchmarks by the GPU's work alone: a spin kernel holds the GPU while the "
                    "host launches each timed call, where stock Inductor's events take the host's launch latency in "
                    "(tens of µs on a slow host, more than a small GEMM runs), so configs are ranked on it "
                    "(the session says so)")


LAYERS_HELP = ("compile the model's repeated blocks (a ModuleList of one class) once, as nested compile regions: "
               "each GEMM layout is lowered and autotuned once however many layers share it; nothing is fused across "
               "a block's boundary (the session says so)")


def name_flag(parser: argparse.ArgumentParser) -> None:
    """`--name s27=S`: the user's names for a recording's sizes, wherever a size is shown."""
    parser.add_argument("--name", action="append", default=[], metavar="SIZE=NAME",
                        help="call a size by your name, wherever one is shown: s27=S (Inductor's name or the one "
                             "shown; repeat it, or s27=S,s52=B)")


def renames(args: argparse.Namespace) -> dict[str, str]:
    """`--name`'s renames, refused in one line where one does not read SIZE=NAME."""
    from kinspect.core.session.size_names import parse_names

    return parse_names(args.name)


def compile_flags(parser: argparse.ArgumentParser) -> None:
    """What kinspect may change in Inductor's compile, the same on every command that compiles the model."""
    parser.add_argument("--one-size-per-symbol", action="store_true", help=SIZES_HELP)
    parser.add_argument("--fusion-per-hint", action="store_true", help=FUSION_HELP)
    parser.add_argument("--autotune-device-time", action="store_true", help=DEVICE_TIME_HELP)
    parser.add_argument("--fit-benchmark-tensors", action="store_true", help=FIT_HELP)
    parser.add_argument("--compile-layers-once", action="store_true", help=LAYERS_HELP)


def compile_options(args: argparse.Namespace) -> dict[str, CompileChanges]:
    """The pipeline `Options` (and `RunOptions`) those flags set."""
    return {"changes": CompileChanges(args.one_size_per_symbol, args.fit_benchmark_tensors, args.compile_layers_once,
                                      args.fusion_per_hint, args.autotune_device_time)}
