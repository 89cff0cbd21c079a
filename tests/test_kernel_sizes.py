"""The hint-size-in-kernel finding: what a hint's GEMM kernel computes where its rows are
B*S, read from the kernel source Inductor emitted (shaped as samples/generate.py's)."""

from __future__ import annotations

from dataclasses import replace

from kinspect.core.dispatch.symbolic import SizeExpr, TensorSpec
from kinspect.core.quality.findings import derive_findings
from kinspect.core.session.model import AutotuneRow, Environment, Session, Site, Variant

KERNEL = """
@triton.jit
def triton_mm(in_ptr0, arg_A, arg_B, out_ptr0, ks0, ks1):
    M = {m}
    N = {n}
    K = 768
    if M * N == 0:
        # early exit due to zero-size input(s)
        return
"""


def _site(m: str = "ks0*ks1", n: int = 2304, hints=(64, 256, 4096)) -> Site:
    rows = SizeExpr(("mul", "s27", "s52"))
    tensors = (TensorSpec("x", "input", (rows, SizeExpr(768))),
               TensorSpec("w", "input", (SizeExpr(768), SizeExpr(n))),
               TensorSpec("out", "output", (rows, SizeExpr(n))))
    variants = tuple(Variant(i, h, tuple(t.key_at_hint(h) for t in tensors), f"k{i}",
                             source=KERNEL.format(m=m, n=n), winner="triton_mm_1",
                             autotune=(AutotuneRow("triton_mm_1", 3.168 if h == 4096 else 8.0),))
                     for i, h in enumerate(hints))
    return Site("multi_kernel_0", "graph_0", "addmm", tensors, variants)


def _found(site: Site) -> list:
    s = Session(environment=Environment("2026-12-01T00:00:00Z", torch="2.11.0", gpu="NVIDIA H200"), sites=[site])
    return [f for f in derive_findings(s) if f.kind == "hint-size-in-kernel"]


def test_at_hint_4096_the_int32_early_exit_makes_the_pick_one_among_configs_that_compute_nothing():
    (f,) = _found(_site())
    assert f.severity == "error" and f.site == "multi_kernel_0"
    assert ("at hint 4096 M * N = 16,777,216 × 2,304 wraps to 0 in int32 and `if M * N == 0` returns at once, "
            "so v2 was picked among configs that compute nothing (its autotune time, 3.2 µs, timed no GEMM)") in f.message
    assert "at hints 64, 256 (M = 4,096, 65,536 inside the kernel) tiles can land on rows past the grid's" in f.message
    assert f.message.startswith("Inductor gives this GEMM's kernel the hint for each size symbol (M = ks0*ks1)")


def test_a_product_that_does_not_wrap_to_zero_only_warns_of_the_tiles():
    (f,) = _found(_site(n=50257))  # GPT-2's lm_head: 16,777,216 x 50,257 is not 0 mod 2**32
    assert f.severity == "warning" and "compute nothing" not in f.message
    assert "at hints 64, 256 (M" in f.message and "4096 (M" not in f.message


def test_one_symbol_of_rows_is_the_grids_own_and_no_finding():
    assert _found(_site(m="ks0")) == []
    assert _found(_site(m="2048")) == []


def test_a_variant_without_source_says_nothing():
    site = _site()
    bare = replace(site, variants=tuple(replace(v, source="") for v in site.variants))
    assert _found(bare) == []


def test_sizes_are_read_as_integer_arithmetic_only():
    from kinspect.core.quality.kernel_sizes import _value

    assert _value("197*ks0", 64) == 12_608 and _value("(ks0 + 1)*ks1", 4) == 20
    assert _value("__import__('os').system('x')", 64) is None and _value("ks0**ks1", 64) is None
