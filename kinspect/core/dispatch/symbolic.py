"""Symbolic tensor sizes, and what happens to them when Inductor substitutes a hint.

Inductor builds a variant's key by replacing every non-constant size expression with the
hint itself (`_make_shape_cache_key`), so `2*s0` tuned at hint 64 is keyed as 64 while the
kernel was benchmarked on 64-sized inputs too; kinspect shows the key value, the true
value of the expression at that hint, and the runtime value, and flags where they differ.

Expressions are stored as a small JSON tree, never as source text, so that reading a
session can't execute anything: an int is a constant, a string a symbol name, and a list
`[op, arg, ...]` an operation from a fixed set. sympy objects are built from the tree
directly (no sympify, no parse_expr) for display; evaluation walks the tree in Python,
which is far faster than `subs` on every keystroke.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import SimpleNamespace
from typing import Any

from kinspect.core.errors import ECHO_LIMIT, ShapeError
from kinspect.core.dispatch.shapes import MAX_SIZE

SYMBOL_NAME = re.compile(r"^(?!__)[A-Za-z_][A-Za-z0-9_]{0,63}$")
"""An identifier of at most 64 characters; dunder names (`__import__`) are never Inductor's."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
MAX_DEPTH = 32

# op -> (min args, max args); None = unbounded
OPS: dict[str, tuple[int, int | None]] = {
    "add": (2, None),
    "mul": (2, None),
    "pow": (2, 2),
    "floordiv": (2, 2),
    "ceildiv": (2, 2),
    "mod": (2, 2),
    "max": (2, None),
    "min": (2, None),
    "opaque": (1, 1),
}
"""`opaque` holds the printed form of an expression kinspect cannot model; it displays but
never evaluates."""

Tree = int | str | tuple


class ExprError(ValueError):
    """A stored expression tree breaks the format."""


def check_tree(node: Any, depth: int = 0) -> Tree:
    """Validate a JSON-decoded tree and return it with lists turned into tuples."""
    if depth > MAX_DEPTH:
        raise ExprError(f"expression nested deeper than {MAX_DEPTH}")
    if isinstance(node, bool):
        raise ExprError("expression leaf must be an integer or a symbol name, got a boolean")
    if isinstance(node, int):
        if abs(node) > MAX_SIZE:
            raise ExprError("expression constant exceeds 2**62")
        return node
    if isinstance(node, str):
        if not SYMBOL_NAME.match(node):
            raise ExprError(f"not a symbol name: {node[:40]!r}")
        return node
    if isinstance(node, list) and node and isinstance(node[0], str):
        op, args = node[0], node[1:]
        if op not in OPS:
            raise ExprError(f"unknown expression operation {op[:40]!r}")
        lo, hi = OPS[op]
        if len(args) < lo or (hi is not None and len(args) > hi):
            raise ExprError(f"operation {op} takes {lo}{'' if hi == lo else '+'} arguments, got {len(args)}")
        if op == "opaque":
            if not isinstance(args[0], str) or len(args[0]) > 2000:
                raise ExprError("opaque expression must hold its text (at most 2000 characters)")
            if _CONTROL.search(args[0]):
                raise ExprError("opaque expression text holds a control character")
            return (op, args[0])
        return (op, *(check_tree(a, depth + 1) for a in args))
    raise ExprError(f"expression node must be an int, a symbol name or [op, ...], got {type(node).__name__}")


def tree_to_json(tree: Tree) -> Any:
    if isinstance(tree, tuple):
        return [tree[0], *(tree_to_json(a) if tree[0] != "opaque" else a for a in tree[1:])]
    return tree


@functools.cache
def _plain_text(tree: Any) -> str | None:
    """sympy's text of a flat product or sum of symbols and one positive constant (`2*s1`,
    `s33*s50`, `s0 + 1`), the sizes a transformer's keys hold, without importing sympy
    (~0.25 s at every session open); None for anything else."""
    op, *args = tree
    if op not in ("mul", "add") or not all(isinstance(a, (int, str)) for a in args):
        return None
    nums = [a for a in args if isinstance(a, int)]
    syms = sorted(a for a in args if isinstance(a, str))
    if len(nums) > 1 or (nums and nums[0] <= (1 if op == "mul" else 0)) or len(set(syms)) != len(syms):
        return None
    if op == "mul":
        return "*".join([str(n) for n in nums] + syms)
    return " + ".join(syms + [str(n) for n in nums])


SYMPY_NODES = 64
"""Trees up to this size are displayed by sympy, which simplifies them as Inductor's
printer would; bigger ones (a 10,000-term sum takes sympy 25 s) by `_capped_text`."""
MAX_TEXT = 2000
"""Characters of an expression's displayed text, as for an opaque one."""
_CALLS = {"floordiv": "FloorDiv", "ceildiv": "CeilDiv", "mod": "Mod", "max": "Max", "min": "Min"}


def _nodes(tree: Tree, limit: int = SYMPY_NODES + 1) -> int:
    """The tree's node count, counted no further than `limit`."""
    if not isinstance(tree, tuple) or tree[0] == "opaque":
        return 1
    n = 1
    for a in tree[1:]:
        n += _nodes(a, limit - n)
        if n >= limit:
            break
    return n


SYMPY_MINMAX_ARGS = 4
"""Arguments of Max and Min, in all, that sympy is given: it compares them pairwise under
its assumptions (a Max of 63 symbols took it 3.5 s, of 8 sums 0.3 s)."""
SYMPY_MOD_NODES = 8
"""The largest Mod sympy is given, and only one: it looks for common factors under it."""


def _sympy_fits(tree: Tree) -> bool:
    """Whether sympy displays the tree in bounded time (benchmarks/symbolic_display.py
    prints the slowest it found against its target). Never a power: sympy evaluates a
    product of integer powers (`2 * (2**62)**62**62` has billions of digits), however
    `evaluate=False` the powers were built."""
    if _nodes(tree) > SYMPY_NODES:
        return False
    minmax = mods = 0
    stack = [tree]
    while stack:
        t = stack.pop()
        if not isinstance(t, tuple) or t[0] == "opaque":
            continue
        op = t[0]
        if op == "pow":
            return False
        if op in ("max", "min"):
            minmax += len(t) - 1
        elif op == "mod":
            mods += 1
            if _nodes(t, SYMPY_MOD_NODES + 1) > SYMPY_MOD_NODES:
                return False
        stack.extend(t[1:])
    return minmax <= SYMPY_MINMAX_ARGS and mods <= 1


def _capped_text(tree: Tree) -> str:
    """The tree as sympy would write it unsimplified, cut at `MAX_TEXT` characters, in
    time linear in what is written: display never costs more than evaluation."""
    out: list[str] = []
    left = MAX_TEXT

    def put(text: str) -> None:
        nonlocal left
        if left <= 0:
            raise _Full
        out.append(text[:left])
        left -= len(text)

    def walk(t: Tree, parent: str) -> None:
        if not isinstance(t, tuple):
            return put(str(t))
        op, *args = t
        if op == "opaque":
            return put(f"⟨{args[0]}⟩")
        grouped = parent == "pow" and op in ("add", "mul", "pow") or parent == "mul" and op == "add"
        put("(" if grouped else "")
        put(_CALLS[op] + "(" if op in _CALLS else "")
        sep = {"add": " + ", "mul": "*", "pow": "**"}.get(op, ", ")
        for i, a in enumerate(args):
            put(sep if i else "")
            walk(a, op)
        put(")" if op in _CALLS else "")
        put(")" if grouped else "")

    try:
        walk(tree, "")
    except _Full:
        return "".join(out) + "…"
    return "".join(out) if left >= 0 else "".join(out) + "…"


class _Full(Exception):
    """The display text reached `MAX_TEXT`."""


def _sympy() -> Any:
    """sympy, imported on first use: it costs ~0.2 s and opening a session whose sizes are
    plain symbols and constants never needs it."""
    import sympy

    class CeilDiv(sympy.Function):
        """Display-only stand-in for Inductor's CeilDiv."""

        nargs = 2

    class FloorDiv(sympy.Function):
        """Display-only stand-in for Inductor's FloorDiv (sympy's floor(a/b) prints poorly)."""

        nargs = 2

    return SimpleNamespace(sp=sympy, FloorDiv=FloorDiv, CeilDiv=CeilDiv)


def _to_sympy(tree: Tree) -> Any:
    lib = _sympy()
    sp = lib.sp
    if isinstance(tree, int):
        return sp.Integer(tree)
    if isinstance(tree, str):
        return sp.Symbol(tree, integer=True, nonnegative=True)
    op, *args = tree
    if op == "opaque":
        return sp.Symbol(f"⟨{args[0]}⟩")
    a = [_to_sympy(x) for x in args]
    if op == "add":
        return sp.Add(*a)
    if op == "mul":
        return sp.Mul(*a)
    if op == "pow":
        return sp.Pow(a[0], a[1], evaluate=False)  # (2**62)**62**... is shown, not computed
    if op == "floordiv":
        return lib.FloorDiv(*a)
    if op == "ceildiv":
        return lib.CeilDiv(*a)
    if op == "mod":
        return sp.Mod(*a)
    if op == "max":
        return sp.Max(*a)
    return sp.Min(*a)


class SizeOverflow(ShapeError):
    """An evaluated size beyond 2**62, the format's bound (Inductor's "no key" distance).

    Raised from `SizeExpr.evaluate` with the expression and the values it met, so that a
    caller who knows the user's names for the symbols can say it in them (`named`)."""

    def __init__(self, message: str, expr: SizeExpr | None = None, env: Mapping[str, int] | None = None) -> None:
        super().__init__(message)
        self.expr = expr
        self.env = env or {}

    def named(self, names: Mapping[str, str]) -> SizeOverflow:
        """The same overflow, its expression and values in the user's names (`B*S` at `B=...`)."""
        if self.expr is None:
            return self
        return self.expr.overflow(self.env, names)


def _capped(value: int) -> int:
    if -MAX_SIZE <= value <= MAX_SIZE:
        return value
    raise SizeOverflow("exceeds 2**62")


def _power(base: int, exp: int) -> int:
    """`base ** exp`, refused before it is computed when it would pass 2**62: a tower of
    `pow` in a hostile file would otherwise build numbers of billions of digits."""
    if exp < 0 or exp > 62:
        raise ShapeError(f"unsupported exponent {exp} in size expression")
    if abs(base) > 1 and (abs(base).bit_length() - 1) * exp > 62:
        raise SizeOverflow("exceeds 2**62")
    return _capped(base**exp)  # at most 2**124 before the cap


def _evaluate(tree: Tree, env: Mapping[str, int]) -> int:
    """Every intermediate is capped at 2**62 as it is computed, so no number grows past
    2**124 on the way (a product of two capped values)."""
    if isinstance(tree, int):
        return tree
    if isinstance(tree, str):
        try:
            return _capped(env[tree])
        except KeyError:
            raise ShapeError(f"needs a value for {tree}") from None
    op = tree[0]
    if op == "opaque":
        raise ShapeError(f"cannot evaluate {tree[1]!r}: kinspect does not model it")
    vals = [_evaluate(a, env) for a in tree[1:]]
    if op == "add":
        total = 0
        for v in vals:
            total = _capped(total + v)
        return total
    if op == "mul":
        if 0 in vals:
            return 0
        out = 1
        for v in vals:
            out = _capped(out * v)
        return out
    if op == "pow":
        return _power(*vals)
    if op in ("floordiv", "ceildiv", "mod"):
        a, b = vals
        if b == 0:
            raise ShapeError("division by zero in size expression")
        if op == "floordiv":
            return a // b
        if op == "ceildiv":
            return -(-a // b)
        return a % b
    if op == "max":
        return max(vals)
    return min(vals)


def _symbols(tree: Tree, out: set[str]) -> set[str]:
    if isinstance(tree, str):
        out.add(tree)
    elif isinstance(tree, tuple) and tree[0] != "opaque":
        for a in tree[1:]:
            _symbols(a, out)
    return out


@dataclass(frozen=True)
class SizeExpr:
    """One dimension's size as an expression over the graph's symbols."""

    tree: Tree

    @property
    def is_constant(self) -> bool:
        """Inductor's test: a sympy Integer stays in the key, anything else becomes the hint."""
        return isinstance(self.tree, int)

    @cached_property
    def symbols(self) -> frozenset[str]:
        return frozenset(_symbols(self.tree, set()))

    def evaluate(self, env: Mapping[str, int]) -> int:
        try:
            return _evaluate(self.tree, env)
        except SizeOverflow:
            raise self.overflow(env, {}) from None

    def overflow(self, env: Mapping[str, int], names: Mapping[str, str]) -> SizeOverflow:
        """`size s0*s1 exceeds 2**62 at s0=... s1=...`, in `names` where given."""
        at = " ".join(f"{names.get(s, s)}={env[s]}" for s in sorted(self.symbols) if s in env)
        full = self.text_with(names)
        text = full if len(full) <= ECHO_LIMIT else full[:ECHO_LIMIT] + "…"
        return SizeOverflow(f"size {text} exceeds 2**62{' at ' + at if at else ''}", self, env)

    def key_value(self, hint: int, sizes: Mapping[str, int] | None = None) -> int:
        """What Inductor writes into the variant's key for this dimension: the hint itself
        for any expression, or, where the variant was tuned at one size per symbol
        (`sizes`), the expression's value there."""
        if isinstance(self.tree, int):
            return self.tree
        if sizes is not None:
            value, _ = self._at_hint(hint, sizes)
            if value is not None:
                return value
        return hint

    def true_value(self, hint: int, sizes: Mapping[str, int] | None = None) -> int | None:
        """The expression's value with every symbol set to the hint, or to its size in
        `sizes` (None if unmodelled or beyond 2**62)."""
        return self._at_hint(hint, sizes)[0]

    def _at_hint(self, hint: int, sizes: Mapping[str, int] | None = None) -> tuple[int | None, bool]:
        """(true value, whether it passes 2**62) with every symbol set to the hint (or its size in `sizes`)."""
        try:
            return _evaluate(self.tree, {s: (sizes or {}).get(s, hint) for s in self.symbols}), False
        except SizeOverflow:
            return None, True
        except ShapeError:
            return None, False

    def to_sympy(self) -> Any:
        return _to_sympy(self.tree)

    @cached_property
    def text(self) -> str:
        return _text(self.tree)

    def __str__(self) -> str:
        return self.text

    def text_with(self, names: Mapping[str, str]) -> str:
        """The text with symbols renamed (`B*S` where Inductor wrote `s33*s50`), for
        people who named those sizes themselves."""
        if not names or not self.symbols & names.keys():
            return self.text
        return self.renamed(names).text

    def renamed(self, names: Mapping[str, str]) -> SizeExpr:
        """The same expression over symbols renamed (`s27` as `s27_1`)."""
        return SizeExpr(_renamed(self.tree, names))

    @classmethod
    def from_json(cls, value: Any) -> SizeExpr:
        return cls(check_tree(value))

    def to_json(self) -> Any:
        return tree_to_json(self.tree)

    @classmethod
    def from_sympy(cls, expr: Any) -> SizeExpr:
        """Convert a sympy size (Inductor's, possibly with its own functions) to a tree.

        Inductor's FloorDiv, CeilDiv, ModularIndexing and friends live in torch, which core
        must not import, so they are recognised by class name.
        """
        return cls(_from_sympy(expr, 0))

    @classmethod
    def from_text(cls, text: str) -> SizeExpr:
        """A size as Inductor printed it in its output code (`s27*s52`, `((63 + s0) // 64)`),
        read by Python's parser alone, nothing evaluated: the text comes from a trace or
        a file. What the tree cannot model stays as its text (`opaque`)."""
        if len(text) > 2000:
            return cls(_opaque(text))
        try:
            node = ast.parse(text.strip(), mode="eval").body
            return cls(_from_ast(node, 0))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return cls(_opaque(text))


@functools.lru_cache(maxsize=4096)
def _text(tree: Tree) -> str:
    """The tree's display text: sympy's where it is cheap (`_sympy_fits`), else written
    as is, cut at `MAX_TEXT`; once per tree, as the inspector redraws at every keystroke."""
    if isinstance(tree, (int, str)):
        return str(tree)
    if tree[0] == "opaque":
        return tree[1]
    plain = _plain_text(tree)
    if plain is not None:
        return plain
    if not _sympy_fits(tree):
        return _capped_text(tree)
    try:
        return _sympy().sp.sstr(_to_sympy(tree))
    except (ArithmeticError, ValueError, RecursionError):  # Mod(x, 0), Max of an uncomparable
        return _capped_text(tree)


def _renamed(tree: Tree, names: Mapping[str, str]) -> Tree:
    if isinstance(tree, str):
        return names.get(tree, tree)
    if isinstance(tree, tuple) and tree[0] != "opaque":
        return (tree[0], *(_renamed(a, names) for a in tree[1:]))
    return tree


def _opaque(text: str) -> Tree:
    return ("opaque", _CONTROL.sub("?", text)[:2000])


def _from_sympy(expr: Any, depth: int) -> Tree:
    if isinstance(expr, bool):
        raise ExprError("boolean is not a size")
    if isinstance(expr, int):
        return int(expr) if abs(expr) <= MAX_SIZE else _opaque(str(expr))
    if depth > MAX_DEPTH:
        return _opaque(str(expr))
    sympy = _sympy().sp
    if isinstance(expr, sympy.Integer):
        return int(expr) if abs(int(expr)) <= MAX_SIZE else _opaque(str(expr))
    if isinstance(expr, sympy.Symbol):
        name = expr.name
        return name if SYMBOL_NAME.match(name) else _opaque(name)
    name = type(expr).__name__
    args = [_from_sympy(a, depth + 1) for a in getattr(expr, "args", ())]
    if isinstance(expr, sympy.Add):
        return ("add", *args)
    if isinstance(expr, sympy.Mul):
        return ("mul", *args)
    if isinstance(expr, sympy.Pow) and isinstance(args[1], int) and args[1] >= 0:
        return ("pow", *args)
    if name in ("FloorDiv", "CleanDiv") and len(args) == 2:
        return ("floordiv", *args)
    if name == "CeilDiv" and len(args) == 2:
        return ("ceildiv", *args)
    if name in ("Mod", "PythonMod") and len(args) == 2:
        return ("mod", *args)
    if name == "ModularIndexing" and len(args) == 3:
        return ("mod", ("floordiv", args[0], args[1]), args[2])
    if name == "Max" and len(args) >= 2:
        return ("max", *args)
    if name == "Min" and len(args) >= 2:
        return ("min", *args)
    return _opaque(str(expr))


_AST_OPS = {ast.Add: "add", ast.Mult: "mul", ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow"}


def _from_ast(node: ast.expr, depth: int) -> Tree:
    """A parsed size expression as a tree; anything beyond plain integer arithmetic on
    symbols, Max and Min is opaque."""
    if depth > MAX_DEPTH:
        raise ValueError("nested too deeply")
    if isinstance(node, ast.Constant) and type(node.value) is int:
        if abs(node.value) > MAX_SIZE:
            raise ValueError("constant beyond 2**62")
        return node.value
    if isinstance(node, ast.Name):
        if not SYMBOL_NAME.match(node.id):
            raise ValueError("not a symbol name")
        return node.id
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _from_ast(node.operand, depth + 1)
        return -inner if isinstance(inner, int) else ("mul", -1, inner)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
        right = _from_ast(node.right, depth + 1)
        return ("add", _from_ast(node.left, depth + 1), -right if isinstance(right, int) else ("mul", -1, right))
    if isinstance(node, ast.BinOp) and type(node.op) in _AST_OPS:
        op = _AST_OPS[type(node.op)]
        left, right = _from_ast(node.left, depth + 1), _from_ast(node.right, depth + 1)
        if op == "pow" and not (isinstance(right, int) and right >= 0):
            raise ValueError("not a plain power")
        if op in ("add", "mul"):  # a + b + c is one sum, as sympy holds it
            return (op, *_flat(left, op), *_flat(right, op))
        return (op, left, right)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("Max", "Min", "max", "min")
            and len(node.args) >= 2 and not node.keywords):
        return (node.func.id.lower(), *(_from_ast(a, depth + 1) for a in node.args))
    raise ValueError("not a size expression")


def _flat(tree: Tree, op: str) -> tuple[Tree, ...]:
    return tree[1:] if isinstance(tree, tuple) and tree[0] == op else (tree,)


@dataclass(frozen=True)
class DimAtHint:
    """One dimension of one tensor under one hint: the facts the symbolic view shows."""

    expr: SizeExpr
    key_value: int
    true_value: int | None
    too_large: bool = False
    """The expression passes 2**62 at this hint (so `true_value` is None)."""

    @property
    def differs(self) -> bool:
        return self.too_large or (self.true_value is not None and self.true_value != self.key_value)

    @property
    def true_text(self) -> str:
        return "more than 2**62" if self.too_large else str(self.true_value)


@dataclass(frozen=True)
class TensorSpec:
    """A tensor whose size enters a key: a template input or the template's output."""

    name: str
    role: str
    sizes: tuple[SizeExpr, ...] = field(default_factory=tuple)

    @property
    def symbols(self) -> frozenset[str]:
        return frozenset().union(*(s.symbols for s in self.sizes))

    def at_hint(self, hint: int, sizes: Mapping[str, int] | None = None) -> tuple[DimAtHint, ...]:
        """Each dim's key and true value at `hint`: Inductor's own rule, or the variant's one
        size per symbol (`sizes`, where the session records them)."""
        return tuple(DimAtHint(s, s.key_value(hint, sizes), *s._at_hint(hint, sizes)) for s in self.sizes)

    def key_at_hint(self, hint: int, sizes: Mapping[str, int] | None = None) -> tuple[int, ...]:
        return tuple(s.key_value(hint, sizes) for s in self.sizes)

    def runtime_shape(self, env: Mapping[str, int]) -> tuple[int, ...]:
        return tuple(s.evaluate(env) for s in self.sizes)

    def text(self) -> str:
        return self.text_with({})

    def text_with(self, names: Mapping[str, str]) -> str:
        """`(B, 1024)` where Inductor wrote `(s33, 1024)`."""
        return "(" + ", ".join(s.text_with(names) for s in self.sizes) + ("," if len(self.sizes) == 1 else "") + ")"
