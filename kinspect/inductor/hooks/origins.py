"""Which line of the user's model a GEMM template came from.

A user with a 24-layer model cannot act on `multi_kernel_0 · addmm`; they need
`h.0.attn.c_attn` and the line of their code. Inductor keeps that on the FX nodes each IR
node was lowered from (`node.origins`): Dynamo's `nn_module_stack` (the module path, as
a Dynamo source such as `L['self'].h[0].attn.c_attn`, and the module's class) and the
`stack_trace` of the traced call. Both are optional in FX metadata (a backward graph, a
function model), so every field here may be missing and nothing is guessed.
"""

from __future__ import annotations

import contextlib
import inspect
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kinspect.core.dispatch.operands import GEMM_OPS

_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>\S+)\s*$')
_ROOT = re.compile(r"^(?:L|G)\[['\"][^'\"]*['\"]\]")
_ITEM = re.compile(r"""\._modules\[['"]([^'"]+)['"]\]|\[['"]([^'"]+)['"]\]|\[(\d+)\]""")
_SKIP = tuple(
    str(Path(p).resolve()) for p in (
        Path(__file__).resolve().parents[2],  # kinspect's own entry function
    )
)


@dataclass(frozen=True)
class Origin:
    """Where one template's FX node came from in the user's code."""

    module: str | None = None
    """Module path from the compiled root (`h.0.attn.c_attn`); "" for the root itself."""
    module_class: str | None = None
    file: str | None = None
    line: int | None = None
    code: str | None = None
    """The source line that made the call, as the stack trace quotes it."""


def module_path(source: str) -> str:
    """`L['self'].h[0]._modules['attn'].c_attn` -> `h.0.attn.c_attn`."""
    rest = _ROOT.sub("", source, count=1)
    rest = _ITEM.sub(lambda m: "." + next(g for g in m.groups() if g is not None), rest)
    return rest.strip(".")


def _class_name(cls: Any) -> str:
    if isinstance(cls, type):
        return cls.__name__
    return str(cls).rsplit(".", 1)[-1].strip("'>")


def user_frame(stack_trace: str, module_file: str | None = None) -> tuple[str, int, str | None] | None:
    """The frame of the trace that called the GEMM's module: the innermost one outside
    torch and kinspect, or, when that is the module's own `forward` (a library module such
    as transformers' Conv1D), the frame that called it. (file, line, code)"""
    lines = stack_trace.splitlines()
    frames: list[tuple[str, int, str | None, str]] = []
    for i, text in enumerate(lines):
        m = _FRAME.match(text)
        if m is None or _is_library(m["file"]):
            continue
        code = lines[i + 1].strip() if i + 1 < len(lines) and not _FRAME.match(lines[i + 1]) else None
        frames.append((m["file"], int(m["line"]), code or None, m["fn"]))
    if not frames:
        return None
    file, line, code, fn = frames[-1]
    if len(frames) > 1 and fn == "forward" and module_file is not None and _same_file(file, module_file):
        file, line, code, _ = frames[-2]
    return file, line, code


def _same_file(a: str, b: str) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except (OSError, ValueError):
        return a == b


def _is_library(path: str) -> bool:
    """torch's own frames (nn.Module's call machinery) and kinspect's; a model library such
    as transformers is the user's code here, wherever it is installed."""
    norm = path.replace("\\", "/")
    if "/site-packages/torch/" in norm or "/dist-packages/torch/" in norm:
        return True
    try:
        resolved = str(Path(path).resolve())
    except (OSError, ValueError):
        return False
    return resolved.startswith(_SKIP)


def describe(fx_node: Any) -> Origin:
    meta = getattr(fx_node, "meta", None) or {}
    module = module_class = module_file = None
    stack = meta.get("nn_module_stack")
    if isinstance(stack, dict) and stack:
        path, cls = list(stack.values())[-1]
        module, module_class = module_path(str(path)), _class_name(cls)
        if isinstance(cls, type):
            with contextlib.suppress(TypeError, OSError):
                module_file = inspect.getsourcefile(cls)
    frame = None
    trace = meta.get("stack_trace")
    if isinstance(trace, str):
        frame = user_frame(trace, module_file)
    file, line, code = frame if frame is not None else (None, None, None)
    return Origin(module, module_class, file, line, code)


def _op_name(fx_node: Any) -> str:
    target = getattr(fx_node, "target", None)
    return str(getattr(target, "__name__", target) or "")


def origin_of(ir_node: Any) -> Origin | None:
    """The origin of a template IR node: of its GEMM among the FX nodes it was lowered
    from (a fused epilogue adds others), else of any with module metadata."""
    nodes = [n for n in [getattr(ir_node, "origin_node", None)] if n is not None]
    nodes += sorted(getattr(ir_node, "origins", ()) or (), key=lambda n: str(getattr(n, "name", "")))
    if not nodes:
        return None
    gemm = [n for n in nodes if _op_name(n).split(".")[0] in GEMM_OPS]
    with_meta = [n for n in gemm + nodes if (getattr(n, "meta", None) or {}).get("nn_module_stack")]
    best = (with_meta or gemm or nodes)[0]
    return describe(best)
