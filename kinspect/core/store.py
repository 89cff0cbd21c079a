"""`load` and `save`: a session on disk, read within limits and written atomically.

`load` takes either form, a session file or a recording log (a killed recording leaves a
log whose last line may be cut, which still opens, marked truncated), and tells them
apart by their first line, whatever the file's extension; a TORCH_TRACE log opens as a
session of its compiled code (`kinspect.core.trace`).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from collections.abc import Mapping
from typing import Any, BinaryIO

from kinspect.core.errors import KinspectError, SessionError
from kinspect.core.quality.findings import refreshed
from kinspect.core.session.model import Session
from kinspect.core.session.records import collector_paused
from kinspect.core.session.format.columns import cut_keys, read_events
from kinspect.core.session.size_names import rename, with_source_names
from kinspect.core.session.format.log import load_log, looks_like_log
from kinspect.core.session.format.document import dumps, session_from_json, session_to_json
from kinspect.core.trace.files import (is_output_code, is_trace, output_code_files, read_output_code, read_trace,
                                      trace_files)

RECORDING_SUFFIX = ".session.json"


def recording_path(model: Path) -> Path:
    """Where `kinspect record` saves a model's session."""
    return model.with_name(model.stem + RECORDING_SUFFIX)


def rank_path(path: Path, rank: int) -> Path:
    """Where one rank of a torchrun job saves: the rank before `.session.json` (or before
    the file's last suffix), so `model.session.json` becomes `model.rank0.session.json`."""
    name = path.name
    if name.endswith(RECORDING_SUFFIX):
        return path.with_name(f"{name[:-len(RECORDING_SUFFIX)]}.rank{rank}{RECORDING_SUFFIX}")
    if path.suffix:
        return path.with_name(f"{path.stem}.rank{rank}{path.suffix}")
    return path.with_name(f"{name}.rank{rank}")


MAX_FILE_BYTES = 1 << 30


def save(session: Session, path: str | os.PathLike[str]) -> None:
    """Write atomically: a reader (or a crash) never sees a half-written session. What is
    written is read back by the same reader `load` uses first, so kinspect never leaves a
    file it would refuse; a session that fails that check leaves the old file in place."""
    target = output_path(path)
    text = dumps(session_to_json(session))
    try:
        session_from_json(json.loads(text))
    except SessionError as e:
        raise SessionError(f"{target}: not saved: the session would not read back ({e})") from None
    write_text(target, text, sync=True)


def output_path(name: str | os.PathLike[str], keep: Iterable[str | os.PathLike[str]] = ()) -> Path:
    """The file a user asked kinspect to write, checked before any work goes into it: a
    name (not empty, not `-`), in a folder that exists, and either new, a regular file
    (through any symlinks) that is writable and none of the files in `keep` (what the
    command reads: its session, its model), or a character device or pipe, which is
    written into."""
    text = os.fspath(name)
    if text == "":
        raise KinspectError("the output file name is empty; give a file name")
    if text == "-":
        raise KinspectError("-: kinspect writes a file, not standard output; give a file name (or /dev/stdout)")
    path = Path(text)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if path.is_symlink():
            raise KinspectError(f"{path}: is a symlink to {os.readlink(path)}, which does not exist") from None
        if not path.parent.is_dir():
            raise KinspectError(f"{path}: no such folder {path.parent}") from None
        _takes_files(path, path.parent)
        return path
    except OSError as e:
        raise KinspectError(f"cannot write {path}: {e.strerror}") from None
    if stat.S_ISDIR(mode):
        raise KinspectError(f"{path}: is a directory; give a file name")
    if not (stat.S_ISREG(mode) or stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):
        raise KinspectError(f"{path}: is not a regular file (a {_file_kind(mode)}); kinspect does not replace it")
    if stat.S_ISREG(mode):
        for kept in keep:
            with contextlib.suppress(OSError):
                if os.path.samefile(path, kept):
                    raise KinspectError(f"{path}: is {kept}, which this command reads; kinspect does not "
                                        "replace it: name another file")
        if not (mode & 0o222 and os.access(path, os.W_OK)):
            raise KinspectError(f"{path}: is read-only; kinspect does not replace it (make it writable, "
                                "or name another file)")
        _takes_files(path, Path(os.path.realpath(path)).parent)
    return path


def _takes_files(path: Path, folder: Path) -> None:
    """A file is written beside its target and renamed over it: refuse now, not after the
    work, a folder that takes no new file (`/proc`, a read-only mount)."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".kinspect-probe.", dir=folder)
    except OSError as e:
        raise KinspectError(f"cannot write {path}: its folder {folder} takes no new file ({e.strerror})") from None
    os.close(fd)
    os.unlink(tmp)


def _file_kind(mode: int) -> str:
    return "block device" if stat.S_ISBLK(mode) else "socket" if stat.S_ISSOCK(mode) else "special file"


def write_text(path: str | os.PathLike[str], text: str, sync: bool = False) -> None:
    """`write_with` for a text known whole."""
    write_with(path, lambda f: f.write(text.encode("utf-8")), sync)


def write_with(path: str | os.PathLike[str], fill: Callable[[BinaryIO], object], sync: bool = False) -> None:
    """Write a file the user named (`output_path`) so that nothing is lost on the way:
    `fill(f)` writes it (in pieces, so a large export never is one string). A regular
    file (the one a symlink points at; the link stays) is replaced atomically by a
    temporary file beside it renamed over it, keeping its permissions; a character
    device or pipe (`/dev/stdout`) is written into, never replaced by a file; on failure
    (a full disk, the file size limit, SIGTERM) the temporary file is removed and the
    target is as it was."""
    target = output_path(path)
    try:
        st = target.stat()
    except FileNotFoundError:
        st = None
    try:
        if st is not None and not stat.S_ISREG(st.st_mode):
            with open(target, "wb") as f:
                fill(f)
            return
        real = Path(os.path.realpath(target))
        fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    except OSError as e:
        raise KinspectError(f"cannot write {target}: {e.strerror or e}") from None
    try:
        # mkstemp makes 0600; a new session or report is meant to be shared, an existing one keeps its mode
        os.fchmod(fd, 0o644 if st is None else stat.S_IMODE(st.st_mode))
        with os.fdopen(fd, "wb") as f:
            fill(f)
            f.flush()
            if sync:
                os.fsync(f.fileno())
        os.replace(tmp, real)
    except BaseException as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise KinspectError(f"cannot write {target}: {e.strerror or e}") from None
        raise


def read_text(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> str:
    """A text file's contents, refused in one line if it is missing, not a regular file
    (a FIFO would block forever, `/dev/zero` never ends while its size reads 0), larger
    than `limit` or not UTF-8."""
    data = read_bytes(path, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SessionError(f"{path}: not UTF-8 text (byte {e.start})") from None


def read_bytes(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> bytes:
    """`read_text`'s file as bytes, with its checks but the decoding: a session is read
    from them without holding its text twice."""
    with opened(path, limit) as f:
        return f.read()


@contextlib.contextmanager
def opened(path: str | os.PathLike[str], limit: int = MAX_FILE_BYTES) -> Iterator[Bounded]:
    """A file to read, refused in one line (`read_text`'s refusals) before and while it
    is read: a file that grows past `limit` meanwhile is refused when it does."""
    path = Path(path)
    try:
        st = path.stat()
        if stat.S_ISDIR(st.st_mode):
            raise SessionError(f"{path}: is a directory, not a file")
        if not stat.S_ISREG(st.st_mode):
            kind = "pipe" if stat.S_ISFIFO(st.st_mode) else "character device" if stat.S_ISCHR(st.st_mode) else _file_kind(st.st_mode)
            raise SessionError(f"{path}: is not a regular file (a {kind}); kinspect reads files")
        if st.st_size > limit:
            raise SessionError(f"{path}: file is {st.st_size} bytes, more than kinspect reads ({limit})")
        f = open(path, "rb")
    except FileNotFoundError:
        raise SessionError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise SessionError(f"{path}: is a directory, not a file") from None
    except OSError as e:
        raise SessionError(f"{path}: cannot read ({e.strerror})") from None
    with f:
        yield Bounded(f, path, st.st_size, limit)


class Bounded:
    """A file read within a limit: its `read` refuses, in one line, a file grown past it
    or one the system fails to read."""

    def __init__(self, f: BinaryIO, path: Path, size: int, limit: int) -> None:
        self.f, self.path, self.size, self.limit, self.done = f, path, size, limit, 0

    def read(self, n: int = -1) -> bytes:
        try:
            if n >= 0:
                data = self.f.read(min(n, self.limit + 1 - self.done))
            else:  # the rest, read at the size the file had (a buffer that large is made first)
                data = self.f.read(max(self.size - self.done, 0) + 1)
                if len(data) > self.size - self.done:  # it grew since: read what fits the limit, then refuse
                    data += self.f.read(self.limit + 1 - self.done - len(data))
        except OSError as e:
            raise SessionError(f"{self.path}: cannot read ({e.strerror})") from None
        self.done += len(data)
        if self.done > self.limit:
            raise SessionError(f"{self.path}: file is more than {self.limit} bytes, more than kinspect reads")
        return data

    def rewind(self) -> None:
        self.f.seek(0)
        self.done = 0


def _decode(text: str | bytes, where: str) -> Any:
    try:
        return json.loads(text)
    except UnicodeDecodeError as e:
        raise SessionError(f"{where}: not UTF-8 text (byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise SessionError(f"{where}: not valid JSON (line {e.lineno} column {e.colno}: {e.msg})") from None
    except RecursionError:
        raise SessionError(f"{where}: JSON nested too deeply") from None
    except ValueError:  # Python refuses to convert integers of more than 4300 digits
        raise SessionError(f"{where}: holds a number too long to read") from None


def load(path: str | os.PathLike[str], names: Mapping[str, str] | None = None) -> Session:
    """Open a session file (`.json`) or a recording log (`.jsonl`) as a user sees it: its
    sizes named (from their sources where the user named none, then `names`, the user's
    renames: `kinspect.core.session.size_names`) and its findings derived afresh from its
    facts (`findings.refreshed`), so a recording made by an older kinspect shows what this
    one finds, by the names shown everywhere else."""
    with _collector_paused():
        session = read(path)
        session.symbols = with_source_names(session.symbols)
        rename(session, names or {})
        session.findings = refreshed(session)
    return session


def renamed(session: Session, names: Mapping[str, str]) -> Session:
    """A session opened already (a live compile's) with the user's renames of its sizes,
    its findings derived again to say them."""
    if names:
        rename(session, names)
        session.findings = refreshed(session)
    return session


def read(path: str | os.PathLike[str]) -> Session:
    """The session exactly as the file holds it, stored findings included; a TORCH_TRACE
    log (or a gzip of one) or a saved Inductor output-code module is read into one."""
    path = Path(path)
    if is_trace(path) or (path.is_dir() and trace_files(path)):
        with _collector_paused():
            return read_trace(path)
    if (path.suffix == ".py" and is_output_code(path)) or (path.is_dir() and output_code_files(path)):
        return read_output_code(path)
    with _collector_paused():
        doc = _document(path)
        if isinstance(doc, Session):
            return doc
        try:
            return session_from_json(doc)
        except SessionError as e:
            raise SessionError(f"{path}: {e}") from None
        except RecursionError:
            raise SessionError(f"{path}: JSON nested too deeply") from None


def _document(path: Path) -> Any:
    """A recording log's session, or a session file's JSON with its event columns read
    compactly as the file streams past (`columns.read_events`): a large session's text
    is never held whole beside its columns."""
    with opened(path) as f:
        first = f.read(1 << 16)
        if looks_like_log(first.decode("utf-8", "replace")):
            f.rewind()
            return load_log(f, str(path))
        f.rewind()
        read = read_events(f)
        if read is None:  # an events section laid out otherwise: json reads the file whole
            f.rewind()
            return _decode(f.read(), str(path))
    rest, events = read
    rest, keys = cut_keys(rest)
    doc = _decode(rest, str(path))
    if (events is not None or keys is not None) and (not isinstance(doc, dict) or (
            events is not None and doc.get("events") != {}) or (keys is not None and doc.get("keys") != [])):
        return _decode(read_bytes(path), str(path))  # a section cut was not the document's own: read it whole
    if events is not None:
        doc["events"] = events
    if keys is not None:
        doc["keys"] = keys
    return doc


def _collector_paused() -> AbstractContextManager[None]:
    """Reading a big session allocates millions of objects that all live on, and deriving
    its findings millions more; the cycle collector would walk them over and over
    meanwhile, for nothing (a third of the time, and more than half of the findings').
    Once it is back on, its first passes would still walk every one of them (two seconds
    for 300,000 measurements), so what is alive by then is frozen out of its passes:
    the session lives as long as the process, and its records hold no cycles, so
    reference counting frees them whenever they are dropped."""
    return collector_paused(freeze=True)
