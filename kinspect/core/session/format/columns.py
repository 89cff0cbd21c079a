"""A session file's event columns, read a piece at a time into compact arrays.

A long recording's file is almost all event columns: millions of small integers, a few
bytes of text each. Parsed whole by `json.loads`, each becomes a Python int in a Python
list (some 36 bytes a value) while the whole text is held too: a 1 GiB session took
4.9 GB to open. Here the `events` section, laid out as kinspect writes it (a column per
line), is cut out of the document and each column is parsed `_PIECE` bytes at a time by
`json.loads` into an array of the smallest integer type that holds it (a nullable column
into an array and a mask, booleans into bytes). What a piece holds is exactly what
`json.loads` would have made of it; a column holding anything else (a string, a float,
a nested list) stays the list `json.loads` makes, so that the checks that follow name
its first bad value as they always did.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Iterator, Sequence
from itertools import repeat
from typing import Any, Union, overload

import numpy

_PIECE = 1 << 20
"""Bytes of a column parsed at a time."""
_SECTION = b'\n"events":{\n'
_COLUMN = re.compile(rb'"([a-z_]{1,16})":\[')
_TYPECODES = (("b", 1 << 7), ("h", 1 << 15), ("i", 1 << 31), ("q", 1 << 63))


class Bools(Sequence[bool]):
    """A column of booleans, a byte each."""

    __slots__ = ("data",)

    def __init__(self, data: bytearray) -> None:
        self.data = data

    def __len__(self) -> int:
        return len(self.data)

    @overload
    def __getitem__(self, i: int) -> bool: ...

    @overload
    def __getitem__(self, i: slice) -> list[bool]: ...

    def __getitem__(self, i: int | slice) -> bool | list[bool]:
        if isinstance(i, slice):
            return list(map(bool, self.data[i]))
        return bool(self.data[i])

    def __iter__(self) -> Iterator[bool]:
        return map(bool, self.data)


class Nullable(Sequence["int | None"]):
    """A column of integers and nulls: the integers in an array (0 where null), and a
    byte per value saying whether it is there."""

    __slots__ = ("values", "present")

    def __init__(self, values: array[int], present: bytearray) -> None:
        self.values, self.present = values, present

    def __len__(self) -> int:
        return len(self.values)

    @overload
    def __getitem__(self, i: int) -> int | None: ...

    @overload
    def __getitem__(self, i: slice) -> list[int | None]: ...

    def __getitem__(self, i: int | slice) -> int | None | list[int | None]:
        if isinstance(i, slice):
            return [v if p else None for v, p in zip(self.values[i], self.present[i])]
        return self.values[i] if self.present[i] else None

    def __setitem__(self, i: int, value: int | None) -> None:
        self.present[i] = value is not None
        self.values[i] = 0 if value is None else value

    def __iter__(self) -> Iterator[int | None]:
        if not any(self.present):
            return repeat(None, len(self.present))
        return (v if p else None for v, p in zip(self.values, self.present))

    def non_null(self) -> array[int]:
        """The values that are there, in order."""
        if all(self.present):
            return self.values
        return array(self.values.typecode, (v for v, p in zip(self.values, self.present) if p))


Column = Union[list[Any], "array[int]", Bools, Nullable]
"""What a column is read as: compact where its values allow."""


def cut_events(data: bytes) -> tuple[bytes, dict[str, Column] | None]:
    """The document with its `events` section emptied, and that section's columns read;
    (data, None) where the section is not laid out as kinspect writes it (a hand-made
    file), for `json.loads` to read whole as before."""
    start = data.find(_SECTION)
    if start < 0:
        return data, None
    pos = start + len(_SECTION)
    columns: dict[str, Column] = {}
    while True:
        m = _COLUMN.match(data, pos)
        end = data.find(b"\n", pos)
        if m is None or end < 0:
            return data, None
        body_end = end - 1 if data[end - 1:end] == b"," else end
        if data[body_end - 1:body_end] != b"]" or m.group(1).decode() in columns:
            return data, None
        columns[m.group(1).decode()] = column(data, m.end(), body_end - 1)
        pos = end + 1
        if data[body_end:end] != b",":
            break
    if data[pos:pos + 1] != b"}":
        return data, None
    return data[:start + 1] + b'"events":{}' + data[pos + 1:], columns


_KEYS = b'\n"keys":[\n'


def cut_keys(data: bytes) -> tuple[bytes, list[Any] | None]:
    """The document with its key table emptied, and the table read `_PIECE` bytes of
    lines at a time into keys (each distinct shape one tuple); (data, None) where the
    table is not laid out as kinspect writes it, a key a line, or holds a bad key, for
    `json.loads` and the checks to read whole and name it. A million keys of tiny
    tensors were lists of lists (some 200 bytes a key) held with the text until checked."""
    from kinspect.core.session.format.checks import KeyTable, key_column

    start = data.find(_KEYS)
    if start < 0:
        return data, None
    body = start + len(_KEYS)
    end = data.find(b"\n]", body - 1)
    if end < 0:
        return data, None
    table, pool = KeyTable(), {}
    pos = body
    while pos < end:
        cut = end if end - pos <= _PIECE else data.rfind(b",\n", pos, pos + _PIECE)
        if cut <= pos:
            return data, None
        try:
            keys = key_column(json.loads(b"[" + data[pos:cut] + b"]"), pool)
        except (ValueError, RecursionError):
            return data, None
        if keys is None:
            return data, None
        table += keys
        pos = cut + 2
    return data[:start + 1] + b'"keys":[]' + data[end + 2:], table


def column(data: bytes, start: int, end: int) -> Column:
    """The values of `data[start:end]` (the inside of a JSON list), compact where they
    allow: only integers, only booleans, or integers and nulls."""
    if any(data.find(c, start, end) >= 0 for c in (b"[", b"{", b'"')):
        return json.loads(data[start - 1:end + 1])  # a list of lists or strings: as json makes it
    out = _Joined()
    pos = start
    while pos < end:
        cut = end if end - pos <= _PIECE else data.rfind(b",", pos, pos + _PIECE)
        if cut <= pos:  # no comma in a whole piece: one huge number, as json reads it
            cut = end
        out.add(json.loads(b"[" + data[pos:cut] + b"]"))
        pos = cut + 1
    return out.done()


class Growing:
    """A column appended to a value at a time (a recording log's events, read a line at a
    time), made compact a batch at a time."""

    __slots__ = ("_batch", "_joined", "append")

    def __init__(self) -> None:
        self._batch: list[Any] = []
        self._joined = _Joined()
        self.append = self._batch.append

    def __len__(self) -> int:
        return self._joined.length + len(self._batch)

    def flush(self) -> None:
        """Make the values appended so far compact (call it every few thousand values)."""
        self._joined.add(self._batch)
        self._batch.clear()

    def done(self) -> Column:
        self.flush()
        return self._joined.done()

    def mapped(self, table: Sequence[int]) -> Column:
        """An integer column with each value `v` replaced by `table[v]`."""
        column = self.done()
        return _narrowest(array("q", map(table.__getitem__, column)))


class _Joined:
    """Pieces of one column (lists, as json reads them) joined into one as they come:
    an array while every value is an integer, with a mask while some are null, bytes
    while every value is a boolean, else a list, as json would have made it whole."""

    __slots__ = ("values", "present", "bools", "listed", "length")

    def __init__(self) -> None:
        self.values: array[int] | None = None
        self.present = bytearray()
        self.bools: bytearray | None = None
        self.listed: list[Any] | None = None
        self.length = 0

    def add(self, piece: list[Any]) -> None:
        if not piece:
            return
        self.length += len(piece)
        if self.listed is not None:
            self.listed += piece
            return
        types = set(map(type, piece))
        if types == {bool} and self.values is None:
            self.bools = (self.bools or bytearray()) + bytearray(piece)
            return
        present = [v for v in piece if v is not None] if type(None) in types else piece
        if types <= {int, type(None)} and self.bools is None and (
                not present or (-(1 << 63) <= min(present) and max(present) < 1 << 63)):
            code = _code(present)
            if self.values is None:
                self.values = array(code)
            elif "bhiq".index(code) > "bhiq".index(self.values.typecode):
                self.values = array(code, self.values)
            if len(present) == len(piece):
                self.values.extend(piece)
                self.present += b"\x01" * len(piece)
            elif not present:  # all null: the optional columns of most recordings
                self.values.extend(array(self.values.typecode, bytes(len(piece) * self.values.itemsize)))
                self.present += bytes(len(piece))
            else:
                self.values.extend([0 if v is None else v for v in piece])
                self.present += bytearray([v is not None for v in piece])
            return
        self.listed = self._as_list() + piece

    def _as_list(self) -> list[Any]:
        if self.bools is not None:
            return list(map(bool, self.bools))
        if self.values is None:
            return []
        return [v if p else None for v, p in zip(self.values, self.present)]

    def done(self) -> Column:
        if self.listed is not None:
            return self.listed
        if self.bools is not None:
            return Bools(self.bools)
        if self.values is None:
            return []
        return self.values if all(self.present) else Nullable(self.values, self.present)


def lowest(values: Sequence[int]) -> int:
    """The least of a column's values (of an array, in C)."""
    return int(numpy.frombuffer(values, values.typecode).min()) if isinstance(values, array) else min(values)


def highest(values: Sequence[int]) -> int:
    """The greatest of a column's values (of an array, in C)."""
    return int(numpy.frombuffer(values, values.typecode).max()) if isinstance(values, array) else max(values)


def _code(values: Sequence[int]) -> str:
    """The narrowest array typecode that holds every value."""
    if not len(values):
        return "b"
    lo, hi = lowest(values), highest(values)
    return next(c for c, bound in _TYPECODES if -bound <= lo and hi < bound)


def _narrowest(values: array[int]) -> array[int]:
    code = _code(values)
    return values if code == values.typecode else array(code, values)
