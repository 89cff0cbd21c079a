# Owner(s): ["module: inductor"]
"""With `multi_kernel_hints`, the epilogue-fusion benchmark picks each hint's fused choice
among that hint's own choices (fusion-per-hint.patch). Stock Inductor keeps one list of
compiled choices across the hints, so at each later hint the earlier hints' choices, each
benchmarked at its own (smaller) hint's sizes, are compared too and win. In PyTorch's tree
this sits beside test/inductor/test_multi_kernel.py; run it here with
`python test_fusion_per_hint.py`."""

import contextlib
import importlib.util
import sys
import types
import unittest.mock

import torch
import torch._inductor.config as inductor_config
from torch._inductor import ir
from torch._inductor.scheduler import Scheduler
from torch._inductor.select_algorithm import TritonTemplateCaller
from torch._inductor.test_case import run_tests, TestCase
from torch._inductor.utils import run_and_get_code
from torch.testing._internal.inductor_utils import GPU_TYPE, requires_gpu

HINTS = [64, 256, 4096]


def _caller(name, hint):
    c = object.__new__(TritonTemplateCaller)
    c.name, c.hint_override = name, hint
    return c


class _ChoicesRead(Exception):
    """Raised where `speedup_by_fusion` reads `multi_node.choices`: its per-hint loop is over."""


class _Multi(ir.MultiTemplateBuffer):
    """A multi-template of two choices per hint whose times grow with the hint's problem;
    at every hint the second one is the faster."""

    def __init__(self):
        self.choices_at = {h: [_caller(f"c{k}_at_{h}", h) for k in (0, 1)] for h in HINTS}
        self._choice_timings = {}
        self.current = None

    @staticmethod
    def time_of(choice):
        return choice.hint_override * (1.0 if choice.name.startswith("c1") else 1.5)

    def choice_timings(self, hint_override=None):
        if hint_override not in self._choice_timings:
            self._choice_timings[hint_override] = {
                c: self.time_of(c) for c in self.choices_at[hint_override]
            }
        return self._choice_timings[hint_override]

    @contextlib.contextmanager
    def swap_as_triton_caller(self, choice):
        previous, self.current = self.current, choice
        try:
            yield
        finally:
            self.current = previous

    @property
    def choices(self):
        raise _ChoicesRead


def _node(template):
    n = types.SimpleNamespace(node=None)
    n.is_template = lambda: template is not None
    n.get_template_node = lambda: template
    n.is_foreach = lambda: False
    n.get_nodes = lambda: [n]
    n.get_device = lambda: torch.device(GPU_TYPE or "cuda")
    n.get_name = lambda: "buf0"
    n.get_buffer_names = lambda: {"buf0"}
    return n


def _without_triton():
    """`speedup_by_fusion` imports triton's CompilationError; a build without triton gets a
    stand-in module for it (nothing here compiles a kernel)."""
    if importlib.util.find_spec("triton") is not None:
        return contextlib.nullcontext()
    errors = types.ModuleType("triton.compiler.errors")
    errors.CompilationError = type("CompilationError", (Exception,), {})
    compiler = types.ModuleType("triton.compiler")
    compiler.errors = errors
    triton = types.ModuleType("triton")
    triton.compiler = compiler
    return unittest.mock.patch.dict(
        sys.modules,
        {"triton": triton, "triton.compiler": compiler, "triton.compiler.errors": errors},
    )


class FusionPerHintTest(TestCase):
    def test_each_hint_picks_its_fused_choice_among_its_own_choices(self):
        multi = _Multi()
        benchmarked = []
        scheduler = object.__new__(Scheduler)
        scheduler._any_atomic_add = lambda nodes: False
        scheduler._has_layout_conflict_for_template = lambda node: False
        scheduler.compile_kernel = lambda nodes, hint_override=None: (
            None,
            types.SimpleNamespace(choice=multi.current),
        )

        def benchmark(module, device):
            benchmarked.append(module.choice.name)
            return multi.time_of(module.choice), None

        scheduler.benchmark_codegened_module = benchmark
        with inductor_config.patch(
            multi_kernel_hints=HINTS, benchmark_epilogue_fusion=True
        ), _without_triton():
            with self.assertRaises(_ChoicesRead):
                Scheduler.speedup_by_fusion(scheduler, _node(multi), _node(None))

        picked = {}
        for hint in HINTS:
            timings = multi._choice_timings[hint]
            picked[hint] = min(timings, key=timings.get).name
        self.assertEqual(picked, {h: f"c1_at_{h}" for h in HINTS})
        for hint in HINTS:
            self.assertEqual(
                sorted(c.name for c in multi._choice_timings[hint]),
                [f"c0_at_{hint}", f"c1_at_{hint}"],
            )
        self.assertEqual(len(benchmarked), 2 * len(HINTS))

    @requires_gpu()
    @inductor_config.patch(
        max_autotune=True,
        max_autotune_gemm_backends="TRITON",
        multi_kernel_hints=[64, 4096],
    )
    def test_addmm_relu_variants_run_choices_tuned_at_their_hints(self):
        finalized = []
        finalize = ir.MultiTemplateBuffer.finalize_as_triton_callers

        def record(self, callers):
            finalized.append(
                {h: getattr(c, "hint_override", None) for h, c in callers.items()}
            )
            return finalize(self, callers)

        def f(x, w, b):
            return torch.relu(torch.addmm(b, x, w))

        x = torch.randn(32, 512, device=GPU_TYPE, dtype=torch.bfloat16)
        w = torch.randn(512, 1024, device=GPU_TYPE, dtype=torch.bfloat16)
        b = torch.randn(1024, device=GPU_TYPE, dtype=torch.bfloat16)
        torch._dynamo.mark_dynamic(x, 0)
        with unittest.mock.patch.object(
            ir.MultiTemplateBuffer, "finalize_as_triton_callers", record
        ):
            run_and_get_code(torch.compile(f, dynamic=True), x, w, b)
        self.assertTrue(finalized)
        for callers in finalized:
            for hint in (64, 4096):
                self.assertEqual(callers[hint], hint)


if __name__ == "__main__":
    run_tests()
