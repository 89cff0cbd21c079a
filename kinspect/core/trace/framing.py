"""The framing of a TORCH_TRACE log: one entry per `trace_structured` call.

torch's trace handler writes each entry as a glog-style prefix and its JSON metadata on
one line, then the payload (if any) one line each, every payload line indented by a tab:

    V1204 17:13:38.452000 13463 torch/fx/experimental/symbolic_shapes.py:5754] {"create_symbol": {...}, "frame_id": 0, ...}
    V1204 17:13:49.517000 13463 torch/_inductor/graph.py:2745] {"inductor_output_code": {...}, ..., "has_payload": "<md5>"}
    \t# AOT ID: ['0_inference']
    \tfrom ctypes import c_void_p, c_long, c_int

The metadata's first key names the entry's kind; `frame_id`, `frame_compile_id`,
`attempt` and `compiled_autograd_id` say which compile it belongs to; `has_payload` is
the payload's md5. Traces are large (hundreds of MB, mostly payloads kinspect does not
read), so the reader streams the file as bytes, decodes the metadata only of the kinds
asked for and keeps only their payloads, checked against their digest: a payload cut
short (a killed process) or damaged is said, never read as if whole.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

MAX_LINE = 64 * 1024 * 1024
"""Longer lines are skipped, a note says so: torch writes payloads line by line."""
MAX_PAYLOAD = 256 * 1024 * 1024
"""A kept payload beyond this is dropped with a note (a wrapper module is a few MB)."""

_PREFIX = re.compile(rb"^(?:\[rank\d+\]:)?[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d+ +(?P<pid>\d+) [^\]\n]*\](?: \[[^\]\n]*\])* \{")


@dataclass(frozen=True)
class Entry:
    kind: str
    metadata: dict[str, object]
    """The entry's whole JSON record (the kind's own metadata under `kind`)."""
    payload: str | None
    line: int
    """The line of its prefix (1-based)."""
    pid: int

    @property
    def data(self) -> dict[str, object]:
        """The kind's own metadata (`{"symbol": "s77", ...}` of a `create_symbol`)."""
        value = self.metadata.get(self.kind)
        return value if isinstance(value, dict) else {}


@dataclass
class Reading:
    """What reading one log met besides its entries, for the notes a session shows."""

    garbage: int = 0
    """Lines that are neither an entry nor a payload line."""
    long_lines: int = 0
    damaged: list[str] = field(default_factory=list)
    """Entries whose payload did not match its digest, in words."""
    cut_short: str | None = None
    """Set when the log ends inside an entry's payload."""


def entries(stream: BinaryIO, kinds: Collection[str], reading: Reading) -> Iterator[Entry]:
    """The entries of the kinds asked for, in file order, streamed from `stream`."""
    current: _Open | None = None
    n = 0
    for raw in _lines(stream, reading):
        n += 1
        if raw[:1] == b"\t":
            if current is not None:  # else a payload of a kind not asked for
                current.add(raw)
            continue
        if current is not None:
            done = current.close(reading, last=False)
            if done is not None:
                yield done
            current = None
        m = _PREFIX.match(raw)
        if m is None:
            if raw.strip():
                reading.garbage += 1
            continue
        kind = _kind(raw, m.end())
        if kind not in kinds:
            continue
        try:
            record = json.loads(raw[m.end() - 1:])
        except (ValueError, RecursionError):
            reading.garbage += 1
            continue
        if not isinstance(record, dict) or not record:
            reading.garbage += 1
            continue
        digest = record.get("has_payload")
        current = _Open(str(kind), record, n, int(m["pid"]), digest if isinstance(digest, str) else None)
        if current.digest is None:
            yield current.entry(None)
            current = None
    if current is not None:
        done = current.close(reading, last=True)
        if done is not None:
            yield done


def _kind(raw: bytes, start: int) -> str | None:
    """The first key of the record, read without decoding the line (most entries are of
    kinds nobody asked for: chromium events, tensor descriptions)."""
    if raw[start:start + 1] != b'"':
        return None
    end = raw.find(b'"', start + 1)
    if end < 0 or end - start > 64:
        return None
    try:
        return raw[start + 1:end].decode("ascii")
    except UnicodeDecodeError:
        return None


def _lines(stream: BinaryIO, reading: Reading) -> Iterator[bytes]:
    """The stream's lines without their newline; a line longer than MAX_LINE is skipped
    whole (read in pieces, never held)."""
    while True:
        raw = stream.readline(MAX_LINE)
        if not raw:
            return
        if len(raw) == MAX_LINE and not raw.endswith(b"\n"):
            reading.long_lines += 1
            while True:
                more = stream.readline(MAX_LINE)
                if not more or more.endswith(b"\n"):
                    break
            continue
        yield raw[:-1] if raw.endswith(b"\n") else raw


class _Open:
    """An entry whose payload lines are still being read."""

    def __init__(self, kind: str, record: dict[str, object], line: int, pid: int, digest: str | None) -> None:
        self.kind, self.record, self.line, self.pid, self.digest = kind, record, line, pid, digest
        self.parts: list[bytes] = []
        self.size = 0
        self.dropped = False

    def add(self, raw: bytes) -> None:
        if self.dropped:
            return
        self.size += len(raw)
        if self.size > MAX_PAYLOAD:
            self.dropped, self.parts = True, []
            return
        self.parts.append(raw[1:])

    def entry(self, payload: str | None) -> Entry:
        return Entry(self.kind, self.record, payload, self.line, self.pid)

    def close(self, reading: Reading, last: bool) -> Entry | None:
        where = f"the {self.kind} entry at line {self.line}"
        if self.dropped:
            reading.damaged.append(f"{where}: its payload is over {MAX_PAYLOAD // 2**20} MiB, not read")
            return self.entry(None)
        data = b"\n".join(self.parts)
        if hashlib.md5(data, usedforsecurity=False).hexdigest() != self.digest:
            if last:
                reading.cut_short = f"the log ends inside {where} (its payload is cut short)"
            else:
                reading.damaged.append(f"{where}: its payload does not match its digest")
            return self.entry(None)
        return self.entry(data.decode("utf-8", "replace"))
