"""Which sizes Inductor with hint-per-symbol.patch tunes each hint at, for every graph a
program compiles: run on any machine, the CPU included, since the sizes are decided from the
graph and its shape environment before any kernel exists.

    PYTHONPATH=/path/to/patched-torch python hint_sizes_probe.py [--hints 64,256,4096] PROGRAM.py ARGS...
    python hint_sizes_probe.py --kinspect [--hints ...] PROGRAM.py ARGS...   (stock torch, kinspect importable)

The program runs as under `python`, with `multi_kernel_hints` set and Inductor's caches off
(a cached graph is not lowered again, so it would print nothing). After each graph is lowered
this prints one line per hint: each size symbol with the input it came from, its example
value, and `(lowered)` where the patch put it under both the hint and its own bound (a
guard, or 32-bit indexing for a tensor of the graph). Nothing else of the compile changes.
With `--kinspect` it prints instead the sizes kinspect's `--one-size-per-symbol` gives the
same graphs on a stock Inductor (its budget for one GEMM set to a quarter of an 80 GB GPU),
to hold the two rules against each other.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import runpy
import sys

os.environ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"

import torch._inductor.config as inductor_config  # noqa: E402
from torch._inductor.graph import GraphLowering  # noqa: E402
from torch._inductor.sizevars import SizeVarAllocator  # noqa: E402
from torch._inductor.virtualized import V  # noqa: E402


def _source(env, symbol) -> str:
    sources = env.var_to_sources.get(symbol) or []
    if not sources:
        return "?"
    name = sources[0].name
    return name() if callable(name) else name


def _report(graph: GraphLowering, index: int, hints: list[int]) -> None:
    sv = graph.sizevars
    env = sv.shape_env
    examples = getattr(env, "backed_var_to_val", None) or env.var_to_val
    symbols = [s for s in examples if str(s).startswith("s")]
    with V.set_graph_handler(graph):
        tensors = f"{len(sv._graph_numels() or ())} tensors, " if hasattr(sv, "_graph_numels") else ""
        print(f"graph {index}: {tensors}{len(env.guards)} guards", flush=True)
        for hint in hints:
            if hasattr(sv, "_sizes_at_hint"):
                sizes = sv._sizes_at_hint(hint)
            else:  # kinspect's mode: the value it gives each symbol's own expression
                sizes = {s: sv.optimization_hint_with_override(s, hint) for s in symbols}
            parts = []
            for s, v in sorted(sizes.items(), key=lambda kv: str(kv[0])):
                upper = env.var_to_range[s].upper
                bound = int(upper) if upper.is_Integer else hint
                lowered = " (lowered)" if v < min(hint, bound) else ""
                parts.append(f"{s}={v}{lowered} [{_source(env, s)}, example {examples.get(s)}]")
            print(f"  hint {hint}: " + (", ".join(parts) or "no size symbols"), flush=True)


def main() -> None:
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("--hints", default="64,256,4096")
    a.add_argument("program")
    a.add_argument("args", nargs=argparse.REMAINDER)
    a.add_argument("--kinspect", action="store_true", help="kinspect's --one-size-per-symbol on stock Inductor")
    args = a.parse_args()
    patched = hasattr(SizeVarAllocator, "_sizes_at_hint")
    if args.kinspect and patched:
        sys.exit("hint_sizes_probe.py: --kinspect needs a stock Inductor, and this one is patched")
    if not args.kinspect and not patched:
        sys.exit("hint_sizes_probe.py: this torch's Inductor is not patched (no SizeVarAllocator._sizes_at_hint): "
                 "put the patched copy first on PYTHONPATH")
    mode = contextlib.nullcontext()
    if args.kinspect:
        from kinspect.inductor.hooks.fixes import hint_sizes

        mode = hint_sizes.one_size_per_symbol(budget=20 << 30)
    hints = [int(h) for h in args.hints.split(",")]
    inductor_config.multi_kernel_hints = hints
    run = GraphLowering.run
    count = 0

    def probed(graph: GraphLowering, *a, **k):
        nonlocal count
        out = run(graph, *a, **k)
        _report(graph, count, hints)
        count += 1
        return out

    GraphLowering.run = probed
    sys.argv = [args.program, *args.args]
    with mode:
        runpy.run_path(args.program, run_name="__main__")


if __name__ == "__main__":
    main()
