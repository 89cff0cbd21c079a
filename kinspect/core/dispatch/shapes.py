"""Shape keys and the text a user types to name a runtime shape.

Inductor keys every size-hint variant by a tuple of tensor sizes (template inputs, then
the output), so kinspect uses the same value type everywhere: a tuple of tuples of ints.
A user can name a runtime shape in two ways, and both must give precise errors because
the inspector re-parses on every keystroke and shows the message inline.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from kinspect.core.errors import ShapeError, echo

Key = tuple[tuple[int, ...], ...]

MAX_SIZE = 2**62
MAX_TENSORS = 64
"""Tensors in one key, as a session file holds it."""
MAX_RANK = 16
"""Dims of one tensor in a key."""
"""Largest size kinspect accepts; Inductor uses 2**62 as "no key" distance."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INT = re.compile(r"[+-]?[0-9][0-9_]*(\.[0-9]*)?([eE][+-]?[0-9]+)?")


def check_size(value: int, where: str = "") -> int:
    """Reject sizes Inductor could never see, with the position in the message."""
    at = f" {where}" if where else ""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ShapeError(f"size{at} must be an integer, got {echo(value)}")
    if value < 0:
        raise ShapeError(f"size{at} must not be negative, got {value}")
    if value > MAX_SIZE:
        raise ShapeError(f"size{at} exceeds 2**62, got {echo(value)}")
    return value


def as_key(value: object, what: str = "key") -> Key:
    """Validate a nested sequence of sizes and return it as a hashable key."""
    if not isinstance(value, (list, tuple)):
        raise ShapeError(f"{what} must be a list of tensor shapes")
    out = []
    for ti, shape in enumerate(value):
        if not isinstance(shape, (list, tuple)):
            raise ShapeError(f"{what}: tensor {ti} must be a list of sizes")
        out.append(tuple(check_size(s, f"at tensor {ti} dim {di}") for di, s in enumerate(shape)))
    return tuple(out)


def format_key(key: Key) -> str:
    """The same text Python prints for a tuple key, without the one-element comma noise."""
    def one(shape: tuple[int, ...]) -> str:
        return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"

    return "(" + ", ".join(one(s) for s in key) + ")"


def sizes_text(sizes: Mapping[str, object], sep: str = " ") -> str:
    """`B=1000 S=64`: named sizes as a user types them (and `parse_shape` reads back)."""
    return sep.join(f"{k}={v}" for k, v in sizes.items())


def sizes_or_key(sizes: Mapping[str, object], key: Key) -> str:
    """A shape by the user's sizes where they are known, else by the key Inductor sees."""
    return sizes_text(sizes) if sizes else format_key(key)


@dataclass(frozen=True)
class SymbolShape:
    """A runtime shape given as values of named symbols (`B=1000 S=77`)."""

    values: dict[str, int]


@dataclass(frozen=True)
class FullKey:
    """A runtime shape given as the whole key (`(1000,1024),(4096,1024)`)."""

    key: Key


ParsedShape = SymbolShape | FullKey


def parse_shape(text: str) -> ParsedShape:
    """Parse what a user typed; errors name the column and what was expected."""
    stripped = text.strip()
    if not stripped:
        raise ShapeError("empty shape: type symbol values like B=1000, or a key like (1000,1024),(4096,1024)")
    if stripped[0] in "([":
        return FullKey(_parse_full_key(text))
    return SymbolShape(_parse_assignments(text))


class _Cursor:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip_space()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def fail(self, expected: str) -> ShapeError:
        found = repr(self.text[self.pos]) if self.pos < len(self.text) else "end of input"
        return ShapeError(f"column {self.pos + 1}: expected {expected}, found {found}")

    def integer(self) -> int:
        self.skip_space()
        m = _INT.match(self.text, self.pos)
        if not m:
            raise self.fail("a size (non-negative integer)")
        token = m.group(0)
        col = self.pos + 1
        if m.group(1) or m.group(2):
            raise ShapeError(f"column {col}: size must be an integer, got {echo(token)}")
        digits = token.replace("_", "").lstrip("+-").lstrip("0")
        if len(digits) > len(str(MAX_SIZE)):  # before int(): Python refuses > 4300 digits
            problem = "must not be negative" if token.startswith("-") else "exceeds 2**62"
            raise ShapeError(f"column {col}: size {problem}, got {token[:24]}...")
        value = int(token.replace("_", ""))
        if value < 0:
            raise ShapeError(f"column {col}: size must not be negative, got {value}")
        if value > MAX_SIZE:
            raise ShapeError(f"column {col}: size exceeds 2**62, got {token}")
        self.pos = m.end()
        return value


def _parse_assignments(text: str) -> dict[str, int]:
    cur = _Cursor(text)
    values: dict[str, int] = {}
    while True:
        cur.skip_space()
        if cur.pos >= len(text):
            break
        m = _NAME.match(text, cur.pos)
        if not m:
            raise cur.fail("a symbol name")
        name = m.group(0)
        if name in values:
            raise ShapeError(f"column {cur.pos + 1}: symbol {name} given twice")
        cur.pos = m.end()
        if cur.peek() != "=":
            raise cur.fail(f"'=' after {name}")
        cur.pos += 1
        values[name] = cur.integer()
        if cur.peek() == ",":
            cur.pos += 1
    if not values:
        raise ShapeError("empty shape: type symbol values like B=1000")
    return values


def _parse_full_key(text: str) -> Key:
    cur = _Cursor(text)
    outer_close = None
    if cur.peek() in "([":
        # Either "((a,b),(c,))" wrapped, or "(a,b),(c,)" bare; look one token ahead.
        save = cur.pos
        cur.pos += 1
        if cur.peek() in "([":
            outer_close = ")" if text[save] == "(" else "]"
        else:
            cur.pos = save
    tensors: list[tuple[int, ...]] = []
    while True:
        ch = cur.peek()
        if ch not in ("(", "["):
            raise cur.fail("'(' opening a tensor shape")
        close = ")" if ch == "(" else "]"
        cur.pos += 1
        dims: list[int] = []
        while cur.peek() != close:
            if len(dims) == MAX_RANK:
                raise ShapeError(f"column {cur.pos + 1}: tensor {len(tensors)} has more than {MAX_RANK} dims")
            dims.append(cur.integer())
            nxt = cur.peek()
            if nxt == ",":
                cur.pos += 1
            elif nxt != close:
                raise cur.fail(f"',' or '{close}'")
        cur.pos += 1
        if len(tensors) == MAX_TENSORS:
            raise ShapeError(f"a key has at most {MAX_TENSORS} tensors")
        tensors.append(tuple(dims))
        nxt = cur.peek()
        if nxt == ",":
            cur.pos += 1
            after = cur.peek()
            if outer_close and after == outer_close:
                break
            if after == "" and not outer_close:
                break
            continue
        break
    if outer_close:
        if cur.peek() != outer_close:
            raise cur.fail(f"'{outer_close}' closing the key")
        cur.pos += 1
    if cur.peek() != "":
        raise cur.fail("end of input")
    return tuple(tensors)
