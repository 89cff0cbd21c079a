"""The recording log written while a live model runs: crash-safe and cheap per event.

A dispatch on a cache hit costs Inductor a few microseconds, so a log that formats a JSON
object and makes a system call per event would change what it observes. Instead the log
file is memory-mapped: writing a record is a copy into the page cache, which the kernel
keeps (and writes back) even if the process is killed with SIGKILL, so a kill loses at
most the record being copied. Event records are short JSON arrays whose constant part
(site, key, pick) is formatted once per key; only the timestamp and step are formatted
per event. On close the file is cut to its written length; a killed recording leaves NUL
padding after the last record, which the reader strips (sessionio.load).

Records (one JSON value per line):
    {"type": "header", ...}            session environment and model (see sessionio)
    {"type": "runtime_site", "index": I, "name": N}   a site's first appearance at run time
    {"type": "key", "id": K, "key": [[...]]}          first sight of a runtime key
    {"type": "step", "step": N}        the workload step the following events belong to
    ["e", site, K, picked, predicted, hit, override, t_ns]   one dispatch
    {"type": "site"|"graph"|"symbols"|"measurement"|"finding", ...}
    {"type": "end"}                    written by a clean close
"""

from __future__ import annotations

import json
import mmap
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from kinspect.core.session import Finding, Graph, Measurement, Session, Site, SymbolInfo
from kinspect.core.sessionio import (
    finding_json,
    graph_json,
    log_header,
    measurement_json,
    site_json,
    symbol_json,
)
from kinspect.core.shapes import Key

_CHUNK = 8 << 20


class LiveLog:
    def __init__(self, path: str | os.PathLike[str], session: Session) -> None:
        self.path = Path(path)
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self._size = _CHUNK
        os.ftruncate(self._fd, self._size)
        self._mm = mmap.mmap(self._fd, self._size)
        self._key_ids: dict[Key, int] = {}
        self._key_lines: dict[Key, bytes] = {}
        """Key -> its record with `%d` where the id goes, formatted before it is met."""
        self._lines: dict[int, bytes] = {}
        """Combo id -> its event line with `%d` where the timestamp goes."""
        self.record(log_header(session))

    def _write(self, data: bytes) -> None:
        try:
            self._mm.write(data)
        except ValueError:
            self._grow_and_write(data)

    def _grow_and_write(self, data: bytes) -> None:
        """The mapping is full: grow the file and the mapping, then write."""
        pos = self._mm.tell()
        while pos + len(data) > self._size:
            self._size += _CHUNK
        os.ftruncate(self._fd, self._size)
        self._mm.resize(self._size)
        self._mm.seek(pos)
        self._mm.write(data)

    def record(self, obj: Any) -> None:
        """Write any JSON record (sites, findings, measurements: the rare ones)."""
        self._write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")

    def symbols(self, symbols: Iterable[SymbolInfo]) -> None:
        self.record({"type": "symbols", "symbols": [symbol_json(s) for s in symbols]})

    def graph(self, g: Graph) -> None:
        self.record({"type": "graph", "graph": graph_json(g)})

    def site(self, s: Site) -> None:
        self.record({"type": "site", "site": site_json(s)})

    def runtime_site(self, index: int, name: str) -> None:
        self.record({"type": "runtime_site", "index": index, "name": name})

    def measurement(self, m: Measurement) -> None:
        self.record({"type": "measurement", "measurement": measurement_json(m)})

    def finding(self, f: Finding) -> None:
        self.record({"type": "finding", "finding": finding_json(f)})

    def expect_key(self, key: Key) -> None:
        """Format the record of a key a run is about to meet, so that meeting it (a cache
        miss, on the model's hot path) only writes it."""
        if key not in self._key_ids and key not in self._key_lines:
            self._key_lines[key] = _key_record(key)

    def event(self, combo_id: int, combos: Sequence[tuple[int, Key, int, int, bool, int | None]], t_ns: int) -> None:
        """One dispatch. Its combo (site, key, picked, predicted, hit, override) is
        formatted once per `combo_id`; after that an event is one int format and a copy,
        written inline because this runs on every cache hit. (`get`, not an exception,
        finds a new combo: raising costs a cache miss a third of a microsecond.)"""
        line = self._lines.get(combo_id)
        line = self._new_combo(combo_id, combos, t_ns) if line is None else line % t_ns
        try:
            self._mm.write(line)
        except ValueError:
            self._grow_and_write(line)

    def _new_combo(self, combo_id: int, combos: Sequence[tuple[int, Key, int, int, bool, int | None]],
                   t_ns: int) -> bytes:
        """The event line of a combo met first, after its key's record if the key is new."""
        site, key, picked, predicted, hit, override = combos[combo_id]
        kid = self._key_ids.get(key)
        head = b""
        if kid is None:
            kid = self._key_ids[key] = len(self._key_ids)
            head = (self._key_lines.pop(key, None) or _key_record(key)) % kid
        line = self._lines[combo_id] = b'["e",%d,%d,%d,%d,%s,%s,%%d]\n' % (
            site, kid, picked, predicted, b"true" if hit else b"false",
            b"null" if override is None else b"%d" % override,
        )
        return head + line % t_ns

    def close(self) -> None:
        if self._mm.closed:
            return
        self.record({"type": "end"})
        end = self._mm.tell()
        self._mm.flush()
        self._mm.close()
        os.ftruncate(self._fd, end)
        os.close(self._fd)


def _key_record(key: Key) -> bytes:
    """`{"type":"key","id":%d,"key":[[...]]}` as json.dumps writes it, at a third of its cost."""
    body = ",".join("[" + ",".join(map(str, t)) + "]" for t in key)
    return b'{"type":"key","id":%%d,"key":[%s]}\n' % body.encode()
