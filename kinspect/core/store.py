"""`load` and `save`: a session on disk, read within limits and written atomically.

`load` takes either form, a session file or a recording log (a killed recording leaves a
log whose last line may be cut, which still opens, marked truncated), and tells them
apart by their first line, whatever the file's extension.
"""

from __future__ import annotations

import gc
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kinspect.core.errors import SessionError
from kinspect.core.quality.findings import refreshed
from kinspect.core.session.model import Session
from kinspect.core.session.format.log import _load_log, _looks_like_log
from kinspect.core.session.format.read import session_from_json
from kinspect.core.session.format.write import _dumps, session_to_json

MAX_FILE_BYTES = 1 << 30


def save(session: Session, path: str | os.PathLike[str]) -> None:
    """Write atomically: a reader (or a crash) never sees a half-written session. What is
    written is read back by the same reader `load` uses first, so kinspect never leaves a
    file it would refuse; a session that fails that check leaves the old file in place."""
    path = Path(path)
    text = _dumps(session_to_json(session))
    try:
        session_from_json(json.loads(text))
    except SessionError as e:
        raise SessionError(f"{path}: not saved: the session would not read back ({e})") from None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        os.fchmod(fd, 0o644)  # mkstemp makes 0600; a session is meant to be shared
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise SessionError(f"{path}: file is {size} bytes, more than kinspect reads ({MAX_FILE_BYTES})")
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SessionError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise SessionError(f"{path}: is a directory, not a session file") from None
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


def load(path: str | os.PathLike[str]) -> Session:
    """Open a session file (`.json`) or a recording log (`.jsonl`) as a user sees it: its
    findings derived afresh from its facts (`findings.refreshed`), so a recording made by
    an older kinspect shows what this one finds."""
    session = read(path)
    session.findings = refreshed(session)
    return session


def read(path: str | os.PathLike[str]) -> Session:
    """The session exactly as the file holds it, stored findings included."""
    path = Path(path)
    text = _read_text(path)
    with _collector_paused():
        if _looks_like_log(text):
            session = _load_log(text, str(path))
        else:
            data = _decode(text, str(path))
            try:
                session = session_from_json(data)
            except SessionError as e:
                raise SessionError(f"{path}: {e}") from None
            except RecursionError:
                raise SessionError(f"{path}: JSON nested too deeply") from None
    return session


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Reading a big session allocates millions of objects that all live on; the cycle
    collector would walk them over and over meanwhile, for nothing (a third of the time)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
