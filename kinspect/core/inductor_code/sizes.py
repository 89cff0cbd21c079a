"""What the wrapper's own lines say of a tensor's sizes, as Inductor printed them.

A multi-kernel's runtime key is the shapes of the tensors its `.run(...)` line passes, and
the wrapper states each of those shapes where the tensor appears:

    assert_size_stride(arg2_1, (s52, s27), (s27, 1))               a graph input
    buf4 = empty_strided_cuda((s27*s52, 2304), (2304, 1), ...)       a new buffer
    buf12 = reinterpret_tensor(buf3, (s27*s52, 768), (768, 1), 0)    a view of another
    buf16 = buf8; del buf8  # reuse                                  another's storage

so each size is read back as the expression text Inductor printed (`s27*s52`), with the
precomputed sizes a wrapper names (`ps0 = s27*s52`) written out. Names are looked up in
the function that holds the line (the graph's `call`, or a nested compile region's
function), at the last statement before it that gave the name its shape.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from kinspect.core.inductor_code.kernels import kernel_spans

_SHAPED = re.compile(r"assert_size_stride\(|= empty_strided|= reinterpret_tensor\(|^\s*[A-Za-z_]\w* = [A-Za-z_]\w*(;|$)")
_PRECOMPUTED = re.compile(r"^\s*(?P<name>ps\d+) = (?P<expr>[^;#]+?)\s*$")
_DEF = re.compile(r"^(?P<indent>\s*)def (?P<name>[A-Za-z_]\w*)\(")
_ALLOCATORS = ("empty_strided", "empty_strided_cuda", "empty_strided_cpu", "empty_strided_xpu", "empty_strided_mtia")
MAX_LINE = 20_000
"""Longer lines are not parsed: none of the statements read here is ever that long."""


@dataclass
class _Scope:
    """One function of the wrapper: where each name got its shape, in line order."""

    indent: int
    shapes: dict[str, list[tuple[int, tuple[str, ...] | str]]] = field(default_factory=dict)
    """name -> [(line, sizes, or the name it aliases)]."""
    precomputed: dict[str, str] = field(default_factory=dict)


class WrapperSizes:
    """The shapes a wrapper's lines state, read once, looked up by name and line."""

    def __init__(self, code: str) -> None:
        self.lines = code.splitlines()
        masked = _in_kernels(self.lines)
        self._scopes: list[_Scope] = [_Scope(-1)]
        self._line_scope = [0] * (len(self.lines) + 1)
        stack = [0]
        for n, text in enumerate(self.lines, 1):
            if n in masked or len(text) > MAX_LINE or not text.strip():
                self._line_scope[n] = stack[-1]
                continue
            indent = len(text) - len(text.lstrip())
            while len(stack) > 1 and indent <= self._scopes[stack[-1]].indent:
                stack.pop()
            m = _DEF.match(text)
            if m is not None:
                self._scopes.append(_Scope(indent))
                stack.append(len(self._scopes) - 1)
            self._line_scope[n] = stack[-1]
            scope = self._scopes[stack[-1]]
            p = _PRECOMPUTED.match(text)
            if p is not None:
                scope.precomputed[p["name"]] = p["expr"]
            elif m is None and _SHAPED.search(text):
                for name, shape in _statements(text):
                    scope.shapes.setdefault(name, []).append((n, shape))

    def sizes(self, name: str, line: int) -> tuple[str, ...] | None:
        """The sizes of `name` as the line (1-based) sees it, each an expression's text."""
        if not 0 < line < len(self._line_scope):
            return None
        scope = self._scopes[self._line_scope[line]]
        for _ in range(64):  # aliases of aliases
            found = [s for n, s in scope.shapes.get(name, []) if n < line]
            if not found:
                return None
            shape = found[-1]
            if isinstance(shape, tuple):
                return tuple(_written_out(t, scope.precomputed) for t in shape)
            name = shape
        return None


def _in_kernels(lines: list[str]) -> set[int]:
    """The lines inside kernel sources: their `def`s and statements are not the wrapper's."""
    out: set[int] = set()
    for span in kernel_spans(lines):
        out.update(range(span.first, span.last + 1))
    return out


def _written_out(text: str, precomputed: dict[str, str]) -> str:
    if not precomputed:
        return text
    return re.sub(r"\bps\d+\b", lambda m: f"({precomputed[m[0]]})" if m[0] in precomputed else m[0], text)


def _statements(text: str) -> list[tuple[str, tuple[str, ...] | str]]:
    try:
        body = ast.parse(text.strip()).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    out: list[tuple[str, tuple[str, ...] | str]] = []
    for stmt in body:
        if isinstance(stmt, ast.Expr) and _called(stmt.value, ("assert_size_stride",)):
            args = stmt.value.args  # type: ignore[attr-defined]
            if len(args) >= 2 and isinstance(args[0], ast.Name):
                sizes = sizes_of(args[1])
                if sizes is not None:
                    out.append((args[0].id, sizes))
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name, value = stmt.targets[0].id, stmt.value
            if isinstance(value, ast.Name):
                out.append((name, value.id))
            elif _called(value, _ALLOCATORS) and value.args:  # type: ignore[attr-defined]
                sizes = sizes_of(value.args[0])  # type: ignore[attr-defined]
                if sizes is not None:
                    out.append((name, sizes))
            elif _called(value, ("reinterpret_tensor",)) and len(value.args) >= 2:  # type: ignore[attr-defined]
                sizes = sizes_of(value.args[1])  # type: ignore[attr-defined]
                if sizes is not None:
                    out.append((name, sizes))
    return out


def _called(node: ast.expr, names: tuple[str, ...]) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Name) and f.id in names) or (isinstance(f, ast.Attribute) and f.attr in names)


def sizes_of(node: ast.expr) -> tuple[str, ...] | None:
    """A shape tuple's entries as text (`(s52, s27, 768)`: `s52`, `s27`, `768`)."""
    if not isinstance(node, (ast.Tuple, ast.List)):
        return None
    try:
        return tuple(ast.unparse(e) for e in node.elts)
    except (ValueError, RecursionError):
        return None


def arg_shape(node: ast.expr, sizes: WrapperSizes, line: int) -> tuple[str, ...] | None:
    """The shape of one argument of a call on `line`: a name the wrapper gave a shape, or
    an inline `reinterpret_tensor(x, (sizes), ...)`."""
    if isinstance(node, ast.Name):
        return sizes.sizes(node.id, line)
    if _called(node, ("reinterpret_tensor",)) and len(node.args) >= 2:  # type: ignore[attr-defined]
        return sizes_of(node.args[1])  # type: ignore[attr-defined]
    return None
