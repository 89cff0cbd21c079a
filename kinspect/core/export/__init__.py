"""Writing a session out for other tools: JSON, a Markdown report, a Perfetto trace.

`kinspect export` and the inspector's export key both come here. Each file is written
whole or not at all (a temporary file renamed into place), so an interrupted export
never leaves half a report where a previous one was.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from kinspect.core.errors import KinspectError
from kinspect.core.export import perfetto, report_md
from kinspect.core.ranks.merged import MergedRanks
from kinspect.core.session.model import Session
from kinspect.core.store import save

FORMATS = ("json", "md", "perfetto")


def render(session: Session, fmt: str, images: Sequence[str] = (), chart: str | None = None) -> str:
    """The text of a Markdown or Perfetto export (JSON goes through `kinspect.core.store.save`);
    `images` are files beside a Markdown report that it links (decision maps)."""
    if fmt == "md":
        return report_md.render(session, images, chart)
    if fmt == "perfetto":
        return json.dumps(perfetto.trace(session), ensure_ascii=False, separators=(",", ":"))
    raise KinspectError(f"unknown export format {fmt!r}; known: {', '.join(FORMATS)}")


def export(session: Session, fmt: str, path: str | os.PathLike[str], images: Sequence[str] = (),
           chart: str | None = None) -> None:
    path = Path(path)
    if fmt not in FORMATS:
        raise KinspectError(f"unknown export format {fmt!r}; known: {', '.join(FORMATS)}")
    if path.is_dir():
        raise KinspectError(f"{path}: is a directory; give a file name")
    try:
        if fmt == "json":
            save(session, path)
        else:
            _write(path, render(session, fmt, images, chart))
    except OSError as e:
        raise KinspectError(f"cannot write {path}: {e.strerror or e}") from None


def export_ranks(merged: MergedRanks, path: str | os.PathLike[str]) -> None:
    """A torchrun job's rank sessions as one Perfetto trace, a process per rank."""
    path = Path(path)
    if path.is_dir():
        raise KinspectError(f"{path}: is a directory; give a file name")
    try:
        _write(path, json.dumps(perfetto.ranks_trace(merged), ensure_ascii=False, separators=(",", ":")))
    except OSError as e:
        raise KinspectError(f"cannot write {path}: {e.strerror or e}") from None


def _write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o644)  # mkstemp makes 0600; a report is meant to be shared, as a session is
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
