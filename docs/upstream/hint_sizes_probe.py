"""Which sizes Inductor with hint-per-symbol.patch tunes each hint at, for every graph a
program compiles: run on any machine, the CPU included, since the sizes are decided from the
graph and its shape environment before any kernel exists.

    PYTHONPATH=/path/to/patched-torch python hint_sizes_probe.py [--hints 64,256,4096] PROGRAM.py ARGS...

The program runs as under `python`, with `multi_kernel_hints` set and Inductor's caches off
(a cached graph is not lowered again, so it would print nothing). After each graph is lowered
this prints one line per hint: each size symbol with the input it came from, its example
value, and `(lowered)` where the patch put it under both the hint and its own bound (a
guard, or 32-bit indexing for a tensor of the graph). Nothing else of the compile changes.
"""

from __future__ import annotations

import argparse
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
    with V.set_graph_handler(graph):
        numels = sv._graph_numels() or ()
        print(f"graph {index}: {len(numels)} tensors, {len(env.guards)} guards", flush=True)
        for hint in hints:
            sizes = sv._sizes_at_hint(hint)
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
    args = a.parse_args()
    if not hasattr(SizeVarAllocator, "_sizes_at_hint"):
        sys.exit("hint_sizes_probe.py: this torch's Inductor is not patched (no SizeVarAllocator._sizes_at_hint): "
                 "put the patched copy first on PYTHONPATH")
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
    runpy.run_path(args.program, run_name="__main__")


if __name__ == "__main__":
    main()
