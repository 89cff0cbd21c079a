"""The checks every field of a session file passes before it becomes part of a session.

Every field is checked for type and size, with the path of the offending field in the
error, and names may not hold control characters, so a hostile file is either refused in
one line or shown as the plain text it is.

A recording holds up to millions of dispatch events, so the file stores them as columns
of small integers and the reader checks a column at a time with whole-list checks that
run in C; the per-value checks only run to name the first bad value once a column is
known to hold one.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Any

from kinspect.core.errors import SessionError, echo
from kinspect.core.session.format.columns import Bools, Column, Nullable, highest, lowest
from kinspect.core.session.format.key_table import KeyTable, key_column
from kinspect.core.session.model import Site
from kinspect.core.dispatch.shapes import MAX_RANK, MAX_SIZE, MAX_TENSORS, Key

MAX_NAME = 256
MAX_TEXT = 64 * 1024
MAX_SOURCE = 4 * 1024 * 1024
MAX_WRAPPER = 16 * 1024 * 1024
MAX_RANKS = 1 << 20
"""Ranks of a distributed job (a tensor's rank is MAX_RANK)."""

_CONTROL = {chr(c) for c in range(32)} | {chr(c) for c in range(0x7F, 0xA0)}
"""C0, DEL and C1: ESC and CSI (U+009B) start terminal escape sequences."""
SOURCE_CONTROLS = {"\n", "\t", "\r"}


def failure(path: str, what: str) -> SessionError:
    return SessionError(f"{path}: {what}")


def an_object(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise failure(path, f"expected an object, got {kind_of(value)}")
    return value


def a_list(value: Any, path: str, limit: int | None = None) -> list[Any]:
    if not isinstance(value, list):
        raise failure(path, f"expected a list, got {kind_of(value)}")
    if limit is not None and len(value) > limit:
        raise failure(path, f"more than {limit} entries")
    return value


def kind_of(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


def a_string(value: Any, path: str, limit: int = MAX_NAME, allow: set[str] = frozenset()) -> str:
    if not isinstance(value, str):
        raise failure(path, f"expected a string, got {kind_of(value)}")
    if len(value) > limit:
        raise failure(path, f"string longer than {limit} characters ({len(value)})")
    bad = (set(value) & _CONTROL) - allow
    if bad:
        raise failure(path, f"string holds control character {min(bad)!r}")
    return value


def a_string_or_null(value: Any, path: str, limit: int = MAX_NAME, allow: set[str] = frozenset()) -> str | None:
    return None if value is None else a_string(value, path, limit, allow)


def an_int(value: Any, path: str, lo: int = 0, hi: int = MAX_SIZE) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise failure(path, f"expected an integer, got {kind_of(value)}")
    if not lo <= value <= hi:
        raise failure(path, f"integer {echo(value)} outside {lo}..{hi}")
    return value


def an_int_or_null(value: Any, path: str, lo: int = 0, hi: int = MAX_SIZE) -> int | None:
    return None if value is None else an_int(value, path, lo, hi)


def a_number(value: Any, path: str) -> float | None:
    """A time, throughput or peak, or null: finite and not negative. Python's json reads
    `NaN` and `Infinity`, which no JSON reader downstream (a Perfetto trace, `--json`)
    takes and which would poison every ratio they enter."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise failure(path, f"expected a number, got {kind_of(value)}")
    if isinstance(value, int) and value.bit_length() > 1000:
        raise failure(path, f"number {echo(value)} too large")
    value = float(value)
    if not 0 <= value < math.inf:
        raise failure(path, f"expected a finite number of at least 0, got {value}")
    return value


def a_bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise failure(path, f"expected true or false, got {kind_of(value)}")
    return value


def key_to_json(key: Key | None) -> Any:
    """A key as JSON: a list per tensor of its sizes (null: no key)."""
    return None if key is None else [list(t) for t in key]


def a_key(value: Any, path: str) -> Key:
    if type(value) is list and len(value) <= MAX_TENSORS and all(
        type(t) is list and len(t) <= MAX_RANK and all(type(x) is int and 0 <= x <= MAX_SIZE for x in t) for t in value
    ):
        return tuple(map(tuple, value))
    tensors = a_list(value, path, MAX_TENSORS)
    return tuple(
        tuple(an_int(s, f"{path}[{i}][{j}]") for j, s in enumerate(a_list(t, f"{path}[{i}]", MAX_RANK)))
        for i, t in enumerate(tensors)
    )


def a_key_table(value: Any, path: str) -> list[Key]:
    """A list of keys (a million, in a long recording); `a_key` names the first bad entry
    when there is one."""
    if isinstance(value, KeyTable):
        return value
    table = a_list(value, path)
    keys = key_column(table)
    return keys if keys is not None else [a_key(k, f"{path}[{i}]") for i, k in enumerate(table)]


def size_maps(value: Any, path: str, limit: int, name_limit: int = MAX_NAME) -> list[dict[str, int]]:
    """A list of `{name: size}` maps (a workload of a million steps), checked as whole
    lists first, then one at a time to name the first bad entry."""
    steps = a_list(value, path, limit)
    if set(map(type, steps)) <= {dict}:
        names = set().union(*steps)
        sizes = list(chain.from_iterable(map(dict.values, steps)))
        if (all(type(n) is str and len(n) <= name_limit and not set(n) & _CONTROL for n in names)
                and set(map(type, sizes)) <= {int} and (not sizes or (min(sizes) >= 0 and max(sizes) <= MAX_SIZE))):
            return steps
    return [{a_string(k, f"{path}[{i}] key", name_limit): an_int(v, f"{path}[{i}].{k}") for k, v in an_object(step, f"{path}[{i}]").items()}
            for i, step in enumerate(steps)]


def a_scalar_map(value: Any, path: str) -> dict[str, Any]:
    """Config-like maps: string keys, JSON scalars or lists of scalars as values."""
    out: dict[str, Any] = {}
    for k, v in an_object(value, path).items():
        a_string(k, f"{path} key")
        p = f"{path}.{k}"
        if isinstance(v, str):
            out[k] = a_string(v, p, MAX_TEXT)
        elif v is None or isinstance(v, (bool, int)) or isinstance(v, float) and math.isfinite(v):
            out[k] = v
        elif isinstance(v, list) and len(v) <= 256 and all(
            x is None or isinstance(x, (bool, int)) or isinstance(x, float) and math.isfinite(x) for x in v
        ):
            out[k] = list(v)
        elif isinstance(v, list) and len(v) <= 256 and all(isinstance(x, str) for x in v):
            out[k] = [a_string(x, p, MAX_NAME) for x in v]
        else:
            got = f"the number {v}" if isinstance(v, float) else kind_of(v)
            raise failure(p, f"expected a finite number, string, boolean or a short list of them, got {got}")
    return out


def string_column(col: list[Any], limit: int = MAX_NAME, nullable: bool = False) -> list[Any] | None:
    """A column that `a_string` (or `a_string_or_null`) passes value by value, else None.
    Each distinct string is looked at once: a big table repeats a few names."""
    types = set(map(type, col))
    if nullable:
        types.discard(type(None))
    if not types <= {str}:
        return None
    distinct = set(col)
    distinct.discard(None)
    if max(map(len, distinct), default=0) > limit or set().union(*distinct) & _CONTROL:
        return None
    return col


def int_values(col: list[Any], lo: int = 0, hi: int = MAX_SIZE) -> list[Any] | None:
    """A column that `an_int` passes value by value, else None."""
    if not set(map(type, col)) <= {int} or (col and (min(col) < lo or max(col) > hi)):
        return None
    return col


def bool_values(col: list[Any]) -> list[Any] | None:
    """A column that `a_bool` passes value by value, else None."""
    return col if set(map(type, col)) <= {bool} else None


def number_values(col: list[Any]) -> list[Any] | None:
    """A column that `a_number` passes value by value, as it reads them (integers become
    floats), else None."""
    types = set(map(type, col))
    if not types <= {float, int, type(None)}:
        return None
    if int in types:
        ints = [x for x in col if type(x) is int]
        if min(ints) < 0 or max(ints).bit_length() > 1000:
            return None
        col = [float(x) if type(x) is int else x for x in col]
    values = [x for x in col if x is not None] if type(None) in types else col
    if values and (min(values) < 0 or max(values) == math.inf or any(map(math.isnan, values))):
        return None
    return col


def a_column(value: Any, path: str) -> Column:
    """A column as the file holds it: a list, or read compactly (`columns`)."""
    if isinstance(value, (array, Bools, Nullable)):
        return value
    return a_list(value, path)


def int_column(col: Column, path: str, hi: int, nullable: bool = False) -> Sequence[int]:
    """Check a column of integers in 0..hi; returns its non-null values."""
    if isinstance(col, array):
        types, values = {int}, col
    elif isinstance(col, Nullable):
        values = col.non_null()
        types = {int} if len(values) == len(col) else {int, type(None)}
    else:
        types, values = set(map(type, col)), col
    if nullable and type(None) in types:
        types.discard(type(None))
        if not isinstance(col, Nullable):
            values = [x for x in col if x is not None]
    if not (types <= {int} and (not len(values) or (0 <= lowest(values) and highest(values) <= hi))):
        check = an_int_or_null if nullable else an_int
        for i, x in enumerate(col):  # raises at the first bad value
            check(x, f"{path}[{i}]", 0, hi)
    return values


def ref_column(col: Column, path: str, what: str, table: str, size: int) -> None:
    """Check a column of indices into a table of `size` entries."""
    int_column(col, path, MAX_SIZE)
    if len(col) and highest(col) >= size:
        i = next(i for i, x in enumerate(col) if x >= size)
        raise failure(f"{path}[{i}]", f"no {what} {col[i]} ({table} has {size})")


def variant_column(col: Column, path: str, site: Sequence[int], sites: Sequence[Site], counts: list[int],
                    what: str = "variant", hi: int = 255, nullable: bool = True) -> None:
    """Variant (or call site) indices, each below its own event's site's count."""
    values = int_column(col, path, hi, nullable=nullable)
    if not len(values) or highest(values) < min(counts):
        return
    for i, (v, s) in enumerate(zip(col, site)):
        if v is not None and v >= counts[s]:
            raise failure(f"{path}[{i}]", f"{what} {v} out of range for {sites[s].name} ({counts[s]} {what}s)")
