"""The recording log a live model appends to as it runs, and its reader.

The writer and the reader live together so that a record type cannot be added to one
and not the other.

The writer is crash-safe and cheap per event.

A dispatch on a cache hit costs Inductor a few microseconds, so a log that formats a JSON
object and makes a system call per event would change what it observes. Instead the log
file is memory-mapped: writing a record is a copy into the page cache, which the kernel
keeps (and writes back) even if the process is killed with SIGKILL, so a kill loses at
most the record being copied. Event records are short JSON arrays whose constant part
(site, key, pick) is formatted once per key; only the timestamp and step are formatted
per event. On close the file is cut to its written length; a killed recording leaves NUL
padding after the last record, which the reader below strips.

Records (one JSON value per line):
    {"type": "header", ...}            session environment and model (log_header)
    {"type": "runtime_site", "index": I, "name": N}   a site's first appearance at run time
    {"type": "key", "id": K, "key": [[...]]}          first sight of a runtime key
    {"type": "step", "step": N}        the workload step the following events belong to
    ["e", site, K, picked, predicted, hit, override, line, t_ns]   one dispatch; `line`
                                       is the wrapper line that called the site (its call site),
                                       absent in logs from before call sites (8 entries)
    {"type": "site"|"graph"|"symbols"|"measurement"|"finding", ...}
    {"type": "end"}                    written by a clean close
"""

from __future__ import annotations

import fcntl
import json
import mmap
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from kinspect.core.errors import SessionError
from kinspect.core.session.model import FORMAT, VERSION, Finding, Graph, Measurement, Session, Site, SymbolInfo
from kinspect.core.session.format.checks import an_int, a_key, a_list, an_object, an_int_or_null, a_string
from kinspect.core.session.format.read import check_version, session_from_json
from kinspect.core.session.format.write import (
    environment_json,
    finding_json,
    graph_json,
    measurement_json,
    model_json,
    site_json,
    symbol_json,
)
from kinspect.core.dispatch.shapes import Key

LOG_FORMAT = "kinspect-log"
Combo = tuple[int, Key, int, int, bool, "int | None", "int | None"]
"""What one event says: (site, key, picked, predicted, hit, override, wrapper line)."""
_CHUNK = 8 << 20


class LiveLog:
    def __init__(self, path: str | os.PathLike[str], session: Session) -> None:
        self.path = Path(path)
        self._fd = _locked(self.path)
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

    def event(self, combo_id: int, combos: Sequence[Combo], t_ns: int) -> None:
        """One dispatch. Its combo (site, key, picked, predicted, hit, override, wrapper
        line) is formatted once per `combo_id`; after that an event is one int format and
        a copy, written inline because this runs on every cache hit. (`get`, not an
        exception, finds a new combo: raising costs a cache miss a third of a microsecond.)"""
        line = self._lines.get(combo_id)
        line = self._new_combo(combo_id, combos, t_ns) if line is None else line % t_ns
        try:
            self._mm.write(line)
        except ValueError:
            self._grow_and_write(line)

    def _new_combo(self, combo_id: int, combos: Sequence[Combo], t_ns: int) -> bytes:
        """The event line of a combo met first, after its key's record if the key is new."""
        site, key, picked, predicted, hit, override, wrapper_line = combos[combo_id]
        kid = self._key_ids.get(key)
        head = b""
        if kid is None:
            kid = self._key_ids[key] = len(self._key_ids)
            head = (self._key_lines.pop(key, None) or _key_record(key)) % kid
        line = self._lines[combo_id] = b'["e",%d,%d,%d,%d,%s,%s,%s,%%d]\n' % (
            site, kid, picked, predicted, b"true" if hit else b"false",
            b"null" if override is None else b"%d" % override,
            b"null" if wrapper_line is None else b"%d" % wrapper_line,
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


def _locked(path: Path) -> int:
    """The log opened for writing, emptied only once this process holds its lock: a second
    recording onto the same log (two `kinspect record` of one model, two ranks given one
    name) would cut the first's events off when it closes, so it is refused instead."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _lock_holder(fd)
        os.close(fd)
        who = f"process {holder}" if holder is not None else "another process"
        raise SessionError(f"{path}: {who} is recording into this log; wait for it to end, "
                           "or record elsewhere (-o)") from None
    os.ftruncate(fd, 0)
    return fd


def _lock_holder(fd: int) -> int | None:
    """The process holding a file's lock, from Linux's /proc/locks; None elsewhere."""
    st = os.fstat(fd)
    ident = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as f:
            for line in f:
                parts = line.split()
                if len(parts) > 5 and parts[1] == "FLOCK" and parts[5] == ident and parts[4].isdigit():
                    return int(parts[4])
    except OSError:
        pass
    return None


def _key_record(key: Key) -> bytes:
    """`{"type":"key","id":%d,"key":[[...]]}` as json.dumps writes it, at a third of its cost."""
    body = ",".join("[" + ",".join(map(str, t)) + "]" for t in key)
    return b'{"type":"key","id":%%d,"key":[%s]}\n' % body.encode()


def log_header(session: Session) -> dict[str, Any]:
    return {
        "type": "header",
        "format": LOG_FORMAT,
        "version": VERSION,
        "environment": environment_json(session.environment),
        "model": model_json(session.model),
    }


# ---------------------------------------------------------------- reading


def looks_like_log(text: str) -> bool:
    """A log's first line is a whole JSON object, its header (a session file's first line
    is the start of one object): parsed, whatever the order or spacing of its keys."""
    first = text.lstrip().split("\n", 1)[0]
    if not first.startswith("{") or f'"{LOG_FORMAT}"' not in first:  # spares parsing a one-line session twice
        return False
    try:
        head = json.loads(first)
    except (ValueError, RecursionError):
        return False
    return isinstance(head, dict) and head.get("format") == LOG_FORMAT


def load_log(text: str, where: str) -> Session:
    # A killed recording leaves the rest of its memory-mapped file as NUL bytes.
    lines = text.rstrip("\x00").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    truncated: str | None = None
    records = []
    for n, line in enumerate(lines, 1):
        try:
            records.append(json.loads(line))
        except RecursionError:
            raise SessionError(f"{where}: line {n}: JSON nested too deeply") from None
        except json.JSONDecodeError:
            if n == len(lines):
                truncated = f"the last record (line {n}) was cut short"
                break
            raise SessionError(f"{where}: line {n} is not valid JSON") from None
        except ValueError:
            raise SessionError(f"{where}: line {n}: holds a number too long to read") from None
    if not records:
        raise SessionError(f"{where}: empty log")
    head = an_object(records[0], f"{where}: line 1")
    if head.get("type") != "header":
        raise SessionError(f"{where}: line 1 is not a kinspect log header")
    check_version(head, LOG_FORMAT)
    d: dict[str, Any] = {
        "format": FORMAT, "version": VERSION,
        "environment": head.get("environment"), "model": head.get("model"),
        "symbols": [], "graphs": [], "sites": [], "keys": [], "measurements": [], "findings": [],
    }
    key_rows: dict[int, int] = {}
    """A log's key id -> its row in the session's key table."""
    runtime_sites: dict[int, str] = {}
    events: list[list[Any]] = []
    sites: list[str] = []
    keys: list[int] = []
    steps: list[int | None] = []
    step = None
    ended = False
    for n, r in enumerate(records[1:], 2):
        if type(r) is list:
            if len(r) in (8, 9) and r[0] == "e" and type(r[1]) is int and type(r[2]) is int and r[1] in runtime_sites and r[2] in key_rows:
                events.append(r if len(r) == 9 else [*r[:7], None, r[7]])
                sites.append(runtime_sites[r[1]])
                keys.append(key_rows[r[2]])
                steps.append(step)
                continue
            _refuse_event(r, f"{where}: line {n}", runtime_sites, key_rows)
        r = an_object(r, f"{where}: line {n}")
        kind = r.get("type")
        if kind == "end":
            ended = True
        elif kind == "symbols":
            d["symbols"] = a_list(r.get("symbols"), f"{where}: line {n}.symbols", 1024)
        elif kind == "key":
            key_rows[an_int(r.get("id"), f"{where}: line {n}.id")] = len(d["keys"])
            a_key(r.get("key"), f"{where}: line {n}.key")  # named by its line, not its row
            d["keys"].append(r.get("key"))
        elif kind == "runtime_site":
            runtime_sites[an_int(r.get("index"), f"{where}: line {n}.index")] = a_string(r.get("name"), f"{where}: line {n}.name")
        elif kind == "step":
            step = an_int_or_null(r.get("step"), f"{where}: line {n}.step")
        elif kind in ("graph", "site", "measurement", "finding"):
            d[kind + "s"].append(r.get(kind))
        else:
            raise SessionError(f"{where}: line {n}: unknown record type {str(kind)[:40]!r}")
    if not ended and truncated is None:
        truncated = "the recording stopped before its end record (was it killed?)"
    d["events"] = _log_events(events, sites, keys, steps, d["sites"], records, where)
    try:
        session = session_from_json(d)
    except SessionError as e:
        raise SessionError(f"{where}: {e}") from None
    session.truncated = truncated
    return session


def _refuse_event(r: list[Any], path: str, sites: Mapping[int, str], keys: Mapping[int, int]) -> NoReturn:
    """Say what is wrong with an event record `["e", site, key id, picked, predicted, hit, override, line, t_ns]`."""
    if len(r) not in (8, 9) or r[0] != "e":
        raise SessionError(f"{path}: not an event record")
    if an_int(r[1], f"{path}[1]") not in sites:
        raise SessionError(f"{path}: event names runtime site {r[1]}, which no record introduced")
    raise SessionError(f"{path}: event names key {an_int(r[2], f'{path}[2]')}, which no record introduced")


def _log_events(events: list[list[Any]], sites: list[str], keys: list[int], steps: list[int | None],
                site_records: list[Any], records: list[Any], where: str) -> dict[str, list[Any]]:
    """The session file's event columns from a log's event records; times become
    nanoseconds since the first event."""
    _, _, _, picked, predicted, hit, override, lines, t_ns = (list(c) for c in zip(*events)) if events else ([],) * 9
    if t_ns and not (set(map(type, t_ns)) <= {int} and min(t_ns) >= 0 and max(t_ns) <= 2**63):
        i = next(i for i, t in enumerate(t_ns) if type(t) is not int or not 0 <= t <= 2**63)
        n = [n for n, r in enumerate(records[1:], 2) if type(r) is list][i]
        an_int(t_ns[i], f"{where}: line {n}[{len(records[n - 1]) - 1}]", 0, 2**63)
    bad = next((i for i, x in enumerate(lines) if x is not None and type(x) is not int), None)
    if bad is not None:
        n = [n for n, r in enumerate(records[1:], 2) if type(r) is list][bad]
        raise SessionError(f"{where}: line {n}[7]: expected a wrapper line number or null")
    t0 = t_ns[0] if t_ns else 0
    if t_ns and min(t_ns) < t0:
        i = next(i for i, t in enumerate(t_ns) if t < t0)
        n = [n for n, r in enumerate(records[1:], 2) if type(r) is list][i]
        raise SessionError(f"{where}: line {n}: event time {t_ns[i]} is before the first event's ({t0})")
    index = {r["name"]: i for i, r in enumerate(site_records) if isinstance(r, dict) and isinstance(r.get("name"), str)}
    try:
        site = list(map(index.__getitem__, sites))
    except KeyError as e:
        raise SessionError(f"{where}: runtime site {e.args[0]!r} has no site record") from None
    return {
        "seq": list(range(len(events))), "site": site, "key": keys, "picked": picked, "predicted": predicted,
        "hit": hit, "step": steps, "t_ns": [t - t0 for t in t_ns], "override": override,
        "call_site": _call_sites(site, lines, site_records),
    }


def _call_sites(site: list[int], lines: list[Any], site_records: list[Any]) -> list[int | None]:
    """Each event's call site: the one of its site whose wrapper line called it."""
    by_line: list[dict[Any, int]] = []
    for r in site_records:
        calls = r.get("call_sites") if isinstance(r, dict) else None
        by_line.append({c.get("line"): i for i, c in enumerate(calls) if isinstance(c, dict) and type(c.get("line")) is int}
                       if isinstance(calls, list) else {})
    return [None if line is None else by_line[s].get(line) for s, line in zip(site, lines)]
