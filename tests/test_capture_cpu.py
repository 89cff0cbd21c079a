"""The compile-time hooks on a real Inductor compile, on the CPU.

Inductor's size-hint multi-kernel is Triton-only, so a CPU compile has no site; but it runs
the same GraphLowering.compile_to_module the hooks wrap, which proves they install, record
the graph (wrapper file, symbols, dynamic inputs) and explain why it has no site, and that
overlapping captures on two threads each keep their own graphs.
"""

from __future__ import annotations

import threading

import pytest

torch = pytest.importorskip("torch")

from kinspect.inductor.hooks.capture import CompileCapture  # noqa: E402
from kinspect.inductor.recording.translate import no_site_reason  # noqa: E402


def _compile_once(scale: float):
    """A graph of views and a scalar constant: Inductor lowers it through compile_to_module
    as any graph, but it has no kernel to build, so no C++ compiler runs (seconds each)."""
    def fn(x):
        return x[1:].t(), scale

    x = torch.randn(37, 8)
    torch._dynamo.mark_dynamic(x, 0)
    compiled = torch.compile(fn)
    # A hit in Inductor's on-disk caches skips compile_to_module, as kinspect's pipeline
    # knows (it turns them off); so must this test, or a second run would see no graph.
    with torch._inductor.config.patch(force_disable_caches=True):
        compiled(x)


def test_a_cpu_compile_is_captured_with_its_wrapper_and_symbols():
    torch._dynamo.reset()
    with CompileCapture() as cap:
        _compile_once(2.0)
    assert len(cap.graphs) == 1
    g = cap.graphs[0]
    assert g.wrapper_path and g.wrapper_path.endswith(".py")
    assert g.dynamic_inputs and any(src for src in g.symbols.values())
    assert g.templates == 0 and not g.sites
    assert "no GEMM" in no_site_reason(g, [64, 256, 4096])


def test_outside_a_capture_compiles_are_not_recorded():
    torch._dynamo.reset()
    with CompileCapture() as cap:
        pass
    _compile_once(3.0)
    assert cap.graphs == []


def test_overlapping_captures_on_two_threads_keep_their_own_graphs():
    torch._dynamo.reset()
    entered, release = threading.Event(), threading.Event()
    other = CompileCapture()

    def held_open() -> None:
        with other:
            entered.set()
            release.wait(10)

    t = threading.Thread(target=held_open)
    t.start()
    entered.wait(10)
    with CompileCapture() as mine:
        release.set()
        t.join(10)  # the other capture ends while mine is active
        _compile_once(4.0)
    assert len(mine.graphs) == 1 and other.graphs == []


def test_a_second_compile_of_the_same_module_class_is_captured_again():
    """Two pipelines in one process (each with its own nn.Linear) both see their graph:
    compiled through `fresh_entry`, the second compile does not reuse the first's."""
    from kinspect.inductor.recording.pipeline import fresh_entry

    torch._dynamo.reset()
    seen = []
    for _ in range(2):
        model = torch.nn.Linear(8, 4, bias=False)  # an extern mm alone: no C++ kernel to compile
        x = torch.randn(37, 8)
        torch._dynamo.mark_dynamic(x, 0)
        with CompileCapture() as cap, torch._inductor.config.patch(force_disable_caches=True):
            torch.compile(fresh_entry(model))(x)
        seen.append(len(cap.graphs))
    assert seen[0] > 0 and seen[1] == seen[0], seen


@pytest.mark.parametrize("op", ["baddbmm", "addmm", "bmm", "mm"])
def test_a_template_known_by_its_fx_origins_is_named_by_its_own_gemm(op):
    """Without an origin node, the op comes from the FX nodes the template was lowered from
    (a fused epilogue adds others): `baddbmm` holds `addmm`, `bmm` and `mm` in its name."""
    from types import SimpleNamespace

    from kinspect.inductor.hooks.capture import _op_of

    fx = [SimpleNamespace(target=getattr(torch.ops.aten, name).default) for name in (op, "add", "relu")]
    assert _op_of(SimpleNamespace(origin_node=None, origins=fx)) == op


def test_a_graph_whose_compile_raised_says_so_not_that_its_templates_are_static():
    """samples/generate.py's compile died autotuning: the no-site line blamed static templates."""
    from kinspect.inductor.hooks.capture import GraphRecord

    g = GraphRecord(0, "inference", None, dynamic_inputs=True, templates=8)
    g.finalized.add("buf25")
    assert no_site_reason(g, [64, 256, 4096]).startswith("Inductor raised before it wrote this graph's code")


def test_hints_that_share_one_key_share_one_variant_the_last_hints_kernel():
    """Under --one-size-per-symbol a hint lowered to a smaller hint's sizes (4096 to 256's,
    where 4096 for each symbol would not fit) keys as that hint does. Inductor's template
    codegen fills a dict by key, so the later hint's kernel takes the earlier's place, and
    its own `SizeHintMultiKernel` has one variant fewer than the hints. The site still names
    its template's op and tensors, and the shared variant is hint 4096's."""
    from types import SimpleNamespace

    import sympy
    from torch._inductor.codegen.multi_kernel import SizeHintMultiKernel
    from torch._inductor.virtualized import V

    from kinspect.inductor.hooks.capture import GraphRecord
    from kinspect.inductor.recording.translate import sites

    k64 = ((64, 64, 512), (512, 512), (4096, 512))
    k256 = ((256, 256, 512), (512, 512), (65536, 512))
    hint_keys = {64: k64, 256: k256, 4096: k256}
    kernels = {}  # as SIMDScheduling.codegen_template fills it, hint by hint
    for hint, key in hint_keys.items():
        kernels[key] = SimpleNamespace(kernel_name=f"triton_tem_fused_mm_{hint}")
    graph = SimpleNamespace(wrapper_code=SimpleNamespace(
        multi_kernel_state=SimpleNamespace(define_kernel=lambda kernels, keys: "multi_kernel_0")))
    with V.set_graph_handler(graph):
        mk = SizeHintMultiKernel(kernels)
    b, s = sympy.Symbol("s52"), sympy.Symbol("s27")
    g = GraphRecord(0, "inference", None)
    g.pending["buf3"] = {"hint_keys": hint_keys, "op": "mm", "tensors": [
        ("arg0", "input", (b, s, 512)), ("arg1", "input", (512, 512)), ("buf3", "output", (b * s, 512))]}
    CompileCapture()._site(g, mk)
    (site,) = sites(g, None, lambda name: [])
    assert (site.op, [t.name for t in site.tensors]) == ("mm", ["arg0", "arg1", "buf3"])
    assert [(v.hint, v.kernel_name) for v in site.variants] == [
        (64, "triton_tem_fused_mm_64"), (4096, "triton_tem_fused_mm_4096")]
