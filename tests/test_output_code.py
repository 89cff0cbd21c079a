"""Inductor's output code read as text, against what the H200 recordings saw while the
code was compiled and run: every sample's wrapper code (samples/*.session.json, the
real CUDA code) read back gives the sites the recording captured from Inductor's own
objects, and each of their dispatches picks the variant Inductor ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from kinspect.core.dispatch.symbolic import SizeExpr
from kinspect.core.inductor_code.gemms import EXTERN, MULTI_KERNEL, TEMPLATE, GemmCall, gemm_calls, why_no_multi_kernel
from kinspect.core.inductor_code.kernels import kernel_sources
from kinspect.core.inductor_code.multi_kernels import multi_kernels
from kinspect.core.inductor_code.sizes import WrapperSizes
from kinspect.core.store import load
from kinspect.core.trace.graphs import read_graph

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
RECORDED = sorted(SAMPLES.glob("*.session.json"))


def read_back(path: Path):
    recorded = load(path)
    sites = {}
    for i, g in enumerate(recorded.graphs):
        sites.update({s.name: s for s in read_graph(g.wrapper_code, i, "0/0", None, []).sites})
    return recorded, sites


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_a_recorded_sample_s_sites_are_read_back_from_its_wrapper_code(path):
    recorded, sites = read_back(path)
    assert sorted(sites) == sorted(s.name for s in recorded.sites)
    for site in recorded.sites:
        got = sites[site.name]
        assert got.keys == site.keys
        assert got.op == site.op
        assert [(v.hint, v.kernel_name, v.source_hash) for v in got.variants] == \
            [(v.hint, v.kernel_name, v.source_hash) for v in site.variants]
        for mine, theirs in zip(got.variants, site.variants):  # the launcher's registers are not in the code
            assert mine.config and all(theirs.config[k] == x for k, x in mine.config.items())
        specs = site.runtime_tensors if site.runtime_tensors is not None else site.tensors
        assert [t.text() for t in got.tensors] == [t.text() for t in specs]
        assert [(c.line, c.call) for c in got.call_sites] == [(c.line, c.call) for c in site.call_sites]


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_every_recorded_dispatch_picks_what_the_code_read_back_decides(path):
    recorded, sites = read_back(path)
    assert recorded.events
    for e in recorded.events:
        site = sites[e.site]
        assert site.decide(e.key).chosen == e.picked, (e.site, e.key)
        sizes = site.symbol_values(e.key)
        if site.symbols <= sizes.keys():  # the sizes the user types give back the key
            assert site.runtime_key(sizes) == e.key


def test_a_cut_short_wrapper_keeps_what_came_before_the_cut():
    code = load(SAMPLES / "generate.session.json").graphs[0].wrapper_code
    whole, _ = multi_kernels(code)
    cut = code[:code.index(f"{whole[2].name} = async_compile") + 80]
    found, bad = multi_kernels(cut)
    assert [m.name for m in found] == [m.name for m in whole[:2]] and bad == 1
    in_kernel = code[:code.index("@triton.jit", code.index("triton_tem_fused_addmm_transpose_view_7 = "))]
    assert "triton_tem_fused_addmm_transpose_view_6" in kernel_sources(in_kernel)
    assert "triton_tem_fused_addmm_transpose_view_7" not in kernel_sources(in_kernel)


def test_the_wrapper_s_sizes_follow_views_reuse_and_precomputed_sizes():
    code = "\n".join([
        "def call(args):",
        "    arg0_1, arg1_1 = args",
        "    s0 = arg0_1",
        "    ps0 = 3*s0",
        "    assert_size_stride(arg1_1, (s0, 64), (64, 1))",
        "    buf0 = empty_strided_cuda((ps0, 128), (128, 1), torch.bfloat16)",
        "    buf1 = reinterpret_tensor(buf0, (s0, 3, 128), (384, 128, 1), 0)",
        "    buf2 = buf1; del buf1  # reuse",
        "    multi_kernel_0.run(arg1_1, buf2, s0)",
        "def other(args):",
        "    buf2 = empty_strided_cuda((7, ), (1, ), torch.bfloat16)",
    ])
    sizes = WrapperSizes(code)
    assert sizes.sizes("arg1_1", 9) == ("s0", "64")
    assert sizes.sizes("buf0", 9) == ("(3*s0)", "128")
    assert sizes.sizes("buf2", 9) == ("s0", "3", "128")
    assert sizes.sizes("buf2", 5) is None  # not yet made at that line
    assert sizes.sizes("buf2", 12) is None  # another function's
    assert SizeExpr.from_text(sizes.sizes("buf0", 9)[0]).evaluate({"s0": 5}) == 15


@pytest.mark.parametrize("text, value", [
    ("s27*s52", 12), ("72*((63 + s27*s52) // 64)", 72), ("(-1) + s27", 2), ("s27 - 1", 2), ("Max(1, s52 - 5)", 1),
    ("s27**2 % 5", 4),
])
def test_a_size_is_read_as_inductor_printed_it(text, value):
    assert SizeExpr.from_text(text).evaluate({"s27": 3, "s52": 4}) == value


@pytest.mark.parametrize("text", ["__import__('os').system('touch /tmp/kinspect-pwned')", "s0 if s0 else 1",
                                  "[s0][0]", "s0.bit_length()", "1" * 5000, "9" * 30, "(" * 500 + "s0" + ")" * 500])
def test_text_that_is_no_size_stays_text_and_nothing_runs(text):
    e = SizeExpr.from_text(text)
    assert e.tree[0] == "opaque" if isinstance(e.tree, tuple) else False
    assert not Path("/tmp/kinspect-pwned").exists()


def test_a_gemm_outside_any_multi_kernel_is_found_with_its_reason():
    code = load(SAMPLES / "generate.session.json").graphs[0].wrapper_code
    calls = gemm_calls(code, [m.name for m in multi_kernels(code)[0]], WrapperSizes(code))
    assert {c.how for c in calls} == {MULTI_KERNEL} and len(calls) == 9  # 4 sites of 2 layers, and lm_head
    assert [c.op for c in calls].count("addmm") == 8 and calls[-1].op == "mm"
    extern = GemmCall(1, EXTERN, "mm", ("buf0", "arg1_1", "buf1"), True)
    autotuned = {"max_autotune": True, "max_autotune_gemm_backends": "ATEN,TRITON"}
    assert why_no_multi_kernel(extern, {}, []) == "no multi_kernel_hints were set"
    assert why_no_multi_kernel(extern, {"max_autotune": False, "max_autotune_gemm": False}, [64]).startswith(
        "not autotuned: max-autotune is off")
    assert why_no_multi_kernel(extern, autotuned, [64]).startswith("an extern kernel: cuBLAS beat every Triton template")
    assert "ATEN" in why_no_multi_kernel(extern, {"max_autotune": True, "max_autotune_gemm_backends": "ATEN"}, [64])
    assert why_no_multi_kernel(extern, {"max_autotune": True, "max_autotune_gemm_backends": "TRITON"}, [64]).startswith(
        "an extern kernel: no Triton template applied to it")
    static = GemmCall(1, TEMPLATE, "mm", ("arg0_1", "buf0"), False)
    assert why_no_multi_kernel(static, autotuned, [64]).startswith("not a dynamic size")
    dynamic = GemmCall(1, TEMPLATE, "mm", ("arg0_1", "buf0", "s0"), True)
    assert why_no_multi_kernel(dynamic, autotuned, [64]).startswith("a Triton template autotuned once, not per hint")
