"""The recording log a live model appends to as it runs, and its reader.

The writer and the reader live together so that a record type cannot be added to one
and not the other.

The writer is crash-safe and costs a dispatch nothing.

A dispatch on a cache hit costs Inductor a few microseconds, so a log that formats a JSON
object and makes a system call per event would change what it observes. Instead the log
file is memory-mapped: writing a record is a copy into the page cache, which the kernel
keeps (and writes back) even if the process is killed with SIGKILL. Events are not even
formatted on the dispatch's path: the recorder keeps them as columns of integers and is
the log's feeder, whose held-back events the log writes every FLUSH_S seconds on a thread
of its own, before any other record (so a step record stays between the right events) and
at close. A process that raises, exits or is interrupted loses nothing; one killed with
SIGKILL loses at most the events of its last FLUSH_S seconds. Event records are short JSON
arrays whose constant part (site, key, pick) is formatted once per combination; only the
timestamp is formatted per event. On close the file is cut to its written length; a
killed recording leaves NUL padding after the last record, which the reader below strips.

Records (one JSON value per line):
    {"type": "header", ...}            session environment and model (log_header)
    {"type": "runtime_site", "index": I, "name": N}   a site's first appearance at run time
    {"type": "key", "id": K, "key": "((64, 1024), (64, 4096))"}   first sight of a runtime key
                                       (as Python writes the tuple; older logs: JSON lists)
    {"type": "step", "step": N}        the workload step the following events belong to
    ["d", site, K, picked, hit, override, line, t_ns]   one dispatch; `line` is the wrapper
                                       line that called the site (its call site); kinspect's
                                       prediction of the pick is made when the log is read
    ["e", site, K, picked, predicted, hit, override, line, t_ns]   one dispatch with its
                                       prediction made as it was written (`line` absent in logs
                                       from before call sites: 8 entries)
    {"type": "site"|"graph"|"symbols"|"measurement"|"finding", ...}
    {"type": "end"}                    written by a clean close
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import mmap
import os
import re
import stat
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import compress, islice
from pathlib import Path
from typing import Any, NamedTuple, NoReturn, Protocol

from kinspect.core.errors import SessionError
from kinspect.core.session.eventlog import EventLog
from kinspect.core.session.format.columns import Column, Growing, counting
from kinspect.core.session.model import FORMAT, VERSION, Finding, Graph, Session, Site, SymbolInfo
from kinspect.core.session.runtime import Measurement
from kinspect.core.session.format.checks import an_int, a_key, a_list, an_object, an_int_or_null, a_string
from kinspect.core.session.format.compiled import graph_to_json, site_to_json, symbol_to_json
from kinspect.core.session.format.document import session_from_json
from kinspect.core.session.format.header import check_version, environment_to_json, model_to_json
from kinspect.core.session.format.results import finding_to_json, measurement_to_json
from kinspect.core.dispatch.shapes import Key

LOG_FORMAT = "kinspect-log"
LOG_VERSION = 1
"""The recording log's own version: its records did not change when the session file's
measurements became columns."""
_CHUNK = 8 << 20
FLUSH_S = 0.05
"""How often the log writes what its feeders hold back: a SIGKILL loses at most this long's events."""
_BATCH = 4096
"""Events joined per copy into the map."""


class DispatchRecord(NamedTuple):
    """What one dispatch says, but for its time: the recorder keeps one per distinct
    combination, the log writes each once, so an event costs an id and a timestamp.

    `site` is the runtime site's index (its `runtime_site` record), `line` the wrapper
    line that called it (which call site ran). `predicted`, kinspect's model of the pick,
    is usually left out: making it costs a cache miss ~20 us, so the reader makes it from
    the site's variant keys instead."""

    site: int
    key: Key
    picked: int
    hit: bool
    override: int | None = None
    line: int | None = None
    predicted: int | None = None

    def json_line(self, key_id: int) -> bytes:
        """Its event line, `%d` where the timestamp goes (bytes formatting: a third of
        json.dumps's cost)."""
        opt = (b"null" if self.override is None else b"%d" % self.override,
               b"null" if self.line is None else b"%d" % self.line)
        hit = b"true" if self.hit else b"false"
        if self.predicted is None:
            return b'["d",%d,%d,%d,%s,%s,%s,%%d]\n' % (self.site, key_id, self.picked, hit, *opt)
        return b'["e",%d,%d,%d,%d,%s,%s,%s,%%d]\n' % (self.site, key_id, self.picked, self.predicted, hit, *opt)

    @staticmethod
    def from_json(r: list[Any]) -> list[Any] | None:
        """An event line as [site, key id, picked, predicted (None: to be made), hit,
        override, line, t_ns], or None if it is not one (the caller says why)."""
        if len(r) == 8 and r[0] == "d":
            return [r[1], r[2], r[3], None, r[4], r[5], r[6], r[7]]
        if len(r) == 9 and r[0] == "e":
            return r[1:]
        if len(r) == 8 and r[0] == "e":  # before call sites
            return [*r[1:7], None, r[7]]
        return None


class LiveLog:
    """The log of one recording. `on_failure(text)` is told, once, when the log cannot
    grow (a full disk, the file size limit): what it holds by then stays whole and opens,
    and later records are dropped, never half-written. In a process forked from the
    recording's (a program's `multiprocessing` workers) the log writes nothing: the
    parent's recording owns it."""

    def __init__(self, path: str | os.PathLike[str], session: Session,
                 on_failure: Callable[[str], None] | None = None) -> None:
        self.path = Path(path)
        self._fd = _locked(self.path)
        self.failure: str | None = None
        """Why the log stopped growing; None while it grows."""
        self._on_failure = on_failure
        self._dead = False
        """Nothing more is written: the log failed, or this process is a fork of its own."""
        self._child = False
        """This process is a fork of the one writing the log."""
        self.forks = 0
        """How many processes this one forked (Python's `os.fork`) while writing the log."""
        self._size = 0
        try:
            self._size = _room(self._fd, 0, _CHUNK)
        except OSError as e:
            os.close(self._fd)
            raise SessionError(f"{self.path}: cannot record into it: {e.strerror or e}") from None
        self._mm = _mapped(self._fd, self._size)
        self._key_ids: dict[Key, int] = {}
        self._lines: dict[int, bytes] = {}
        """Combo id -> its event line with `%d` where the timestamp goes."""
        self._lock = threading.RLock()
        """One writer at a time: the feeders' thread, and whoever writes the other records."""
        self._feeders: list[Callable[[LiveLog], None]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        _watched(self)
        self.record(log_header(session))

    def _write(self, data: bytes) -> None:
        with self._lock:
            if self._dead:
                return
            try:
                self._mm.write(data)
            except ValueError:
                self._grow_and_write(data)

    def _grow_and_write(self, data: bytes) -> None:
        """The mapping is full: grow the file (its blocks allocated now, so that a full disk
        is an error here and not a SIGBUS when a page of the map is first written), then
        the mapping, then write."""
        pos = self._mm.tell()
        size = self._size
        while pos + len(data) > size:
            size += _CHUNK
        try:
            got = _room(self._fd, self._size, size)
            if pos + len(data) > got:
                raise OSError(errno.EFBIG, f"past the file size limit, {got} bytes: ulimit -f")
        except OSError as e:
            room = data.rfind(b"\n", 0, self._size - pos) + 1  # the whole records that still fit
            self._mm.write(data[:room])
            self._dead = True
            self.failure = (f"{self.path}: the recording log cannot grow ({e.strerror or e}): it keeps what was "
                            "recorded until now, and opens")
            if self._on_failure is not None:
                self._on_failure(self.failure)
            return
        self._size = got
        self._mm.resize(self._size)
        self._mm.seek(pos)
        self._mm.write(data)

    def _forked(self) -> None:
        """In a forked child: never write the parent's log (its map is the parent's pages,
        and the parent cuts the file at its close), and take no lock the parent's threads
        may have held when the fork happened."""
        self._lock = threading.RLock()
        self._dead = True
        self._child = True
        self._feeders = []

    # ------------------------------------------------------------ held-back events

    def feed(self, feeder: Callable[[LiveLog], None]) -> None:
        """`feeder(log)` writes the events it holds back (through `events`): called every
        FLUSH_S seconds on the log's own thread, before any other record and at close."""
        with self._lock:
            self._feeders.append(feeder)
            if self._thread is None:
                self._thread = threading.Thread(target=self._flushing, name="kinspect-log", daemon=True)
                self._thread.start()

    def unfeed(self, feeder: Callable[[LiveLog], None]) -> None:
        """Write what `feeder` holds, then stop asking it."""
        with self._lock:
            if feeder in self._feeders:
                feeder(self)
                self._feeders.remove(feeder)

    def flush(self) -> None:
        """Write every event the feeders hold back now."""
        with self._lock:
            for feeder in list(self._feeders):
                feeder(self)

    def _flushing(self) -> None:
        while not self._stop.wait(FLUSH_S):
            try:
                self.flush()
            except (OSError, ValueError):  # a full disk or a closed map: close says so, in its own thread
                return

    def events(self, ids: Sequence[int], times: Sequence[int], records: Sequence[DispatchRecord]) -> None:
        """Dispatches in order: `records[ids[i]]` at `times[i]`, each new combination's line
        (and its key's record, the first time) formatted once, copied in in batches."""
        lines = self._lines
        for start in range(0, len(ids), _BATCH):
            out = []
            for cid, t in zip(ids[start:start + _BATCH], times[start:start + _BATCH]):
                line = lines.get(cid)
                out.append(self._new_combo(cid, records, t) if line is None else line % t)
            self._write(b"".join(out))

    # ------------------------------------------------------------ records

    def record(self, obj: Any) -> None:
        """Write any JSON record (sites, steps, findings, measurements: the rare ones), after
        the events held back before it."""
        with self._lock:
            self.flush()
            self._write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")

    def symbols(self, symbols: Iterable[SymbolInfo]) -> None:
        self.record({"type": "symbols", "symbols": [symbol_to_json(s) for s in symbols]})

    def graph(self, g: Graph) -> None:
        self.record({"type": "graph", "graph": graph_to_json(g)})

    def site(self, s: Site) -> None:
        self.record({"type": "site", "site": site_to_json(s)})

    def runtime_site(self, index: int, name: str) -> None:
        self.record({"type": "runtime_site", "index": index, "name": name})

    def measurement(self, m: Measurement) -> None:
        self.record({"type": "measurement", "measurement": measurement_to_json(m)})

    def finding(self, f: Finding) -> None:
        self.record({"type": "finding", "finding": finding_to_json(f)})

    def event(self, combo_id: int, records: Sequence[DispatchRecord], t_ns: int) -> None:
        """One dispatch, written now."""
        self.events((combo_id,), (t_ns,), records)

    def _new_combo(self, combo_id: int, records: Sequence[DispatchRecord], t_ns: int) -> bytes:
        """The event line of a record met first, after its key's record if the key is new."""
        rec = records[combo_id]
        key = rec.key
        kid = self._key_ids.get(key)
        if kid is not None:
            line = self._lines[combo_id] = rec.json_line(kid)
            return line % t_ns
        kid = self._key_ids[key] = len(self._key_ids)
        line = self._lines[combo_id] = rec.json_line(kid)
        return _KEY_RECORD % (kid, key) + line % t_ns

    def close(self) -> None:
        with self._lock:
            if self._mm.closed:
                return
            if self._child:
                self._mm.close()
                os.close(self._fd)
                return
            self._stop.set()
            self.record({"type": "end"})
            self._feeders.clear()
            end = self._mm.tell()
            self._mm.flush()
            self._mm.close()
            os.ftruncate(self._fd, end)
            os.close(self._fd)


_KEY_RECORD = b'{"type":"key","id":%d,"key":"%a"}\n'
"""A key's record: the key as Python writes a tuple, one C-level format (a JSON list of
lists costs four times as long), read back by `_key_text` as data."""


def check_replaceable_log(path: Path) -> None:
    """Refuse in one line a log that a new recording could not write: what `_locked`
    refuses (a symlink, another kind of file, one being recorded into)."""
    os.close(_locked(path, empty=False))


def _locked(path: Path, empty: bool = True) -> int:
    """The log opened for writing, emptied only once this process holds its lock: a second
    recording onto the same log (two `kinspect record` of one model, two ranks given one
    name) would cut the first's events off when it closes, so it is refused instead. Only
    a new file, an empty one or a kinspect log is written: never through a symlink, never
    over another file."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as e:
        if os.path.islink(path):
            raise SessionError(f"{path}: is a symlink; kinspect writes its log only as a file of its own: "
                               "record elsewhere (-o)") from None
        raise SessionError(f"{path}: cannot record into it: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SessionError(f"{path}: is not a regular file; kinspect does not write its log into it: "
                               "record elsewhere (-o)")
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if st.st_size and not st.st_mode & 0o222:
            raise SessionError(f"{path}: is read-only; kinspect does not replace it: record elsewhere (-o)")
        if st.st_size and not looks_like_log(os.pread(fd, 1 << 16, 0).decode("utf-8", "replace")):
            raise SessionError(f"{path}: is there and is not a kinspect log; kinspect does not replace it: "
                               "record elsewhere (-o)")
    except BlockingIOError:
        holder = _lock_holder(fd)
        os.close(fd)
        who = f"process {holder}" if holder is not None else "another process"
        raise SessionError(f"{path}: {who} is recording into this log; wait for it to end, "
                           "or record elsewhere (-o)") from None
    except BaseException:
        os.close(fd)
        raise
    os.set_blocking(fd, True)
    if empty:
        os.ftruncate(fd, 0)
    return fd


def _room(fd: int, have: int, want: int) -> int:
    """Grow the file from `have` to `want` bytes with its blocks allocated, or as far as
    the file size limit lets it (RLIMIT_FSIZE: past it the kernel kills the process with
    SIGXFSZ where the program has not ignored it, as Python does); the size it has now.
    OSError where the disk has no room."""
    limit = _file_size_limit()
    if limit is not None:
        want = min(want, limit - limit % mmap.PAGESIZE)
    if want <= have:
        raise OSError(errno.EFBIG, f"past the file size limit, {limit} bytes: ulimit -f")
    try:
        os.posix_fallocate(fd, have, want - have)
    except OSError as e:
        if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
            raise
        os.ftruncate(fd, want)  # a file system that allocates nothing ahead: as before
    return want


def _file_size_limit() -> int | None:
    """The largest file this process may write (RLIMIT_FSIZE), None where unlimited."""
    try:
        import resource
    except ImportError:
        return None
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return None if soft == resource.RLIM_INFINITY else soft


_OPEN: weakref.WeakSet[LiveLog] = weakref.WeakSet()
"""The logs this process writes, each disowned by a child forked from it."""
_at_fork = False


def _watched(log: LiveLog) -> None:
    global _at_fork
    if not _at_fork:
        os.register_at_fork(after_in_child=_disown_all, after_in_parent=_count_fork)
        _at_fork = True
    _OPEN.add(log)


def _disown_all() -> None:
    for log in list(_OPEN):
        log._forked()


def _count_fork() -> None:
    for log in list(_OPEN):
        log.forks += 1


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


_KEY_CHARS = frozenset("0123456789(), ")
_KEY_TEXT_LIMIT = 64 * 1024


def _mapped(fd: int, size: int) -> mmap.mmap:
    """The log's first chunk mapped with its pages in place (MAP_POPULATE, where there is
    one): faulting each page in as an event first reaches it cost a write about 1.6 us of
    its 2.2 on a sandboxed kernel, and the first chunk holds some 200,000 events."""
    flags = getattr(mmap, "MAP_POPULATE", 0)
    if flags:
        with contextlib.suppress(OSError):
            return mmap.mmap(fd, size, flags=mmap.MAP_SHARED | flags)
    return mmap.mmap(fd, size)


def _key_text(text: str, path: str) -> Any:
    """A key written as a Python tuple of tuples of sizes, as JSON lists; anything but
    digits, parentheses, commas and spaces is refused before it is parsed."""
    if len(text) > _KEY_TEXT_LIMIT or not _KEY_CHARS.issuperset(text):
        raise SessionError(f"{path}: expected a key such as ((64, 1024), (64, 4096))")
    try:
        return json.loads(text.replace("(", "[").replace(")", "]").replace(",]", "]"))
    except (json.JSONDecodeError, RecursionError):
        raise SessionError(f"{path}: expected a key such as ((64, 1024), (64, 4096))") from None


def log_header(session: Session) -> dict[str, Any]:
    return {
        "type": "header",
        "format": LOG_FORMAT,
        "version": LOG_VERSION,
        "environment": environment_to_json(session.environment),
        "model": model_to_json(session.model),
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


def load_log(stream: Readable, where: str) -> Session:
    """A recording log as the session it recorded, read from `stream` a piece at a time
    and a line at a time: its events go straight into compact columns (`columns.Growing`),
    never a list of records (a 205 MB log took 3.2 GB when it was one), and its text is
    never held whole beside them."""
    reader = _LogReader(where)
    lines = _LogLines(stream)
    truncated: str | None = None
    events: list[tuple[int, bytes]] = []
    for n, line, last in lines:
        if _EVENT_LINE.fullmatch(line):
            events.append((n, line))
            if len(events) == _BATCH:
                _take_events(reader, events)
            continue
        _take_events(reader, events)
        try:
            r = json.loads(line)
        except RecursionError:
            raise SessionError(f"{where}: line {n}: JSON nested too deeply") from None
        except UnicodeDecodeError as e:
            raise SessionError(f"{where}: line {n}: not UTF-8 text (byte {e.start})") from None
        except json.JSONDecodeError:
            if last:
                truncated = f"the last record (line {n}) was cut short"
                break
            raise SessionError(f"{where}: line {n} is not valid JSON") from None
        except ValueError:
            raise SessionError(f"{where}: line {n}: holds a number too long to read") from None
        reader.take(n, r, line)
    _take_events(reader, events)
    if truncated is None and lines.hole is not None:
        truncated = f"the records from line {lines.hole} on were cut short (the write the recording stopped in)"
    if reader.head is None:
        raise SessionError(f"{where}: empty log")
    if not reader.ended and truncated is None:
        truncated = "the recording stopped before its end record (was it killed?)"
    session = reader.session()
    session.truncated = truncated
    return session


_EVENT_LINE = re.compile(rb'\["[de]"(?:,(?:-?[0-9]{1,18}|null|true|false))*\]')
"""An event line as the recorder writes it: one JSON list of small numbers, nulls and
booleans, whole on its line, so that lines of them joined by commas are a JSON list of
exactly those lists."""


def _take_events(reader: _LogReader, events: list[tuple[int, bytes]]) -> None:
    """Event lines (number, text) decoded in one `json.loads` and taken in order (one call
    a line was most of the time a long log took to open)."""
    if not events:
        return
    records = json.loads(b"[" + b",".join([line for _, line in events]) + b"]")
    for (n, line), r in zip(events, records):
        reader.take(n, r, line)
    events.clear()


class Readable(Protocol):
    def read(self, n: int = -1, /) -> bytes: ...


class _LogLines:
    """(number, line, whether it is the last) for each line of a log, read `_PIECE` bytes
    at a time, up to where the recording stopped.

    A killed recording leaves the rest of its memory-mapped file as NUL bytes, and the
    write it was killed in may hold some of its bytes and not others (a copy need not go
    front to back): a NUL, which a JSON line never holds, is where the recording stopped.
    Where NULs run to the file's end they are that padding, and the lines before them
    are read; a NUL with text after it is a hole, and the lines are read up to the one it
    is in (`hole`: that line's number)."""

    def __init__(self, stream: Readable) -> None:
        self.stream = stream
        self.hole: int | None = None

    def __iter__(self) -> Iterator[tuple[int, bytes, bool]]:
        n, pending = 0, None
        rest: list[bytes] = []  # the pieces of a line not ended yet (one long line is joined once)
        done = False
        while not done:
            piece = self.stream.read(_PIECE)
            nul = piece.find(b"\x00")
            if not piece:
                tail = b"".join(rest)
                done, lines = True, [tail] if tail else []
            elif nul >= 0:
                done, text = True, b"".join([*rest, piece[:nul]])
                if _all_nul(piece[nul:]) and self._nul_to_end():
                    lines = text.split(b"\n")
                    if not lines[-1]:
                        lines.pop()
                else:
                    lines = text[:text.rfind(b"\n") + 1].split(b"\n")[:-1]
                    self.hole = n + (pending is not None) + len(lines) + 1
            else:
                cut = piece.rfind(b"\n")
                if cut < 0:
                    rest.append(piece)
                    continue
                lines = b"".join([*rest, piece[:cut]]).split(b"\n")
                rest = [piece[cut + 1:]]
            for line in lines:
                if pending is not None:
                    n += 1
                    yield n, pending, False
                pending = line
        if pending is not None:
            yield n + 1, pending, True

    def _nul_to_end(self) -> bool:
        while piece := self.stream.read(_PIECE):
            if not _all_nul(piece):
                return False
        return True


def _all_nul(data: bytes) -> bool:
    return not data.strip(b"\x00")


_PIECE = 1 << 18
"""Bytes of a log read at a time."""


_SEEN = 1 << 14
"""Event lines remembered to read a repeated one once: two dispatches never share a line,
since each has its own timestamp."""


class _LogReader:
    """A log's records taken in order, the events into columns as they come."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.head: dict[str, Any] | None = None
        self.ended = False
        self.d: dict[str, Any] = {}
        self.key_rows: dict[int, int] = {}
        """A log's key id -> its row in the session's key table."""
        self.runtime_sites: dict[int, str] = {}
        self.names: dict[str, int] = {}
        """Each runtime site name an event named -> its number in `name_ids`."""
        self.name_ids = Growing()
        self.key_ids = Growing()
        self.picked, self.predicted, self.hit = Growing(), Growing(), Growing()
        self.unpredicted = bytearray()
        self.override, self.lines, self.steps, self.t_ns = Growing(), Growing(), Growing(), Growing()
        self.columns = (self.name_ids, self.key_ids, self.picked, self.predicted, self.hit, self.override,
                        self.lines, self.steps, self.t_ns)
        self.step: Any = None
        self.t0: int | None = None
        self.seen: OrderedDict[bytes, None] = OrderedDict()
        """The last `_SEEN` event lines: an event written twice (a log of an older kinspect
        whose forked child wrote its parent's events again) is read once."""
        self.measured: set[bytes] = set()
        """Every measurement and finding line, each read once for the same reason."""

    def take(self, n: int, r: Any, line: bytes) -> None:
        where = self.where
        if self.head is None:
            head = an_object(r, f"{where}: line 1")
            if head.get("type") != "header":
                raise SessionError(f"{where}: line 1 is not a kinspect log header")
            check_version(head, LOG_FORMAT, (LOG_VERSION,), "log")
            self.head = dict(head)
            self.d = {
                "format": FORMAT, "version": VERSION,
                "environment": head.get("environment"), "model": head.get("model"),
                "symbols": [], "graphs": [], "sites": [], "keys": [], "measurements": [], "findings": [],
            }
            return
        if type(r) is list:
            if line in self.seen:
                return
            self.seen[line] = None
            if len(self.seen) > _SEEN:
                self.seen.popitem(last=False)
            self._event(n, r)
            return
        r = an_object(r, f"{where}: line {n}")
        kind = r.get("type")
        d = self.d
        if kind == "end":
            self.ended = True
        elif kind == "symbols":
            d["symbols"] = a_list(r.get("symbols"), f"{where}: line {n}.symbols", 1024)
        elif kind == "key":
            self.key_rows[an_int(r.get("id"), f"{where}: line {n}.id")] = len(d["keys"])
            key = r.get("key")
            if isinstance(key, str):
                key = _key_text(key, f"{where}: line {n}.key")
            a_key(key, f"{where}: line {n}.key")  # named by its line, not its row
            d["keys"].append(key)
        elif kind == "runtime_site":
            self.runtime_sites[an_int(r.get("index"), f"{where}: line {n}.index")] = \
                a_string(r.get("name"), f"{where}: line {n}.name")
        elif kind == "step":
            self.step = an_int_or_null(r.get("step"), f"{where}: line {n}.step")
        elif kind in ("measurement", "finding"):
            if line not in self.measured:
                self.measured.add(line)
                d[kind + "s"].append(r.get(kind))
        elif kind in ("graph", "site"):
            d[kind + "s"].append(r.get(kind))
        else:
            raise SessionError(f"{where}: line {n}: unknown record type {str(kind)[:40]!r}")

    def _event(self, n: int, r: list[Any]) -> None:
        e = DispatchRecord.from_json(r)
        if e is None or type(e[0]) is not int or type(e[1]) is not int or e[0] not in self.runtime_sites \
                or e[1] not in self.key_rows:
            _refuse_event(r, e, f"{self.where}: line {n}", self.runtime_sites, self.key_rows)
        site, key, picked, predicted, hit, override, line, t = e
        if type(t) is not int or not 0 <= t <= 2**63:
            an_int(t, f"{self.where}: line {n}[{len(r) - 1}]", 0, 2**63)
        if line is not None and type(line) is not int:
            raise SessionError(f"{self.where}: line {n}[{len(r) - 2}]: expected a wrapper line number or null")
        if self.t0 is None:
            self.t0 = t
        elif t < self.t0:
            raise SessionError(f"{self.where}: line {n}: event time {t} is before the first event's ({self.t0})")
        name = self.runtime_sites[site]
        self.name_ids.append(self.names.setdefault(name, len(self.names)))
        self.key_ids.append(self.key_rows[key])
        self.picked.append(picked)
        self.predicted.append(picked if predicted is None else predicted)  # made once loaded
        self.unpredicted.append(predicted is None)
        self.hit.append(hit)
        self.override.append(override)
        self.lines.append(line)
        self.steps.append(self.step)
        self.t_ns.append(t - self.t0)
        if len(self.unpredicted) % _BATCH == 0:
            for column in self.columns:
                column.flush()

    def session(self) -> Session:
        d, where = self.d, self.where
        d["sites"] = _latest_sites(d["sites"])
        index = {r["name"]: i for i, r in enumerate(d["sites"]) if isinstance(r, dict) and isinstance(r.get("name"), str)}
        rows = []
        for name in self.names:
            if name not in index:
                raise SessionError(f"{where}: runtime site {name!r} has no site record")
            rows.append(index[name])
        site = self.name_ids.mapped(rows)
        n = len(site)
        d["events"] = {
            "seq": counting(n), "site": site, "key": self.key_ids.done(), "picked": self.picked.done(),
            "predicted": self.predicted.done(), "hit": self.hit.done(), "step": self.steps.done(),
            "t_ns": self.t_ns.done(), "override": self.override.done(),
            "call_site": _call_sites(site, self.lines.done(), d["sites"]),
        }
        try:
            session = session_from_json(d)
        except SessionError as e:
            raise SessionError(f"{where}: {e}") from None
        _predict(session, self.unpredicted)
        return session


def _latest_sites(site_records: list[Any]) -> list[Any]:
    """Each site's last record: a recording writes a site as soon as it runs and again
    once its kernels' sources are known, so that a killed one still names its sites."""
    latest: dict[Any, Any] = {}
    for r in site_records:
        name = r.get("name") if isinstance(r, dict) else None
        latest[name if isinstance(name, str) else object()] = r
    return list(latest.values())


def _predict(session: Session, unpredicted: bytearray) -> None:
    """kinspect's prediction for the events written without one (`unpredicted`: a byte
    per event), once per (site, key), from the loaded sites (their variant keys are
    checked by then)."""
    log = session.events
    if not any(unpredicted) or not isinstance(log, EventLog):
        return
    made: dict[tuple[int, int], int] = {}
    for i in compress(range(len(unpredicted)), unpredicted):
        pair = (log.site_ids[i], log.key_ids[i])
        p = made.get(pair)
        if p is None:
            p = made[pair] = session.sites[pair[0]].decide(log.keys[pair[1]]).chosen
        log.predicted[i] = p


def _refuse_event(r: list[Any], e: list[Any] | None, path: str, sites: Mapping[int, str],
                  keys: Mapping[int, int]) -> NoReturn:
    """Say what is wrong with an event record (`["d", site, key id, ...]`, `["e", ...]`)."""
    if e is None:
        raise SessionError(f"{path}: not an event record")
    if an_int(r[1], f"{path}[1]") not in sites:
        raise SessionError(f"{path}: event names runtime site {r[1]}, which no record introduced")
    raise SessionError(f"{path}: event names key {an_int(r[2], f'{path}[2]')}, which no record introduced")


def _call_sites(site: Sequence[int], lines: Sequence[int | None], site_records: list[Any]) -> Column:
    """Each event's call site: the one of its site whose wrapper line called it."""
    by_line: list[dict[Any, int]] = []
    for r in site_records:
        calls = r.get("call_sites") if isinstance(r, dict) else None
        by_line.append({c.get("line"): i for i, c in enumerate(calls) if isinstance(c, dict) and type(c.get("line")) is int}
                       if isinstance(calls, list) else {})
    out = Growing()
    pairs = zip(site, lines)
    while chunk := list(islice(pairs, _BATCH)):
        for s, line in chunk:
            out.append(None if line is None else by_line[s].get(line))
        out.flush()
    return out.done()
