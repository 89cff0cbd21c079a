"""The breakpoint condition language: `site == "multi_kernel_1" and B > 512`.

A condition is text a user types into the inspector, or text from a shared config, so it
is never handed to `eval`, `compile` or `ast.literal_eval`: a hand-written tokenizer and
recursive-descent parser build a small tree, which is type-checked against the fields a
session offers and then compiled into nested closures. Closures rather than a tree-walking
interpreter because the replay cursor scans 100,000 events per keystroke.

Every error names the 1-based column, in one line, because the inspector re-parses as the
user types and shows the message under the input. The language is documented for users in
docs/breakpoints.md; keep the two in step.
"""

from __future__ import annotations

import difflib
import operator
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kinspect.core.errors import KinspectError
from kinspect.core.session.runtime import DispatchEvent

MAX_LENGTH = 2000
MAX_DEPTH = 64
KEYWORDS = frozenset({"and", "or", "not", "in", "true", "false", "null"})

Getter = Callable[[DispatchEvent], Any]
Predicate = Callable[[DispatchEvent], bool]


class ConditionError(KinspectError, ValueError):
    """A condition that does not parse, names an unknown field, or mixes types."""


@dataclass(frozen=True)
class Field:
    """Something a condition can name: a type for checking, a getter for evaluating."""

    name: str
    type: str
    """"num", "str" or "bool"."""
    nullable: bool
    get: Getter
    doc: str = ""
    """One line for a user: what the field holds (the inspector's completion shows it)."""


class Fields(Protocol):
    """The fields of one session (see `kinspect.core.debugger.breakpoints.EventContext`)."""

    def field(self, name: str) -> Field | None: ...

    def field_names(self) -> list[str]: ...


# ---------------------------------------------------------------- tokens


@dataclass(frozen=True)
class Token:
    kind: str
    """"name", "num", "str", "op" or "end"."""
    text: str
    col: int
    value: Any = None


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"[0-9][0-9_]*(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_OPS = ("==", "!=", "<=", ">=", "<", ">", "(", ")", ",", "-")
_HINTS = {
    "=": "use == to compare",
    "&": "use 'and'",
    "|": "use 'or'",
    "!": "use 'not' (or != to compare)",
    "[": "use parentheses for a tuple: S in (77, 128)",
}


def tokenize(text: str) -> Iterator[Token]:
    """Tokens on demand, so that the first error in reading order is the one reported."""
    if len(text) > MAX_LENGTH:
        raise ConditionError(f"condition longer than {MAX_LENGTH} characters")
    pos = 0
    while pos < len(text):
        ch = text[pos]
        col = pos + 1
        if ch.isspace():
            pos += 1
            continue
        m = _NAME.match(text, pos)
        if m:
            yield Token("name", m.group(0), col)
            pos = m.end()
            continue
        m = _NUMBER.match(text, pos)
        if m:
            token = m.group(0)
            if _NAME.match(text, m.end()):
                raise ConditionError(f"column {col}: a number runs into a name: {text[pos:pos + 12]!r}")
            clean = token.replace("_", "")
            value = float(clean) if (m.group(1) or m.group(2)) else int(clean)
            yield Token("num", token, col, value)
            pos = m.end()
            continue
        if ch in "\"'":
            value, pos = _string(text, pos)
            yield Token("str", text[col - 1:pos], col, value)
            continue
        op = next((o for o in _OPS if text.startswith(o, pos)), None)
        if op is None:
            hint = _HINTS.get(ch)
            raise ConditionError(
                f"column {col}: unexpected {ch!r}" + (f": {hint}" if hint else "")
            )
        yield Token("op", op, col)
        pos += len(op)
    yield Token("end", "", len(text) + 1)


def _string(text: str, start: int) -> tuple[str, int]:
    quote = text[start]
    pos = start + 1
    chars: list[str] = []
    while pos < len(text):
        ch = text[pos]
        if ch == quote:
            return "".join(chars), pos + 1
        if ch == "\\":
            nxt = text[pos + 1:pos + 2]
            if nxt not in ("\\", "'", '"'):
                raise ConditionError(f"column {pos + 1}: unknown escape \\{nxt} in a string (only \\\\, \\\" and \\' )")
            chars.append(nxt)
            pos += 2
            continue
        chars.append(ch)
        pos += 1
    raise ConditionError(f"column {start + 1}: string is not closed (missing {quote})")


# ---------------------------------------------------------------- tree


@dataclass(frozen=True)
class Node:
    col: int
    type: str
    """"num", "str", "bool", "null" or "tuple"."""
    nullable: bool


@dataclass(frozen=True)
class Name(Node):
    name: str


@dataclass(frozen=True)
class Const(Node):
    value: Any


@dataclass(frozen=True)
class Tuple(Node):
    items: tuple[Const, ...]
    item_type: str


@dataclass(frozen=True)
class Compare(Node):
    op: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Not(Node):
    operand: Node


@dataclass(frozen=True)
class Bool(Node):
    op: str
    """"and" or "or"."""
    operands: tuple[Node, ...]


_COMPARE = ("==", "!=", "<", "<=", ">", ">=")
_PLURALS = {"num": "numbers", "str": "strings"}
_TYPE_WORDS = {"num": "a number", "str": "a string", "bool": "true/false", "null": "null", "tuple": "a tuple"}


# ---------------------------------------------------------------- parser


class _Parser:
    def __init__(self, text: str, fields: Fields) -> None:
        self.stream = tokenize(text)
        self.ahead: list[Token] = []
        self.fields = fields
        self.depth = 0

    def peek(self, n: int = 0) -> Token:
        while len(self.ahead) <= n:
            if self.ahead and self.ahead[-1].kind == "end":
                return self.ahead[-1]
            self.ahead.append(next(self.stream))
        return self.ahead[n]

    @property
    def tok(self) -> Token:
        return self.peek()

    def at(self, kind: str, text: str | None = None) -> bool:
        t = self.tok
        return t.kind == kind and (text is None or t.text == text)

    def take(self) -> Token:
        t = self.tok
        if t.kind != "end":
            self.ahead.pop(0)
        return t

    def fail(self, expected: str) -> ConditionError:
        t = self.tok
        found = "end of input" if t.kind == "end" else repr(t.text)
        return ConditionError(f"column {t.col}: expected {expected}, found {found}")

    def parse(self) -> Node:
        if self.at("end"):
            raise ConditionError("empty condition: try miss, or site == \"multi_kernel_0\" and B > 512")
        node = self.expr()
        if not self.at("end"):
            if self.tok.text in _COMPARE or self.at("name", "in"):
                raise ConditionError(
                    f"column {self.tok.col}: chained comparison; join the comparisons with 'and'"
                )
            raise self.fail("'and', 'or' or the end of the condition")
        return _need_bool(node)

    def expr(self) -> Node:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ConditionError(f"column {self.tok.col}: condition nested deeper than {MAX_DEPTH}")
        node = self.boolean("or", self.conjunction)
        self.depth -= 1
        return node

    def conjunction(self) -> Node:
        return self.boolean("and", self.negation)

    def boolean(self, op: str, operand: Callable[[], Node]) -> Node:
        first = operand()
        if not self.at("name", op):
            return first
        items = [_need_bool(first)]
        while self.at("name", op):
            self.take()
            items.append(_need_bool(operand()))
        return Bool(first.col, "bool", False, op, tuple(items))

    def negation(self) -> Node:
        if self.at("name", "not"):
            t = self.take()
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise ConditionError(f"column {t.col}: condition nested deeper than {MAX_DEPTH}")
            operand = _need_bool(self.negation())
            self.depth -= 1
            return Not(t.col, "bool", False, operand)
        return self.comparison()

    def comparison(self) -> Node:
        left = self.operand()
        t = self.tok
        if t.kind == "op" and t.text in _COMPARE:
            self.take()
            return _compare(t.text, left, self.operand(), t.col)
        if self.at("name", "in"):
            self.take()
            return _membership("in", left, self.operand(), t.col)
        if self.at("name", "not") and self.peek(1).text == "in":
            self.take()
            self.take()
            return _membership("not in", left, self.operand(), t.col)
        return left

    def operand(self) -> Node:
        t = self.tok
        if t.kind == "num":
            self.take()
            return Const(t.col, "num", False, t.value)
        if t.kind == "str":
            self.take()
            return Const(t.col, "str", False, t.value)
        if self.at("op", "-"):
            self.take()
            if not self.at("num"):
                raise ConditionError(f"column {t.col}: '-' goes only before a number")
            return Const(t.col, "num", False, -self.take().value)
        if self.at("op", "("):
            return self.parenthesised()
        if t.kind == "name":
            return self.name()
        raise self.fail("a field, a number, a string or '('")

    def parenthesised(self) -> Node:
        open_ = self.take()
        if self.at("op", ")"):
            raise ConditionError(f"column {open_.col}: empty parentheses")
        first = self.expr()
        if self.at("op", ")"):
            self.take()
            return first
        if not self.at("op", ","):
            raise self.fail("',' or ')'")
        items = [first]
        while self.at("op", ","):
            self.take()
            if self.at("op", ")"):
                break
            items.append(self.expr())
        if not self.at("op", ")"):
            raise self.fail("',' or ')' closing the tuple")
        self.take()
        return _tuple(open_.col, items)

    def name(self) -> Node:
        t = self.take()
        word = t.text
        if word == "true" or word == "false":
            return Const(t.col, "bool", False, word == "true")
        if word == "null":
            return Const(t.col, "null", True, None)
        if word in KEYWORDS:
            raise ConditionError(f"column {t.col}: '{word}' needs something before it")
        f = self.fields.field(word)

        def unknown() -> ConditionError:
            known = self.fields.field_names()
            return ConditionError(f"column {t.col}: unknown field {word!r}{_suggest(word, known)}")
        try:
            call = self.at("op", "(")
        except ConditionError:
            if f is None:  # the unknown name comes first in reading order
                raise unknown() from None
            raise
        if call:
            raise ConditionError(f"column {t.col}: {word}(...): conditions have no function calls")
        if f is None:
            raise unknown()
        return Name(t.col, f.type, f.nullable, word)


def _suggest(word: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, known, n=1)
    if close:
        return f"; did you mean {close[0]}?"
    return f"; known: {', '.join(known)}"


def _describe(node: Node) -> str:
    if isinstance(node, Name):
        return f"{node.name} ({_TYPE_WORDS[node.type]})"
    return _TYPE_WORDS[node.type]


def _need_bool(node: Node) -> Node:
    if node.type == "bool":
        return node
    if isinstance(node, Name):
        example = f'{node.name} == "..."' if node.type == "str" else f"{node.name} > 512"
        raise ConditionError(
            f"column {node.col}: {node.name} is {_TYPE_WORDS[node.type]}, not a condition; "
            f"compare it, e.g. {example}"
        )
    raise ConditionError(f"column {node.col}: {_describe(node)} is not a condition")


def _compare(op: str, left: Node, right: Node, col: int) -> Node:
    for side in (left, right):
        if side.type == "tuple":
            raise ConditionError(f"column {side.col}: a tuple only goes after 'in'")
    if left.type == "null" or right.type == "null":
        if op not in ("==", "!="):
            raise ConditionError(f"column {col}: null compares only with == or !=")
        return Compare(col, "bool", False, op, left, right)
    if left.type != right.type:
        raise ConditionError(f"column {col}: cannot compare {_describe(left)} with {_describe(right)}")
    if op not in ("==", "!=") and left.type != "num":
        raise ConditionError(f"column {col}: {op} needs numbers, not {_describe(left)}")
    return Compare(col, "bool", False, op, left, right)


def _tuple(col: int, items: list[Node]) -> Tuple:
    consts = []
    for item in items:
        if not isinstance(item, Const) or item.type == "null":
            raise ConditionError(f"column {item.col}: a tuple holds numbers or strings only")
        consts.append(item)
    types = {c.type for c in consts}
    if len(types) > 1:
        raise ConditionError(f"column {col}: a tuple mixes numbers and strings")
    return Tuple(col, "tuple", False, tuple(consts), types.pop())


def _membership(op: str, left: Node, right: Node, col: int) -> Node:
    if not isinstance(right, Tuple):
        raise ConditionError(f"column {right.col}: '{op}' needs a tuple such as (77, 128)")
    if left.type != right.item_type:
        raise ConditionError(
            f"column {col}: {_describe(left)} is never in a tuple of {_PLURALS[right.item_type]}"
        )
    return Compare(col, "bool", False, op, left, right)


# ---------------------------------------------------------------- compiling


_FUNCS = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt,
    "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}
_MIRROR = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def compile_node(node: Node, fields: Fields) -> Getter:
    """Closures over the event; null makes every comparison false but `== null`."""
    if isinstance(node, Const):
        value = node.value
        return lambda e: value
    if isinstance(node, Name):
        f = fields.field(node.name)
        if f is None:
            raise ConditionError(f"column {node.col}: this session has no field {node.name!r}")
        return f.get
    if isinstance(node, Not):
        inner = compile_node(node.operand, fields)
        return lambda e: not inner(e)
    if isinstance(node, Bool):
        parts = [compile_node(n, fields) for n in node.operands]
        out = parts[0]
        for nxt in parts[1:]:
            out = _and(out, nxt) if node.op == "and" else _or(out, nxt)
        return out
    assert isinstance(node, Compare)
    if node.op in ("in", "not in"):
        return _compile_in(node, fields)
    return _compile_compare(node, fields)


def _and(a: Getter, b: Getter) -> Getter:
    return lambda e: a(e) and b(e)


def _or(a: Getter, b: Getter) -> Getter:
    return lambda e: a(e) or b(e)


def _compile_in(node: Compare, fields: Fields) -> Getter:
    assert isinstance(node.right, Tuple)
    values = frozenset(c.value for c in node.right.items)
    get = compile_node(node.left, fields)
    if node.op == "in":
        return lambda e: get(e) in values
    if node.left.nullable:
        def not_in(e: DispatchEvent) -> bool:
            v = get(e)
            return v is not None and v not in values
        return not_in
    return lambda e: get(e) not in values


def _compile_compare(node: Compare, fields: Fields) -> Getter:
    op, left, right = node.op, node.left, node.right
    if isinstance(left, Const) and not isinstance(right, Const):
        op, left, right = _MIRROR[op], right, left
    if isinstance(left, Const) and isinstance(right, Const):
        outcome = _constant_compare(op, left.value, right.value)
        return lambda e: outcome
    if isinstance(right, Const):
        get = compile_node(left, fields)
        c = right.value
        if c is None:
            return (lambda e: get(e) is None) if op == "==" else (lambda e: get(e) is not None)
        fn = _FUNCS[op]
        if not left.nullable:
            return lambda e: fn(get(e), c)

        def against_const(e: DispatchEvent) -> bool:
            v = get(e)
            return v is not None and fn(v, c)
        return against_const
    lget, rget, fn = compile_node(left, fields), compile_node(right, fields), _FUNCS[op]

    def fields_compared(e: DispatchEvent) -> bool:
        a, b = lget(e), rget(e)
        return a is not None and b is not None and fn(a, b)
    return fields_compared


def _constant_compare(op: str, a: Any, b: Any) -> bool:
    if a is None or b is None:
        same = a is None and b is None
        return same if op == "==" else not same
    return bool(_FUNCS[op](a, b))


def parse_tree(text: str, fields: Fields) -> Node:
    """Parse and type-check; the tree's `Name`s are all fields of `fields`."""
    return _Parser(text, fields).parse()


def site_restriction(node: Node) -> frozenset[str] | None:
    """Sites outside which the condition is surely false, or None when it may hold anywhere.

    Only `site == "x"` and `site in (...)` conjuncts count; it lets a scan visit one site's
    events instead of all.
    """
    if isinstance(node, Compare) and isinstance(node.left, Name) and node.left.name == "site":
        if node.op == "==" and isinstance(node.right, Const):
            return frozenset({node.right.value})
        if node.op == "in" and isinstance(node.right, Tuple):
            return frozenset(c.value for c in node.right.items)
    if isinstance(node, Compare) and isinstance(node.right, Name) and node.right.name == "site":
        if node.op == "==" and isinstance(node.left, Const):
            return frozenset({node.left.value})
    if isinstance(node, Bool):
        parts = [site_restriction(n) for n in node.operands]
        if node.op == "and":
            known = [p for p in parts if p is not None]
            return frozenset.intersection(*known) if known else None
        if all(p is not None for p in parts):
            return frozenset().union(*parts)
    return None
