"""`load` and `save`: a session on disk, read within limits and written atomically.

`load` takes either form, a session file or a recording log (a killed recording leaves a
log whose last line may be cut, which still opens, marked truncated), and tells them
apart by their first line, whatever the file's extension.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from contextlib import AbstractContextManager
from pathlib import Path
from collections.abc import Mapping
from typing import Any

from kinspect.core.errors import KinspectError, SessionError
from kinspect.core.quality.findings import refreshed
from kinspect.core.session.model import Session
from kinspect.core.session.records import collector_paused
from kinspect.core.session.size_names import rename, with_source_names
from kinspect.core.session.format.log import load_log, looks_like_log
from kinspect.core.session.format.document import dumps, session_from_json, session_to_json

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


def output_path(name: str | os.PathLike[str]) -> Path:
    """The file a user asked kinspect to write, checked before any work goes into it: a
    name (not empty, not `-`), in a folder that exists, and either new, a regular file
    (through any symlinks), or a character device or pipe, which is written into."""
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
    """Write a file the user named (`output_path`) so that nothing is lost on the way:
    a regular file (the one a symlink points at; the link stays) is replaced atomically
    by a temporary file beside it renamed over it, keeping its permissions; a character
    device or pipe (`/dev/stdout`) is written into, never replaced by a file; on failure
    the temporary file is removed and the target is as it was."""
    target = output_path(path)
    try:
        st = target.stat()
    except FileNotFoundError:
        st = None
    try:
        if st is not None and not stat.S_ISREG(st.st_mode):
            with open(target, "w", encoding="utf-8") as f:
                f.write(text)
            return
        real = Path(os.path.realpath(target))
        fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    except OSError as e:
        raise KinspectError(f"cannot write {target}: {e.strerror or e}") from None
    try:
        # mkstemp makes 0600; a new session or report is meant to be shared, an existing one keeps its mode
        os.fchmod(fd, 0o644 if st is None else stat.S_IMODE(st.st_mode))
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
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
        with open(path, encoding="utf-8") as f:
            text = f.read(limit + 1)
        if len(text) > limit:
            raise SessionError(f"{path}: file is more than {limit} bytes, more than kinspect reads")
        return text
    except FileNotFoundError:
        raise SessionError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise SessionError(f"{path}: is a directory, not a file") from None
    except UnicodeDecodeError as e:
        raise SessionError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise SessionError(f"{path}: cannot read ({e.strerror})") from None


def _decode(text: str, where: str) -> Any:
    try:
        return json.loads(text)
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
    """The session exactly as the file holds it, stored findings included."""
    path = Path(path)
    text = read_text(path)
    with _collector_paused():
        if looks_like_log(text):
            return load_log(text, str(path))
        data = _decode(text, str(path))
        try:
            return session_from_json(data)
        except SessionError as e:
            raise SessionError(f"{path}: {e}") from None
        except RecursionError:
            raise SessionError(f"{path}: JSON nested too deeply") from None


def _collector_paused() -> AbstractContextManager[None]:
    """Reading a big session allocates millions of objects that all live on, and deriving
    its findings millions more; the cycle collector would walk them over and over
    meanwhile, for nothing (a third of the time, and more than half of the findings').
    Once it is back on, its first passes would still walk every one of them (two seconds
    for 300,000 measurements), so what is alive by then is frozen out of its passes:
    the session lives as long as the process, and its records hold no cycles, so
    reference counting frees them whenever they are dropped."""
    return collector_paused(freeze=True)
