"""Which lines of a wrapper run a size-hint multi-kernel, and through which nested compile
regions: a call site is told by the line that runs it, or, inside a region (a repeated
layer compiled once), by each line that calls the region.
"""

from __future__ import annotations

import re
from collections.abc import Sequence


def call_lines(code: str | None, name: str) -> list[tuple[int, str]]:
    """(line number, text) of each wrapper line that runs multi-kernel `name`, in order."""
    if not code:
        return []
    pattern = re.compile(rf"^\s*{re.escape(name)}\.run\(")
    return [(i, text.strip()) for i, text in enumerate(code.splitlines(), 1) if pattern.match(text)]


_FUNCTION = re.compile(r"^def (?P<name>[A-Za-z_][A-Za-z0-9_]*)\(")


def region_of(lines: Sequence[str], lineno: int) -> str | None:
    """The nested compile region whose function holds this wrapper line (1-based), or None:
    a top-level `def` of the wrapper that the graph's code calls as `NAME(NAME_args)`."""
    for text in reversed(lines[:lineno - 1]):
        if text and not text[0].isspace():
            m = _FUNCTION.match(text)
            if m is None:
                return None
            return m["name"] if region_calls(lines, m["name"]) else None
    return None


def region_calls(lines: Sequence[str], region: str) -> list[tuple[int, str]]:
    """(line number, text) of each wrapper line that calls the region's function, in order."""
    pattern = re.compile(rf"^\s+.*\b{re.escape(region)}\({re.escape(region)}_args\)")
    return [(i, text.strip()) for i, text in enumerate(lines, 1) if pattern.match(text)]


def dispatch_lines(code: str | None, name: str) -> tuple[list[tuple[int, str]], frozenset[str]]:
    """The wrapper lines that tell the call sites of multi-kernel `name` apart, each with
    the text of the line that runs it, and the region functions between them and the
    multi-kernel: a call made inside a region is told by the line that called the region
    (one per layer), not by the line inside it."""
    found = call_lines(code, name)
    if not found or code is None:
        return found, frozenset()
    lines = code.splitlines()
    out: list[tuple[int, str]] = []
    regions: set[str] = set()
    for n, text in found:
        region = region_of(lines, n)
        if region is None:
            out.append((n, text))
        else:
            regions.add(region)
            out += [(c, text) for c, _ in region_calls(lines, region)]
    return out, frozenset(regions)
