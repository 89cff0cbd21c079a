"""The size-hint multi-kernels a wrapper defines, read from its text:

    arg_index = {
        0: [slice(0, 6, None), slice(6, 9, None)],
        ...
    }
    multi_kernel_0 = async_compile.size_hint_multi_kernel('multi_kernel_0', {
        ((2304,), (64, 64, 768), (768, 2304), (64, 2304)): triton_tem_fused_addmm_1,
        ...
    }, arg_index=arg_index)

Everything Inductor decides a dispatch by is here: the hint keys in order (the runtime
class keeps the dict's order), the kernel each runs, and which of the call's arguments
are shared by every variant (the first slice). Each definition is parsed on its own
(`ast`, nothing executed), so a damaged one costs only itself.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from kinspect.core.inductor_code.kernels import MAX_INT

_START = re.compile(r"^(?P<var>[A-Za-z_][A-Za-z0-9_]*) = async_compile\.size_hint_multi_kernel\("
                    r"'(?P<name>[A-Za-z_][A-Za-z0-9_]*)', \{$")
_END = re.compile(r"^\}, arg_index=(?P<index>[A-Za-z_][A-Za-z0-9_]*)\)$")
_INDEX_START = re.compile(r"^(?P<var>[A-Za-z_][A-Za-z0-9_]*) = \{$")
MAX_LINES = 4096
"""Lines one definition may take (a key per hint): beyond, it is not Inductor's."""

Key = tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class MultiKernel:
    name: str
    """The wrapper's name for it (`multi_kernel_0`), which its `.run(...)` lines call."""
    keys: tuple[Key, ...]
    """The hint keys, in the order Inductor compares them (the first minimum wins)."""
    kernels: tuple[str, ...]
    """The kernel each key runs; two hints may share one."""
    shared: int | None
    """How many of the call's first arguments every variant takes (the tensors and size
    arguments; each variant's launch grid follows), when `arg_index` says."""
    arg_index: dict[int, tuple[tuple[int, int], ...]]
    """Variant -> the (start, stop) argument ranges it runs with."""


def multi_kernel_names(code: str) -> list[str]:
    """The wrapper's names of the multi-kernels it defines, found without parsing them."""
    return [m["var"] for m in map(_START.match, code.splitlines()) if m is not None]


def multi_kernels(code: str) -> tuple[list[MultiKernel], int]:
    """Each multi-kernel the wrapper defines, in order, and how many definitions could not
    be read (cut short, or not what Inductor writes)."""
    lines = code.splitlines()
    out: list[MultiKernel] = []
    bad = 0
    index_at: dict[str, int] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _INDEX_START.match(line)
        if m is not None:
            index_at[m["var"]] = i
            i += 1
            continue
        m = _START.match(line)
        if m is None:
            i += 1
            continue
        end = next((j for j in range(i + 1, min(len(lines), i + MAX_LINES)) if _END.match(lines[j])), None)
        if end is None:
            bad += 1
            i += 1
            continue
        found = _read(lines, i, end, index_at.get(_END.match(lines[end])["index"]))  # type: ignore[index]
        if found is None:
            bad += 1
        else:
            out.append(found)
        i = end + 1
    return out, bad


def _read(lines: list[str], start: int, end: int, index_line: int | None) -> MultiKernel | None:
    try:
        call = ast.parse("\n".join(lines[start:end + 1])).body[0].value  # type: ignore[attr-defined]
    except (SyntaxError, ValueError, RecursionError, MemoryError, IndexError, AttributeError):
        return None
    if not (isinstance(call, ast.Call) and len(call.args) == 2 and isinstance(call.args[0], ast.Constant)
            and isinstance(call.args[1], ast.Dict)):
        return None
    name = call.args[0].value
    keys, kernels = [], []
    for k, v in zip(call.args[1].keys, call.args[1].values):
        key = _key(k)
        if key is None or not isinstance(v, ast.Name):
            return None
        keys.append(key)
        kernels.append(v.id)
    index = _arg_index(lines, index_line, start) if index_line is not None else {}
    shared = {r[0] for r in index.values() if r}
    return MultiKernel(str(name), tuple(keys), tuple(kernels),
                       shared.pop()[1] if len(shared) == 1 and next(iter(shared))[0] == 0 else None,
                       index)


def _key(node: ast.expr | None) -> Key | None:
    try:
        value = ast.literal_eval(node)  # type: ignore[arg-type]
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return None
    if not isinstance(value, tuple):
        return None
    out = []
    for shape in value:
        if not isinstance(shape, tuple) or not all(type(s) is int and 0 <= s <= MAX_INT for s in shape):
            return None
        out.append(shape)
    return tuple(out)


def _arg_index(lines: list[str], first: int, before: int) -> dict[int, tuple[tuple[int, int], ...]]:
    """`arg_index = {0: [slice(0, 6, None), slice(6, 9, None)], ...}` as ranges."""
    end = next((j for j in range(first, min(before, first + MAX_LINES)) if lines[j] == "}"), None)
    if end is None:
        return {}
    try:
        node = ast.parse("\n".join(lines[first:end + 1])).body[0].value  # type: ignore[attr-defined]
    except (SyntaxError, ValueError, RecursionError, MemoryError, IndexError, AttributeError):
        return {}
    if not isinstance(node, ast.Dict):
        return {}
    out: dict[int, tuple[tuple[int, int], ...]] = {}
    for k, v in zip(node.keys, node.values):
        if not (isinstance(k, ast.Constant) and type(k.value) is int and isinstance(v, ast.List)):
            return {}
        ranges = [_slice(e) for e in v.elts]
        if any(r is None for r in ranges):
            return {}
        out[k.value] = tuple(ranges)  # type: ignore[arg-type]
    return out


def _slice(node: ast.expr) -> tuple[int, int] | None:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "slice"
            and len(node.args) >= 2):
        return None
    a, b = node.args[0], node.args[1]
    if isinstance(a, ast.Constant) and isinstance(b, ast.Constant) and type(a.value) is int and type(b.value) is int:
        return a.value, b.value
    return None
