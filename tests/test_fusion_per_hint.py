"""`--fusion-per-hint` drives Inductor's own `Scheduler.speedup_by_fusion`, `MultiTemplateBuffer`
and its `choice_timings` / `swap_as_triton_caller`, with stand-in choices whose fused time
grows with their hint's problem: with the mode each hint's variant gets its own fastest
choice, as docs/upstream/fusion-per-hint.patch has Inductor pick; stock Inductor hands the
later hints hint 64's."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import types
from unittest import mock

import pytest

torch = pytest.importorskip("torch")

from torch._inductor import config as inductor_config  # noqa: E402
from torch._inductor import ir  # noqa: E402
from torch._inductor.scheduler import Scheduler  # noqa: E402
from torch._inductor.select_algorithm import TritonTemplateCaller  # noqa: E402
from torch._inductor.virtualized import V  # noqa: E402
from torch.utils._ordered_set import OrderedSet  # noqa: E402

from kinspect.core.errors import KinspectError  # noqa: E402
from kinspect.inductor.hooks.fixes import fusion_per_hint  # noqa: E402
from kinspect.inductor.hooks.fixes.fusion_per_hint import FOREIGN  # noqa: E402

HINTS = [64, 256, 4096]


class _LoopOver(Exception):
    """Raised where `speedup_by_fusion` reads the multi-template's choices: its hint loop is over."""


class _Choices:
    def __iter__(self):
        raise _LoopOver


def _time_of(name: str, hint: int) -> float:
    """The fused time of a choice on its own hint's problem: `c1` is faster at every hint."""
    return hint * (1.0 if name.startswith("c1") else 1.5)


class Fusion:
    """A real `MultiTemplateBuffer` of two Triton choices per hint and a scheduler whose
    compile and benchmark back ends stand in for the GPU's."""

    def __init__(self, failing: tuple[int, ...] = ()) -> None:
        graph = types.SimpleNamespace(register_buffer=lambda b, **k: "buf0", register_operation=lambda o: "op0")
        with V.set_graph_handler(graph):
            self.layout = ir.FixedLayout(torch.device("cpu"), torch.float32, [64, 64])
            self.multi = ir.MultiTemplateBuffer(layout=self.layout, inputs=[], choice_timings_fn=self._autotune,
                                                unfiltered_choices=[], allowed_prologue_inps=OrderedSet())
        self.multi._choices = _Choices()
        self.choices = {h: [self._caller(f"c{k}_at_{h}", h) for k in (0, 1)] for h in HINTS}
        self.failing = failing
        """Hints whose own choices fail to compile fused."""
        self.benchmarked: list[str] = []
        self.scheduler = object.__new__(Scheduler)
        self.scheduler._any_atomic_add = lambda nodes: False
        self.scheduler._has_layout_conflict_for_template = lambda node: False
        self.scheduler.compile_kernel = self._compile
        self.scheduler.get_backend = lambda device: types.SimpleNamespace(benchmark_codegened_module=self._benchmark)

    def _caller(self, name: str, hint: int) -> TritonTemplateCaller:
        c = object.__new__(TritonTemplateCaller)
        c.name, c.hint_override, c.layout = name, hint, self.layout
        c.make_kernel_render = c
        return c

    def _autotune(self, hint: int | None) -> dict[TritonTemplateCaller, float]:
        return {c: _time_of(c.name, hint) for c in self.choices[hint]}

    def _compile(self, nodes: object, hint_override: int | None = None) -> tuple[object, object]:
        choice = self.multi.make_kernel_render  # what `swap_as_triton_caller` swapped in
        future = None
        if choice.hint_override in self.failing:
            future = mock.Mock(result=mock.Mock(side_effect=RuntimeError("compile failed")))
        return future, types.SimpleNamespace(choice=choice)

    def _benchmark(self, module: types.SimpleNamespace) -> tuple[float, str]:
        self.benchmarked.append(module.choice.name)
        return _time_of(module.choice.name, module.choice.hint_override), ""

    def run(self) -> dict[int, str]:
        """Inductor's fusion benchmark of the template with an epilogue; each hint's pick."""
        template, epilogue = _node(self.multi), _node(None)
        with inductor_config.patch(multi_kernel_hints=HINTS, benchmark_epilogue_fusion=True), _without_triton():
            with pytest.raises(_LoopOver):
                Scheduler.speedup_by_fusion(self.scheduler, template, epilogue)
        return {h: min(self.multi._choice_timings[h], key=self.multi._choice_timings[h].get).name for h in HINTS}


def _node(template: object) -> types.SimpleNamespace:
    n = types.SimpleNamespace(node=None)
    n.is_template = lambda: template is not None
    n.get_template_node = lambda: template
    n.is_foreach = lambda: False
    n.get_nodes = lambda: [n]
    n.get_device = lambda: torch.device("cuda")
    n.get_name = lambda: "buf0"
    n.get_buffer_names = lambda: {"buf0"}
    return n


def _without_triton() -> contextlib.AbstractContextManager[object]:
    """`speedup_by_fusion` imports triton's CompilationError; without triton a stand-in module
    (nothing here compiles a kernel)."""
    if importlib.util.find_spec("triton") is not None:
        return contextlib.nullcontext()
    errors = types.ModuleType("triton.compiler.errors")
    errors.CompilationError = type("CompilationError", (Exception,), {})
    compiler = types.ModuleType("triton.compiler")
    compiler.errors = errors
    triton = types.ModuleType("triton")
    triton.compiler = compiler
    return mock.patch.dict(sys.modules, {"triton": triton, "triton.compiler": compiler,
                                         "triton.compiler.errors": errors})


def test_stock_inductor_gives_every_later_hint_hint_64s_choice():
    fusion = Fusion()
    assert fusion.run() == {64: "c1_at_64", 256: "c1_at_64", 4096: "c1_at_64"}
    assert len(fusion.benchmarked) == 12  # the earlier hints' choices benchmarked again at each later one


def test_with_the_mode_each_hint_picks_its_own_fastest_and_keeps_only_its_own_timings():
    fusion = Fusion()
    with fusion_per_hint.fusion_per_hint():
        picked = fusion.run()
    assert picked == {64: "c1_at_64", 256: "c1_at_256", 4096: "c1_at_4096"}
    for hint in HINTS:
        assert sorted(c.name for c in fusion.multi._choice_timings[hint]) == [f"c0_at_{hint}", f"c1_at_{hint}"]
    assert sorted(fusion.benchmarked) == sorted(f"c{k}_at_{h}" for h in HINTS for k in (0, 1))


def test_where_none_of_a_hints_own_choices_compiles_it_falls_back_to_an_earlier_ones_as_stock_does():
    """The patch would leave hint 256 with no choice (an assertion in Inductor); the mode
    picks among the others, as stock Inductor would have, and keeps them in its timings."""
    fusion = Fusion(failing=(256,))
    with fusion_per_hint.fusion_per_hint():
        picked = fusion.run()
    assert picked[64] == "c1_at_64" and picked[4096] == "c1_at_4096"
    assert picked[256].endswith("_at_64")
    assert set(fusion.multi._choice_timings[256].values()) == {FOREIGN}


def test_after_the_mode_ends_inductor_runs_as_stock_again():
    with fusion_per_hint.fusion_per_hint():
        pass
    assert not fusion_per_hint.MODE.active
    assert Fusion().run()[4096] == "c1_at_64"


def test_a_torch_without_the_fusion_benchmark_is_refused_in_one_line(monkeypatch):
    monkeypatch.delattr(Scheduler, "speedup_by_fusion")
    with pytest.raises(KinspectError, match=r"^--fusion-per-hint needs what this torch lacks: "
                                            r"Scheduler.speedup_by_fusion$"):
        with fusion_per_hint.fusion_per_hint():
            pass


@pytest.mark.parametrize("mode", ["stock", "fusion-per-hint"])
def test_the_capture_keeps_the_fusion_benchmarks_times_where_a_hint_was_finalized_on_them(mode):
    """kinspect's capture tells a hint finalized on the fusion benchmark from one finalized on
    its autotune table by the timings dict Inductor keeps for it (the benchmark replaces it),
    and keeps the fused times, fastest first: stock, hint 4096's include hint 64's choices,
    timed on their own smaller problem; with the mode, only its own."""
    from kinspect.inductor.hooks import capture

    fusion = Fusion()
    graph = types.SimpleNamespace()
    cap = capture.CompileCapture()
    switch = fusion_per_hint.fusion_per_hint() if mode != "stock" else contextlib.nullcontext()
    with cap, V.set_graph_handler(graph), switch:
        rec = cap._graph_for(graph)
        for hint in HINTS:
            fusion.multi.choice_timings(hint)  # the autotuning, which the capture sees first
        unfused = {h: fusion.multi._choice_timings[h] for h in HINTS}
        picked = fusion.run()
        callers = {h: next(c for c in fusion.multi._choice_timings[h] if c.name == picked[h]) for h in HINTS}
        fusion.multi.finalize_as_triton_callers({**callers, None: callers[64]})
        untouched = fusion.multi._choice_timings[64] = unfused[64]  # as if hint 64 had been finalized unfused
        assert untouched is rec.tables[("buf0", 64)]
        fusion.multi.finalize_as_triton_callers({64: callers[64], None: callers[64]})
    assert ("buf0", 64) not in rec.fused
    if mode == "stock":
        assert rec.fused[("buf0", 4096)][0] == ("c1_at_64", 64.0)
        assert {name for name, _ in rec.fused[("buf0", 4096)]} == {"c0_at_64", "c1_at_64", "c0_at_256", "c1_at_256",
                                                                   "c0_at_4096", "c1_at_4096"}
    else:
        assert rec.fused[("buf0", 4096)] == [("c1_at_4096", 4096.0), ("c0_at_4096", 6144.0)]
    assert rec.emitted[("buf0", 4096)][0] == picked[4096]


def test_a_hint_that_fell_back_keeps_no_fused_times():
    """Under the mode, a hint none of whose own choices compiled fused was benchmarked on
    nothing: its fallback's time is the mode's stand-in, not a time, so none is kept."""
    from kinspect.inductor.hooks.capture import _fused_times

    fusion = Fusion(failing=(256,))
    with fusion_per_hint.fusion_per_hint():
        fusion.run()
    assert _fused_times(fusion.multi._choice_timings[256]) == []
    assert [name for name, _ in _fused_times(fusion.multi._choice_timings[4096])] == ["c1_at_4096", "c0_at_4096"]


def test_the_fused_benchmarks_grid_is_sized_at_the_kernels_hint_not_at_the_example():
    """Inductor's own `TritonTemplateKernel.kernel_benchmark_extra_args`, on a real
    `SizeVarAllocator` whose B and S were 8 and 16 at the example: stock, a hint-4096 kernel's
    benchmark harness launches the example's 128 rows of tiles over tensors sized for the
    hint; with the mode, the hint's rows, as its tensors."""
    from template_grid import grid

    stock, fixed, again = grid(), grid(fusion_per_hint.fusion_per_hint), grid()
    assert stock == again == [str(2 * 24), "1", "1"]  # 128 rows: 2 tiles of 64 by 24
    assert fixed == [str(64 * 24), "1", "1"]  # 4,096 rows
