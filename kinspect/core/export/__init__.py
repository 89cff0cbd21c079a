"""Writing a session out for other tools: JSON, a Markdown report, a Perfetto trace.

`kinspect export` and the inspector's export key both come here. Each file is written
by `kinspect.core.store.write_with`: whole or not at all, never replacing a device or a
symlink with a file, keeping an existing file's permissions; a Perfetto trace is written
piece by piece, never held as one string.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence

from kinspect.core.errors import KinspectError
from kinspect.core.export import perfetto, report_md
from kinspect.core.ranks.merged import MergedRanks
from kinspect.core.session.model import Session
from kinspect.core.store import output_path, save, write_text, write_with

FORMATS = ("json", "md", "perfetto")


def render(session: Session, fmt: str, images: Sequence[str] = (), chart: str | None = None,
           inductor_names: bool = False) -> str:
    """The text of a Markdown or Perfetto export (JSON goes through `kinspect.core.store.save`);
    `images` are files beside a Markdown report that it links (decision maps); the report
    names shapes and tensors by the user's names unless `inductor_names`."""
    if fmt == "md":
        return report_md.render(session, images, chart, inductor_names)
    if fmt == "perfetto":
        out = io.BytesIO()
        perfetto.write_trace(out, session)
        return out.getvalue().decode("utf-8")
    raise KinspectError(f"unknown export format {fmt!r}; known: {', '.join(FORMATS)}")


def export(session: Session, fmt: str, path: str | os.PathLike[str], images: Sequence[str] = (),
           chart: str | None = None, inductor_names: bool = False) -> None:
    if fmt not in FORMATS:
        raise KinspectError(f"unknown export format {fmt!r}; known: {', '.join(FORMATS)}")
    if fmt == "json":
        save(session, path)
    elif fmt == "perfetto":
        write_with(output_path(path), lambda f: (perfetto.write_trace(f, session), f.write(b"\n")))
    else:
        write_text(output_path(path), render(session, fmt, images, chart, inductor_names) + "\n")


def export_ranks(merged: MergedRanks, path: str | os.PathLike[str], keep: Sequence[str | os.PathLike[str]] = ()) -> None:
    """A torchrun job's rank sessions as one Perfetto trace, a process per rank; `path`
    may be none of the files in `keep` (the rank sessions)."""
    target = output_path(path, keep)
    write_with(target, lambda f: (perfetto.write_ranks_trace(f, merged), f.write(b"\n")))
