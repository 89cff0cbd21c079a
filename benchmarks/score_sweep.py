"""How much faster kinspect's vectorised scoring is than Inductor's own per-key loop.

Sweeps the batch size B of an `nn.Linear(1024, 4096)` site (addmm: bias, x, weight, out)
over N values against V size-hint variants (hints 64, 128, 256, ...), and scores every
key twice: with `kinspect.core.dispatch.batch.score_array`, and with a loop that does what
`SizeHintMultiKernelCall._select_kernel_by_shape` does, calling the real class's
`_dist_heuristic` on an instance built with stand-in kernels. Both must choose the same
variant for every key they both score, or the script exits 1.

The Inductor loop takes tens of seconds per million keys, so by default it runs on an
evenly spaced sample (`--inductor-sample`) and its per-key rate is extrapolated; the
output says when it is.

    python benchmarks/score_sweep.py                      # N=1,000,000, V=8, sample 100,000
    python benchmarks/score_sweep.py --inductor-sample 0  # time Inductor on all N keys
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from timing import best_of  # noqa: E402

from kinspect.core.dispatch.batch import layout_of, score_array, score_keys  # noqa: E402
from tests.synthetic import linear_site  # noqa: E402

TARGET = 50.0


def sweep_sizes(site, n: int) -> np.ndarray:
    """The (N, total rank) array of runtime keys for B = 1 .. N (other dims constant)."""
    b = np.arange(1, n + 1, dtype=np.int64)
    columns = []
    for tensor in site.tensors:
        for size in tensor.sizes:
            columns.append(np.full(n, size.tree, dtype=np.int64) if size.is_constant else b)
    return np.stack(columns, axis=1)


def inductor_call(hint_keys):
    os.environ["TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE"] = "1"
    from torch._inductor.codegen.multi_kernel import SizeHintMultiKernelCall

    class StandIn:
        def __init__(self, i: int) -> None:
            self.inductor_meta = {"kernel_name": f"stand_in_{i}"}

        def run(self, *args, **kwargs) -> None:
            pass

    kernels = {k: StandIn(i) for i, k in enumerate(hint_keys)}
    return SizeHintMultiKernelCall("multi_kernel_0", kernels, {i: [slice(0, 4)] for i in range(len(kernels))})


def inductor_loop(call, keys):
    """`_select_kernel_by_shape`'s decision, key by key, without its cache."""
    hints = call._kernel_hints
    dist = call._dist_heuristic
    picks, rows = [], []
    for key in keys:
        dists = [dist(key, h) if h is not None else 2**62 for h in hints]
        picks.append(dists.index(min(dists)))
        rows.append(dists)
    return picks, rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1_000_000, help="runtime keys in the sweep (B = 1 .. N)")
    p.add_argument("--variants", type=int, default=8, help="size-hint variants (hints 64, 128, ...)")
    p.add_argument("--inductor-sample", type=int, default=100_000,
                   help="keys the Inductor loop scores (evenly spaced); 0 = all N")
    p.add_argument("--repeat", type=int, default=3, help="vectorised runs; the fastest counts")
    args = p.parse_args()

    hints = [2 ** (6 + i) for i in range(args.variants)]
    site = linear_site(0, hints, random.Random(0))
    hint_keys = list(site.keys)
    sizes = sweep_sizes(site, args.n)
    layout = layout_of(hint_keys[0])

    vec_s, scores = best_of(args.repeat, lambda: score_array(sizes, layout, hint_keys))

    sample = args.n if args.inductor_sample <= 0 else min(args.inductor_sample, args.n)
    rows = np.linspace(0, args.n - 1, sample).round().astype(np.int64) if sample < args.n else np.arange(args.n)
    keys = [tuple(tuple(int(x) for x in sizes[r, a:b]) for a, b in _spans(layout)) for r in rows]
    call = inductor_call(hint_keys)
    ind_s, (picks, dists) = best_of(1, lambda: inductor_loop(call, keys))
    from_tuples_s, from_tuples = best_of(args.repeat, lambda: score_keys(keys, hint_keys))

    same_choice = np.array_equal(scores.chosen[rows], np.array(picks))
    same_bits = np.array_equal(scores.distances[rows], np.array(dists, dtype=np.float64))
    same_from_tuples = np.array_equal(from_tuples.chosen, np.array(picks))

    vec_rate = args.n / vec_s
    ind_rate = sample / ind_s
    ratio = vec_rate / ind_rate
    counts = np.bincount(scores.chosen, minlength=len(hint_keys))
    print(f"site: addmm (bias, x, weight, out), layout {layout}, hints {hints}")
    print(f"sweep: B = 1 .. {args.n:,} ({args.n:,} runtime keys), {len(hint_keys)} variants")
    print(f"keys per variant: {', '.join(f'v{i}={c:,}' for i, c in enumerate(counts))}")
    print(f"kinspect batch (numpy), from an (N, {sizes.shape[1]}) array: "
          f"{vec_s:.3f} s, {vec_rate:,.0f} keys/s (best of {args.repeat})")
    print(f"kinspect batch, from {sample:,} tuple keys (incl. conversion): "
          f"{from_tuples_s:.3f} s, {sample / from_tuples_s:,.0f} keys/s")
    scope = "all keys" if sample == args.n else f"{sample:,} evenly spaced keys, rate extrapolated to N"
    print(f"Inductor loop (_dist_heuristic per variant, first minimum), on {scope}: "
          f"{ind_s:.3f} s, {ind_rate:,.0f} keys/s"
          + ("" if sample == args.n else f" (~{args.n / ind_rate:.1f} s for all N)"))
    print(f"speedup: {ratio:,.1f}x (target >= {TARGET:.0f}x: {'met' if ratio >= TARGET else 'NOT met'})")
    print(f"same choices on the {sample:,} keys both scored: {'yes' if same_choice else 'NO'}; "
          f"same distances bit for bit: {'yes' if same_bits else 'NO'}; "
          f"from tuple keys: {'yes' if same_from_tuples else 'NO'}")
    return 0 if same_choice and same_bits and same_from_tuples else 1


def _spans(layout):
    start = 0
    for rank in layout:
        yield start, start + rank
        start += rank


if __name__ == "__main__":
    sys.exit(main())
