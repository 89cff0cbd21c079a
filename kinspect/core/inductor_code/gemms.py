"""Every GEMM a wrapper runs, and how: through a size-hint multi-kernel, as an extern kernel
(cuBLAS: `extern_kernels.mm(...)`, or ATen's own op), or as one Triton template kernel
run directly. What a user asks first ("did my hints take effect?") is which GEMMs got
no multi-kernel, and this is where the code says it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from kinspect.core.inductor_code.kernels import kernel_spans
from kinspect.core.inductor_code.sizes import WrapperSizes

GEMM_OPS = ("baddbmm", "addmm", "bmm", "mm")
"""The GEMMs Inductor renders as Triton templates (and so as size-hint multi-kernels)."""

MULTI_KERNEL = "multi-kernel"
EXTERN = "extern"
TEMPLATE = "template"

_EXTERN = re.compile(r"^\s*(?:[A-Za-z_]\w* = )?(?:extern_kernels\.(?P<op>baddbmm|addmm|bmm|mm)"
                     r"|torch\.ops\.aten\.(?P<aten>baddbmm|addmm|bmm|mm)\.\w+)\(")
_RUN = re.compile(r"^\s*(?P<callee>[A-Za-z_]\w*)\.run\(")
_SYMBOL = re.compile(r"\b(?:s|u|ps)\d+\b")
_SOURCE_NODES = re.compile(r"^\s*# Topologically Sorted Source Nodes: \[[^\]]*\]"
                           r"(?:, Original ATen: \[(?P<aten>[^\]]*)\])?")


@dataclass(frozen=True)
class GemmCall:
    line: int
    """The wrapper line that runs it (1-based)."""
    how: str
    """`multi-kernel`, `extern` or `template`."""
    op: str
    args: tuple[str, ...]
    """The names the call passes (buffers, inputs, sizes), in order; other arguments as
    their text."""
    dynamic: bool
    """Whether a size symbol reaches the call (an argument, or a launch size)."""


def module_of(args: Sequence[str], parameters: Mapping[str, str]) -> str | None:
    """The module whose parameter a call passes first (`fc1` for `fc1.weight`; "" for the
    root module's own), given each input's parameter path."""
    for a in args:
        path = parameters.get(a)
        if path is not None:
            return path.rsplit(".", 1)[0] if "." in path else ""
    return None


def op_of_kernel(name: str) -> str | None:
    """The GEMM a template kernel is named for (`triton_tem_fused_add_addmm_1`: addmm)."""
    tokens = name.split("_")
    return next((op for op in tokens if op in GEMM_OPS), None)


def gemm_calls(code: str, multi_kernel_names: Iterable[str], sizes: WrapperSizes | None = None) -> list[GemmCall]:
    """Every GEMM the wrapper runs, in line order: the `.run(...)` lines of its multi-kernels
    and of Triton templates, and its extern GEMM calls (dynamic where a size symbol reaches
    the line or, given the wrapper's `sizes`, one of its tensors)."""
    lines = code.splitlines()
    masked: set[int] = set()
    for span in kernel_spans(lines):
        masked.update(range(span.first, span.last + 1))
    multi = set(multi_kernel_names)
    out = []
    aten: str | None = None
    for n, text in enumerate(lines, 1):
        if n in masked:
            continue
        c = _SOURCE_NODES.match(text)
        if c is not None:
            aten = next((op for x in reversed((c["aten"] or "").split(",")) if (op := x.strip().removeprefix("aten."))
                         in GEMM_OPS), None)
            continue
        call = _call(n, text, multi)
        if call is None:
            continue
        dynamic = call.dynamic or (sizes is not None and any(
            _SYMBOL.search(" ".join(sizes.sizes(a, n) or ())) for a in call.args if a))
        op = aten if call.how == MULTI_KERNEL and aten else call.op
        out.append(replace(call, dynamic=dynamic, op=op))
    return out


def why_no_multi_kernel(call: GemmCall, config: Mapping[str, object], hints: Sequence[int]) -> str:
    """Why a GEMM the wrapper runs outside any multi-kernel got none, in a few words, from
    the call itself and the compile's settings (where the session states them)."""
    if call.how == MULTI_KERNEL:
        return "it has one"
    if not hints:
        return "no multi_kernel_hints were set"
    if not call.dynamic:
        return "not a dynamic size: every size is static, so one kernel serves them all"
    if call.how == TEMPLATE:
        return "a Triton template autotuned once, not per hint (one kernel for every size)"
    if config.get("max_autotune") is False and config.get("max_autotune_gemm") is False:
        return "not autotuned: max-autotune is off, so Inductor called the extern kernel (ATen's, cuBLAS on CUDA) directly"
    backends = config.get("max_autotune_gemm_backends")
    if isinstance(backends, str) and "TRITON" not in backends.upper():
        return f"an extern kernel: Triton is not among max_autotune_gemm_backends ({backends[:40]})"
    if isinstance(backends, str) and "ATEN" not in backends.upper():
        return ("an extern kernel: no Triton template applied to it (ATen is not among max_autotune_gemm_backends, "
                "so this is Inductor's fallback)")
    if config.get("max_autotune") or config.get("max_autotune_gemm"):
        return "an extern kernel: cuBLAS beat every Triton template in autotuning, or no template applied"
    return "an extern kernel (cuBLAS); the compile's settings are not in the session"


def _call(n: int, text: str, multi: set[str]) -> GemmCall | None:
    m = _RUN.match(text)
    if m is not None:
        callee = m["callee"]
        if callee in multi:
            how, op = MULTI_KERNEL, None
        elif callee.startswith("triton_tem_"):
            how, op = TEMPLATE, op_of_kernel(callee)
        else:
            return None
        return GemmCall(n, how, op or "template", _args(text), bool(_SYMBOL.search(text[m.end():])))
    m = _EXTERN.match(text)
    if m is None:
        return None
    return GemmCall(n, EXTERN, m["op"] or m["aten"], _args(text), bool(_SYMBOL.search(text[m.end():])))


def _args(text: str) -> tuple[str, ...]:
    try:
        stmt = ast.parse(text.strip()).body[0]
    except (SyntaxError, ValueError, RecursionError, MemoryError, IndexError):
        return ()
    call = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
    if not isinstance(call, ast.Call):
        return ()
    out = []
    for a in [*call.args, *(k.value for k in call.keywords if k.arg == "out")]:
        if isinstance(a, ast.Name):
            out.append(a.id)
        elif isinstance(a, ast.Call) and a.args and isinstance(a.args[0], ast.Name):
            out.append(a.args[0].id)  # reinterpret_tensor(buf, ...): the buffer it views
        else:
            out.append("")
    return tuple(out)
