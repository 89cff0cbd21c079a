"""How long displaying a size expression can take: the slowest of many random trees of up
to 64 nodes over every operation (sympy prints those it is given within `_sympy_fits`,
the rest are written as they are), and the audit's hostile cases, against a target of
100 ms per expression (the inspector redraws at every keystroke; `explain` of a session
of such sizes ran 289 s before).

Each expression is displayed once from a cold cache, as the first screen does.

Usage: python benchmarks/symbolic_display.py [--trees 3000] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kinspect.core.dispatch import symbolic  # noqa: E402
from kinspect.core.dispatch.symbolic import SizeExpr, _nodes  # noqa: E402

TARGET_S = 0.1
OPS = ("add", "mul", "floordiv", "ceildiv", "mod", "max", "min", "pow")
HOSTILE = {
    "Max of 63 symbols": ("max", *[f"s{i}" for i in range(63)]),
    "Min of 8 sums": ("min", *[("add", f"s{i}", f"s{i + 1}", 7) for i in range(8)]),
    "Mod of a 12-symbol product": ("mod", ("mul", *[f"s{i}" for i in range(12)]), 3),
    "sum of 20 Max of 3": ("add", *[("max", f"s{i}", f"s{i + 1}", f"s{i + 2}") for i in range(20)]),
}


def tree(rng: random.Random, budget: int, depth: int = 0) -> symbolic.Tree:
    if budget <= 1 or depth > 5 or rng.random() < 0.3:
        return rng.choice([f"s{rng.randrange(70)}", rng.randrange(1, 5000)])
    op = rng.choice(OPS)
    k = 2 if op in ("floordiv", "ceildiv", "mod", "pow") else rng.randint(2, 12)
    if op == "pow":
        return (op, tree(rng, budget // 2, depth + 1), rng.randrange(0, 4))
    return (op, *(tree(rng, budget // k, depth + 1) for _ in range(k)))


def shown_in(t: symbolic.Tree) -> float:
    symbolic._text.cache_clear()
    start = time.perf_counter()
    SizeExpr(t).text  # noqa: B018
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--trees", type=int, default=3000)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    shown_in(("max", "s0", "s1"))  # sympy's import, once
    for name, t in HOSTILE.items():
        took = shown_in(t)
        print(f"{name}: {took * 1000:.1f} ms (target {TARGET_S * 1000:.0f} ms) "
              f"{'ok' if took <= TARGET_S else 'OVER'}")
    rng = random.Random(a.seed)
    worst, shown = (0.0, None), 0
    for _ in range(a.trees):
        t = tree(rng, 64)
        if not isinstance(t, tuple) or _nodes(t) > 64:
            continue
        shown += 1
        took = shown_in(t)
        if took > worst[0]:
            worst = (took, t)
    print(f"slowest of {shown} random trees of up to 64 nodes: {worst[0] * 1000:.1f} ms "
          f"(target {TARGET_S * 1000:.0f} ms) {'ok' if worst[0] <= TARGET_S else 'OVER'}: {str(worst[1])[:100]}")


if __name__ == "__main__":
    main()
