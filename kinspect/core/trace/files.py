"""The files a user names for a trace: a log, a `.gz` of one, a folder of per-rank logs
(`TORCH_TRACE=/dir` writes `dedicated_log_torch_trace_rank_N_*.log`), or a saved Inductor
output-code module. A file is told by its first bytes, whatever its name. Telling is all
that opening a session file needs of this: the readers are imported when a trace is read.
"""

from __future__ import annotations

import gzip
import io
import itertools
import os
import re
import stat
import zlib
from pathlib import Path
from typing import BinaryIO

from typing import TYPE_CHECKING

from kinspect.core.errors import SessionError, echo

if TYPE_CHECKING:
    from kinspect.core.session.model import Session
    from kinspect.core.trace.log import TraceLog

_HEAD = re.compile(rb"^(?:\[rank\d+\]:)?[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]\n]*\](?: \[[^\]\n]*\])* \{\"")
_OUTPUT_CODE = (b"async_compile = AsyncCompile()", b"from torch._inductor.async_compile import AsyncCompile")
_RANK = re.compile(r"rank_(\d+)_")
GZIP_MAGIC = b"\x1f\x8b"
MAX_CODE = 256 * 1024 * 1024
MAX_GRAPHS = 10_000


def _head(path: Path, size: int = 65536) -> bytes:
    """The first bytes of a regular file (decompressed, for a gzip file); empty for
    anything else (a folder, a pipe, a file that cannot be read)."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return b""
        with open(path, "rb") as f:
            raw = f.read(size)
        if raw[:2] == GZIP_MAGIC:
            with gzip.open(path, "rb") as g:
                return g.read(size)
        return raw
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile):
        return b""


def is_trace(path: str | os.PathLike[str]) -> bool:
    """A TORCH_TRACE log (or a gzip of one): its first line is a trace entry."""
    return bool(_HEAD.match(_head(Path(path), 4096)))


def is_output_code(path: str | os.PathLike[str]) -> bool:
    """A module Inductor wrote for a graph (its `AsyncCompile` near the top)."""
    head = _head(Path(path))
    return any(marker in head for marker in _OUTPUT_CODE)


def trace_files(folder: Path) -> list[Path]:
    """The trace logs in a folder, by rank then name."""
    try:
        found = [f for f in folder.iterdir() if f.name.startswith("dedicated_log_torch_trace") or
                 f.suffix in (".log", ".gz")]
    except OSError:
        return []
    logs = [f for f in found if is_trace(f)]
    return sorted(logs, key=lambda f: (rank_of(f) if rank_of(f) is not None else -1, f.name))


def rank_of(path: Path) -> int | None:
    m = _RANK.search(path.name)
    return int(m[1]) if m else None


def ranked(folder: Path) -> list[Path]:
    """The folder's logs that name their rank: one per rank of a distributed job."""
    return [f for f in trace_files(folder) if rank_of(f) is not None]


def read_trace(path: str | os.PathLike[str]) -> Session:
    """The session a log makes (streamed: a trace may be hundreds of MB), or a folder's
    logs that name no rank: one program's processes (a job's main process and the
    processes Inductor autotunes in), their compiles together."""
    from kinspect.core.trace.sessions import session_from_log, trace_name

    path = Path(path)
    if path.is_dir():
        logs = [_log(f) for f in trace_files(path)]
        if not logs:
            raise SessionError(f"{path}: holds no TORCH_TRACE log (dedicated_log_torch_trace_*.log)")
        return session_from_log(_together(logs), path.name, path.name)
    return session_from_log(_log(path), path.name, trace_name(path))


def _log(path: Path) -> TraceLog:
    from kinspect.core.trace.log import read_log

    with _opened(path) as stream:
        log = read_log(stream)
    raw = getattr(stream, "raw", None)
    if isinstance(raw, _Gunzip) and raw.cut_short:
        log.reading.cut_short = log.reading.cut_short or f"the gzip file ends early ({raw.cut_short})"
    if log.rank is None:
        log.rank = rank_of(path)
    return log


def _together(logs: list[TraceLog]) -> TraceLog:
    """Several processes' logs as one: compile ids name their process where more than one
    compiled a graph (both would say `[0/0]`)."""
    from kinspect.core.trace.framing import Reading
    from kinspect.core.trace.log import TraceLog

    compiling = [log for log in logs if any(c.codes for c in log.compiles)]
    if len(compiling) == 1:
        return compiling[0]
    reading = Reading()
    compiles = []
    for log in compiling or logs[:1]:
        for c in log.compiles:
            c.id = f"{c.pid}:{c.id}"
            compiles.append(c)
        r = log.reading
        reading.garbage += r.garbage
        reading.long_lines += r.long_lines
        reading.damaged += r.damaged
        reading.cut_short = reading.cut_short or r.cut_short
    return TraceLog(compiles, reading, None)


def output_code_files(folder: Path) -> list[Path]:
    """The graphs' modules of a `TORCH_COMPILE_DEBUG=1` folder (`.../torchinductor/<graph>/output_code.py`)."""
    try:
        return sorted(p for p in itertools.islice(folder.rglob("output_code.py"), MAX_GRAPHS) if is_output_code(p))
    except OSError:
        return []


def read_output_code(path: str | os.PathLike[str]) -> Session:
    """A saved output-code module, or a debug folder's, each a graph named by its folder."""
    from kinspect.core.trace.sessions import session_from_codes

    path = Path(path)
    if path.is_dir():
        files = output_code_files(path)
        if not files:
            raise SessionError(f"{path}: holds no output_code.py of Inductor's")
        return session_from_codes([(_code_text(f), str(f), f.parent.name) for f in files], path.name, path.name)
    return session_from_codes([(_code_text(path), path.name, "-")], path.name, path.stem)


def _code_text(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_CODE + 1)
    except OSError as e:
        raise SessionError(f"{path}: cannot read ({e.strerror})") from None
    if len(raw) > MAX_CODE:
        raise SessionError(f"{path}: more than {MAX_CODE // 2**20} MiB, more than kinspect reads of output code")
    return raw.decode("utf-8", "replace")


class _Gunzip(io.RawIOBase):
    """A gzip stream that ends where the file does: a `.gz` cut short (a copy that died)
    gives what it holds, and says why it ended."""

    def __init__(self, path: Path) -> None:
        self._g = gzip.open(path, "rb")
        self.cut_short: str | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self.cut_short:
            return 0
        try:
            data = self._g.read(len(buffer))
        except (EOFError, zlib.error, gzip.BadGzipFile, OSError) as e:
            self.cut_short = str(e)[:200] or type(e).__name__
            return 0
        buffer[:len(data)] = data
        return len(data)

    def close(self) -> None:
        self._g.close()
        super().close()


def _opened(path: Path) -> BinaryIO:
    try:
        st = path.stat()
    except FileNotFoundError:
        raise SessionError(f"{path}: no such file") from None
    except OSError as e:
        raise SessionError(f"{path}: cannot read ({e.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise SessionError(f"{path}: is not a regular file; kinspect reads files")
    try:
        with open(path, "rb") as f:
            gz = f.read(2) == GZIP_MAGIC
        if gz:
            return io.BufferedReader(_Gunzip(path), 1 << 20)  # type: ignore[return-value]
        return open(path, "rb", buffering=1 << 20)
    except OSError as e:
        raise SessionError(f"{echo(str(path))}: cannot read ({e.strerror})") from None
