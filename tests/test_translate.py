"""Capture records to session sites: repeated layers sharing one multi-kernel become one
site with a call site per wrapper line, each named by the user's module."""

from __future__ import annotations

import pytest

sympy = pytest.importorskip("sympy")
pytest.importorskip("torch")

from kinspect.inductor.hooks.capture import GraphRecord, SiteRecord  # noqa: E402
from kinspect.inductor.hooks.origins import Origin  # noqa: E402
from kinspect.core.inductor_code.calls import call_lines  # noqa: E402
from kinspect.inductor.recording.translate import site_name, sites  # noqa: E402

B = sympy.Symbol("s0")
HINTS = (64, 256)
WRAPPER = """\
def call(self, args):
    buf3 = empty_strided_cuda((s0, 2304), (2304, 1), torch.bfloat16)
    multi_kernel_0.run(arg7_1, arg5_1, arg6_1, buf3, s0, stream=stream0)
    buf9 = empty_strided_cuda((s0, 768), (768, 1), torch.bfloat16)
    multi_kernel_1.run(arg9_1, buf8, arg8_1, buf9, s0, stream=stream0)
    buf25 = empty_strided_cuda((s0, 2304), (2304, 1), torch.bfloat16)
    multi_kernel_0.run(arg19_1, buf24, arg18_1, buf25, s0, stream=stream0)
"""


def record(name: str, node: str, module: str, line: int, n: int = 2304) -> SiteRecord:
    keys = [((n,), (h, 768), (n, 768), (h, n)) for h in HINTS]
    return SiteRecord(
        name=name, node=node, op="addmm",
        tensors=[("bias", "input", (n,)), ("x", "input", (B, 768)), ("w", "input", (n, 768)), ("out", "output", (B, n))],
        hint_keys=dict(zip(HINTS, keys)), kernel_names=[f"k{name[-1]}_{i}" for i in range(2)], keys=keys,
        origin=Origin(module, "Conv1D", "/x/modeling_gpt2.py", line, "self.c_attn(hidden_states)"),
    )


def graph(index: int = 0) -> GraphRecord:
    g = GraphRecord(index, "inference", None)
    # Codegen order: layer 0's c_attn, its c_proj, then layer 1's c_attn.
    g.sites = [record("multi_kernel_0", "buf3", "h.0.attn.c_attn", 312),
               record("multi_kernel_1", "buf9", "h.0.attn.c_proj", 340, n=768),
               record("multi_kernel_0", "buf25", "h.1.attn.c_attn", 312)]
    return g


def test_layers_that_share_a_multi_kernel_are_one_site_with_a_call_site_each():
    out = sites(graph(), WRAPPER, lambda name: [])
    assert [s.name for s in out] == ["multi_kernel_0", "multi_kernel_1"]
    attn = out[0]
    assert [c.label for c in attn.call_sites] == ["h.0.attn.c_attn", "h.1.attn.c_attn"]
    assert [c.line for c in attn.call_sites] == [3, 7]
    assert "buf25" in attn.call_sites[1].call and attn.call_sites[1].node == "buf25"
    assert attn.call_sites[0].where == "modeling_gpt2.py:312"
    assert attn.title == "h.0.attn.c_attn +1"
    assert out[1].title == "h.0.attn.c_proj"


def test_call_lines_are_matched_in_order_when_no_buffer_names_them():
    g = graph()
    for rec in g.sites:
        rec.node = "?"
    attn = sites(g, WRAPPER, lambda name: [])[0]
    assert [c.line for c in attn.call_sites] == [3, 7]
    assert attn.call_sites[0].node is None


def test_graph_names_and_call_lines():
    assert site_name(0, "multi_kernel_0") == "multi_kernel_0"
    assert site_name(2, "multi_kernel_0") == "multi_kernel_0@graph_2"
    assert [n for n, _ in call_lines(WRAPPER, "multi_kernel_0")] == [3, 7]
    assert call_lines(None, "multi_kernel_0") == []
    later = sites(graph(1), WRAPPER, lambda name: [])
    assert [s.name for s in later] == ["multi_kernel_0@graph_1", "multi_kernel_1@graph_1"]
