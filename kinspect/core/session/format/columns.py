"""A session file's event columns, read a piece at a time into compact arrays.

A long recording's file is almost all event columns: millions of small integers, a few
bytes of text each. Parsed whole by `json.loads`, each becomes a Python int in a Python
list (some 36 bytes a value) while the whole text is held too: a 1 GiB session took
4.9 GB to open. Here the file is read as a stream: what comes before the `events`
section and after it is kept as text for `json.loads`, and the section itself, laid out
as kinspect writes it (a column per line), is parsed `_PIECE` bytes at a time as it
streams past, each column into an array of the smallest integer type that holds it (a
nullable column into an array and a mask, booleans into bytes), so its text is never
held whole. What a piece holds is exactly what `json.loads` would have made of it; a
section holding anything else (a string, a float, a nested list, a line laid out
otherwise) is left for `json.loads` to read whole, so that the checks that follow name
its first bad value as they always did.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Iterator, Sequence
from itertools import repeat
from typing import Any, BinaryIO, Union, overload

import numpy

from kinspect.core.session.format.key_table import KeyTable, key_column

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


def read_events(stream: BinaryIO) -> tuple[bytes, dict[str, Column] | None] | None:
    """The document `stream` holds, with its `events` section emptied, and that section's
    columns; (the whole document, None) where it has no such section, for `json.loads` to
    read as before; None where the section is there but not laid out as kinspect writes it
    (a hand-made file), for the caller to read the file again whole."""
    head, found, rest = _through(stream, _SECTION)
    if not found:
        return head, None
    ahead = _Ahead(stream, rest)
    columns: dict[str, Column] = {}
    while True:
        ahead.want(_NAME_BYTES)
        m = _COLUMN.match(ahead.buf, ahead.pos)
        if m is None or m.group(1).decode() in columns:
            return None
        ahead.pos = m.end()
        read = _stream_column(ahead)
        if read is None:
            return None
        columns[m.group(1).decode()], more = read
        if not more:
            break
    ahead.want(1)
    if ahead.buf[ahead.pos:ahead.pos + 1] != b"}":
        return None
    tail = ahead.buf[ahead.pos + 1:]
    del ahead
    return head[:1 - len(_SECTION)] + b'"events":{}' + tail + stream.read(), columns


_LONGEST = 1 << 16
"""Bytes past which a column's value is not one kinspect wrote (read on, each piece would
copy all before it)."""
_NAME_BYTES = 24
"""Enough bytes to hold a column's name and its opening bracket."""


def _through(stream: BinaryIO, marker: bytes) -> tuple[bytes, bool, bytes]:
    """(the stream's bytes through the first `marker`, whether it was found, the bytes of
    the last piece read after it)."""
    pieces: list[bytes] = []
    tail = b""
    while piece := stream.read(_PIECE):
        window = tail + piece
        at = window.find(marker)
        if at >= 0:
            cut = at + len(marker) - len(tail)
            pieces.append(piece[:cut])
            return b"".join(pieces), True, piece[cut:]
        pieces.append(piece)
        tail = window[1 - len(marker):]
    return b"".join(pieces), False, b""


class _Ahead:
    """A stream read a piece at a time: `buf[pos:]` is what has been read and not yet used."""

    __slots__ = ("stream", "buf", "pos")

    def __init__(self, stream: BinaryIO, first: bytes) -> None:
        self.stream, self.buf, self.pos = stream, first, 0

    def more(self) -> bool:
        """Read the next piece; False at the stream's end."""
        piece = self.stream.read(_PIECE)
        if not piece:
            return False
        self.buf = self.buf[self.pos:] + piece
        self.pos = 0
        return True

    def want(self, n: int) -> None:
        """Read on until `n` bytes are unused, or the stream ends."""
        while len(self.buf) - self.pos < n and self.more():
            pass


def _stream_column(ahead: _Ahead) -> tuple[Column, bool] | None:
    """One column's values, read up to its line's end, and whether another column follows
    (the line ends in a comma); None where the line is not a list of plain values."""
    out = _Joined()
    while True:
        buf, pos = ahead.buf, ahead.pos
        end = buf.find(b"\n", pos)
        if end >= 0:
            body_end = end - 1 if buf[end - 1:end] == b"," else end
            if body_end <= pos or buf[body_end - 1:body_end] != b"]" or not _add(out, buf, pos, body_end - 1):
                return None
            ahead.pos = end + 1
            return out.done(), body_end < end
        # the values up to the last comma, less the column's closing `],` (kept for its line's
        # end); no comma in a whole piece: one huge number, read on to its end
        cut = buf.rfind(b",", pos, len(buf) - 2)
        if cut > pos:
            if not _add(out, buf, pos, cut):
                return None
            ahead.pos = cut + 1
        elif len(buf) - pos > _LONGEST:
            return None  # a value no column of kinspect's holds: json reads the file and says so
        if not ahead.more():
            return None


def _add(out: _Joined, buf: bytes, start: int, end: int) -> bool:
    """Add `buf[start:end]`, values and commas, to `out`; False where they are not plain
    numbers, booleans and nulls that json reads."""
    if start >= end:
        return True
    piece = buf[start:end]
    if any(c in piece for c in (b"[", b"]", b"{", b'"')):
        return False
    try:
        out.add(json.loads(b"[" + piece + b"]"))
    except (ValueError, RecursionError):
        return False
    return True


_KEYS = b'\n"keys":[\n'


def cut_keys(data: bytes) -> tuple[bytes, list[Any] | None]:
    """The document with its key table emptied, and the table read `_PIECE` bytes of
    lines at a time into keys (each distinct shape one tuple); (data, None) where the
    table is not laid out as kinspect writes it, a key a line, or holds a bad key, for
    `json.loads` and the checks to read whole and name it. A million keys of tiny
    tensors were lists of lists (some 200 bytes a key) held with the text until checked."""
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
        return array(_code(table), map(table.__getitem__, column))


class _Joined:
    """Pieces of one column (lists, as json reads them) joined into one as they come:
    an array while every value is an integer, with a mask once some are null (none
    while all are there: a byte a value less for the columns that never are), bytes
    while every value is a boolean, else a list, as json would have made it whole."""

    __slots__ = ("values", "present", "bools", "listed", "length")

    def __init__(self) -> None:
        self.values: array[int] | None = None
        self.present: bytearray | None = None
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
            if self.bools is None:
                self.bools = bytearray()
            self.bools += bytearray(piece)
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
                if self.present is not None:
                    self.present += b"\x01" * len(piece)
                return
            if self.present is None:
                self.present = bytearray(b"\x01" * len(self.values))
            if not present:  # all null: the optional columns of most recordings
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
        if self.present is None:
            return list(self.values)
        return [v if p else None for v, p in zip(self.values, self.present)]

    def done(self) -> Column:
        if self.listed is not None:
            return self.listed
        if self.bools is not None:
            return Bools(self.bools)
        if self.values is None:
            return []
        if self.present is None or all(self.present):
            return self.values
        return Nullable(self.values, self.present)


def counting(n: int) -> array[int]:
    """0, 1, ... n - 1, in the narrowest array that holds them (a log's `seq`)."""
    return array(_code((0, n - 1)) if n else "b", range(n))


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
