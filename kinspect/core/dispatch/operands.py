"""What a user calls each tensor of a site's key, where Inductor says `arg3_1` and `buf0`.

Inductor's GEMM templates take their inputs in a fixed order per op (`tuned_addmm` passes
the bias first, then the two matrices), so the op and a tensor's place among the
template's inputs name its part in the product. Tensors of any other op, or a template
whose inputs do not number what the op takes, keep Inductor's names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kinspect.core.dispatch.symbolic import TensorSpec

OPERANDS: dict[str, tuple[str, ...]] = {
    "addmm": ("bias", "x", "weight"),
    "mm": ("a", "b"),
    "bmm": ("a", "b"),
    "baddbmm": ("bias", "a", "b"),  # tuned_baddbmm's input_nodes=(inp, mat1, mat2)
}
"""Each op's template inputs in Inductor's order; its output is `out`."""

GEMM_RANK: dict[str, int] = {"addmm": 2, "mm": 2, "bmm": 3, "baddbmm": 3}
"""The dims of each op's matrices: a tensor of more is a view its kernel flattens into them
(mm's `a` of `(B, S, 384)` is `(B*S, 384)` rows and columns to the kernel)."""

GEMM_OPS = ("baddbmm", "matmul", "linear", "addmm", "bmm", "mm")
"""The GEMMs a size-hint template can come from, longest first: `addmm`, `bmm` and `mm`
are all inside `baddbmm`, so a name is the first of these it contains."""


def gemm_op(name: str) -> str | None:
    """The GEMM an FX target's name (`aten.baddbmm.default`) calls, if any."""
    return next((op for op in GEMM_OPS if op in name), None)


def operand_names(op: str, tensors: Sequence[TensorSpec]) -> list[str]:
    """One name per tensor: its part in `op` (`x`, `weight`, `out`), else Inductor's."""
    inputs = [t for t in tensors if t.role == "input"]
    parts = OPERANDS.get(op)
    outputs = [t for t in tensors if t.role == "output"]
    if parts is None or len(inputs) != len(parts) or len(outputs) != 1 or len(inputs) + 1 != len(tensors):
        return [t.name for t in tensors]
    named = iter(parts)
    return ["out" if t.role == "output" else next(named) for t in tensors]


def tensor_texts(op: str, tensors: Sequence[TensorSpec], aliases: Mapping[str, str] | None) -> list[str]:
    """`x (B, 1024)` per tensor, by the user's names for the tensor and its sizes; with
    `aliases` None, as Inductor wrote them (`arg3_1 (s33, 1024)`)."""
    if aliases is None:
        return [f"{t.name} {t.text()}" for t in tensors]
    return [f"{n} {t.text_with(aliases)}" for n, t in zip(operand_names(op, tensors), tensors)]
