"""What keys typed outside the shape entry do to the shape: a shape is typed from anywhere.

A user types `B=37` on the table, or, with `B=37` entered, goes on with ` S=200`: the keys
that start a shape or go on with the one entered belong to the entry, whatever they mean
elsewhere (a digit picks a tab, `s` hides the site list). Decided here on text alone, so the
rule is the same wherever the keys are caught.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

SHAPE_OPENERS = ("(", "[")
"""A whole key starts with one of these."""

_ASSIGNED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*=")
"""A size given in a shape's text."""


def starts_shape(char: str, names: Sequence[str]) -> bool:
    return char in SHAPE_OPENERS or any(name.startswith(char) for name in names)


def goes_on(typed: str, names: Sequence[str]) -> bool:
    """Whether `typed` (a key held back, and the next) is the start of a size's name, or a
    whole name and its `=`: the held key was the first of a shape, not a command."""
    return any(name.startswith(typed) or typed == name + "=" for name in names)


def continued(text: str, typed: str, names: Sequence[str]) -> str:
    """The entry's text once `typed` (the first keys of a size or a key) arrives from
    outside it: the entered shape goes on with a size it does not give yet (`B=37`, then
    `S`: `B=37 S`); a size it gives already, or anything else, starts a new shape (a whole
    shape typed over the last one replaces it)."""
    current = text.strip()
    if not current or current.startswith(SHAPE_OPENERS) or typed.startswith(SHAPE_OPENERS):
        return typed
    given = set(_ASSIGNED.findall(current))
    whole = typed.endswith("=")  # `S=`: a held key and the one after it (goes_on)
    maybe = [n for n in names if n == typed[:-1]] if whole else [n for n in names if n.startswith(typed)]
    if maybe and not given.intersection(maybe):
        return f"{current} {typed}"
    return typed
