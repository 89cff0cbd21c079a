# Owner(s): ["module: inductor"]
"""The size-hint multi-kernel tunes and keys each hint's variant on one problem: each size
symbol takes the hint, within its range, the graph's guards and 32-bit indexing of the
graph's tensors (hint-per-symbol.patch). In PyTorch's tree this sits beside
test/inductor/test_multi_kernel.py; run it here with `python test_hint_per_symbol.py`."""

from unittest import mock

import sympy

import torch
import torch._inductor.config as inductor_config
import torch.nn.functional as F
from torch._inductor.graph import GraphLowering
from torch._inductor.test_case import run_tests, TestCase
from torch._inductor.utils import run_and_get_code
from torch._inductor.virtualized import V
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import (
    DimDynamic,
    ShapeEnv,
    StatelessSymbolicContext,
)
from torch.testing._internal.inductor_utils import GPU_TYPE, requires_gpu


def _graph(*widths):
    """A graph over size symbols B (example 8) and S (example 128), made as Dynamo makes
    them, taking a (B, S, n) tensor for each width n."""
    env = ShapeEnv()
    mode = FakeTensorMode(shape_env=env)
    first, *rest = widths or (768,)
    x = mode.from_tensor(
        torch.empty(8, 128, first),
        symbolic_context=StatelessSymbolicContext(
            dynamic_sizes=[DimDynamic.DYNAMIC, DimDynamic.DYNAMIC, DimDynamic.STATIC]
        ),
    )
    with mode:
        tensors = [x] + [torch.empty(x.shape[0], x.shape[1], n) for n in rest]
    fx = torch.fx.Graph()
    for i, t in enumerate(tensors):
        fx.placeholder(f"x{i}").meta["val"] = t
    fx.output(None)
    graph = GraphLowering(torch.fx.GraphModule({}, fx), shape_env=env)
    return graph, x.shape[0].node.expr, x.shape[1].node.expr


class HintPerSymbolTest(TestCase):
    def test_expression_at_hint_takes_the_hint_per_symbol(self):
        graph, s0, s1 = _graph()
        with V.set_graph_handler(graph):
            sv = graph.sizevars
            self.assertEqual(sv.optimization_hint_with_override(s0, 64), 64)
            self.assertEqual(sv.optimization_hint_with_override(s0 * s1, 64), 4096)
            self.assertEqual(sv.optimization_hint_with_override(768 * s1, 64), 768 * 64)
            self.assertEqual(sv.optimization_hints_with_override([s0 * s1, 768], 256), (65536, 768))
            self.assertEqual(sv.optimization_hint_with_override(sympy.Integer(7), 64), 7)
            ks0 = sv.lookup_precomputed_size(s0 * s1)
            self.assertEqual(sv.optimization_hint_with_override(2 * ks0, 64), 8192)
            # No hint: the example sizes, as before.
            self.assertEqual(sv.optimization_hint_with_override(s0 * s1, None), 8 * 128)

    def test_sizes_at_hint_stay_within_ranges_and_guards(self):
        # A model's 512 positions bound S: at hint 4096, S stops at 512 and B takes the
        # hint.
        graph, s0, s1 = _graph()
        with V.set_graph_handler(graph):
            sv = graph.sizevars
            sv.check_leq(s1, 512)
            self.assertEqual(sv.optimization_hint_with_override(s0 * s1, 4096), 4096 * 512)
            self.assertEqual(sv.optimization_hint_with_override(s0 * s1, 64), 64 * 64)

    def test_sizes_at_hint_round_to_a_multiple_a_guard_of_alignment_asks_for(self):
        # A backward graph that guards its sequence length to a multiple of 8: at hint
        # 23, halving gives 11, 5 and 2, none of which holds, and the graph would be
        # tuned at its example sizes; the nearest multiple of 8, 24, holds.
        graph, s0, s1 = _graph()
        with V.set_graph_handler(graph):
            sv = graph.sizevars
            sv.check_equals(sympy.Mod(s1, 8), 0)
            self.assertEqual(sv.optimization_hint_with_override(s1, 23), 24)
            self.assertEqual(sv.optimization_hint_with_override(s0 * s1, 23), 24 * 24)
            self.assertEqual(sv.optimization_hint_with_override(s0 * s1, 64), 64 * 64)

    def test_sizes_at_hint_keep_the_graphs_tensors_within_32_bit_indexing(self):
        # A (B, S, 3072) tensor, which Inductor indexes in 32 bits at the example sizes
        # and guards so as its kernels are generated: at hint 4096 both symbols are
        # halved together until B*S*3072 < 2**31, from the first size asked for, and no
        # guard that arrives later moves them (a variant's grid and its benchmark tensors
        # must see one problem).
        graph, s0, s1 = _graph(768, 3072)
        with V.set_graph_handler(graph):
            sv = graph.sizevars
            sv.check_leq(s1, 512)
            self.assertEqual(sv.optimization_hint_with_override(s0 * s1, 4096), 1024 * 512)
            # A hint whose problem fits is each symbol's hint, as before.
            self.assertEqual(sv.optimization_hint_with_override(s0 * s1, 64), 64 * 64)
            sv.check_leq(s0, 16)
            self.assertEqual(sv.optimization_hint_with_override(s0, 4096), 1024)
            self.assertEqual(sv.optimization_hint_with_override(s1, 4096), 512)

    @inductor_config.patch({"multi_kernel_hints": [16, 23, 32], "force_disable_caches": True})
    def test_sizes_at_hint_hold_a_size_no_hint_reaches_at_its_example(self):
        # A causal-LM loss (transformers' ForCausalLMLoss) with every size dynamic, the
        # vocabulary too: its backward graph guards the vocabulary above 4096 and equal
        # to the logits' width, and its rows at most 4096, which no one size per symbol
        # holds. The vocabulary and the width keep their example, 8192, and the batch and
        # the sequence take the hint, where all of them fell back to the example sizes.
        def loss(logits, labels, vocab_size):
            labels = F.pad(labels, (0, 1), value=-100)[..., 1:].contiguous()
            return F.cross_entropy(
                logits.float().view(-1, vocab_size), labels.view(-1), ignore_index=-100
            )

        graphs = []
        run = GraphLowering.run

        def recorded(graph, *args, **kwargs):
            graphs.append(graph)
            return run(graph, *args, **kwargs)

        logits = torch.randn(4, 64, 8192, requires_grad=True)
        labels = torch.randint(0, 8192, (4, 64))
        with mock.patch.object(GraphLowering, "run", recorded):
            torch.compile(loss, dynamic=True)(logits, labels, 8192).backward()
        graph = graphs[-1]
        env = graph.sizevars.shape_env
        # Each size symbol by its example: the batch (4), the sequence (64), the width
        # of the logits and the vocabulary (8192 each).
        examples = getattr(env, "backed_var_to_val", None) or env.var_to_val
        at = graph.sizevars.optimization_hint_with_override
        with V.set_graph_handler(graph):
            for hint in (16, 23, 32):
                sizes = sorted((int(ex), at(s, hint)) for s, ex in examples.items())
                self.assertEqual(
                    sizes, [(4, hint), (64, hint), (8192, 8192), (8192, 8192)]
                )

    @requires_gpu()
    @inductor_config.patch(
        {
            "multi_kernel_hints": [64],
            "max_autotune": True,
            "max_autotune_gemm": True,
            "max_autotune_gemm_backends": "TRITON",
            "force_disable_caches": True,
        }
    )
    def test_gemm_with_rows_a_product_of_sizes_is_keyed_on_its_tuned_problem(self):
        w = torch.randn(768, 2304, device=GPU_TYPE, dtype=torch.bfloat16)

        def f(x):
            return x @ w

        x = torch.randn(2, 16, 768, device=GPU_TYPE, dtype=torch.bfloat16)
        torch._dynamo.mark_dynamic(x, 0)
        torch._dynamo.mark_dynamic(x, 1)
        out, (code,) = run_and_get_code(torch.compile(f), x)
        self.assertEqual(out, f(x), atol=1e-1, rtol=1e-2)
        self.assertIn("size_hint_multi_kernel(", code)
        # x (B, S, 768) at hint 64 is (64, 64, 768); the output's B*S rows are 4096, not 64.
        self.assertIn("((64, 64, 768), (768, 2304), (4096, 2304))", code)
        # A new size runs the one variant and is right.
        y = torch.randn(3, 100, 768, device=GPU_TYPE, dtype=torch.bfloat16)
        self.assertEqual(torch.compile(f)(y), f(y), atol=1e-1, rtol=1e-2)


if __name__ == "__main__":
    run_tests()
