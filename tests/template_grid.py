"""A hint-4096 template kernel of `B*S` rows (B and S 8 and 16 at the example) and the
benchmark grid Inductor's own `TritonTemplateKernel.kernel_benchmark_extra_args` gives it: the
example's 128 rows make 48 tiles, the hint's 4,096 rows 1,536. Used in this process
(tests/test_fusion_per_hint.py, kinspect's `--fusion-per-hint`) and in one with a patched copy
of Inductor first on the path (tests/test_upstream_patch.py, `python -m template_grid`)."""

from __future__ import annotations

import contextlib
import math
import types
from collections.abc import Callable


def grid(around: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext) -> list[str]:
    """The kernel's benchmark grid arguments, asked for inside `around()`."""
    from torch._dynamo.source import ConstantSource
    from torch._inductor.select_algorithm import TritonTemplateKernel
    from torch._inductor.sizevars import SizeVarAllocator
    from torch._inductor.virtualized import V
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    env = ShapeEnv()
    b, s = env.create_symbol(8, ConstantSource("B")), env.create_symbol(16, ConstantSource("S"))
    kernel = types.SimpleNamespace(call_sizes=[b * s, 1536], meta={}, hint_override=4096,
                                   grid_fn=lambda m, n, meta: (math.ceil(m / 64) * math.ceil(n / 64), 1, 1))
    graph = types.SimpleNamespace(sizevars=SizeVarAllocator(env))
    with V.set_graph_handler(graph), around():
        out = TritonTemplateKernel.kernel_benchmark_extra_args(kernel)
    assert "optimization_hints" not in vars(graph.sizevars) and "size_hints" not in vars(graph.sizevars)
    return out


if __name__ == "__main__":
    print(grid())
