"""A session's export written whole, with the images a Markdown report links beside it.

`kinspect export` and the inspector's export dialog both write through `write`, so the
report a user gets is the same from either: the decision maps (`REPORT.map.png`) when
matplotlib is installed and something was measured at two or more sizes, and
`kinspect compare`'s chart (`REPORT.compare.png`) when the session has a comparison.
Images are drawn under temporary names and take theirs only once the report is written,
so a report that fails leaves no image behind and never links one that is not there.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kinspect.core.errors import KinspectError
from kinspect.core.export import export
from kinspect.core.session.model import Session
from kinspect.core.store import output_path


@dataclass
class Written:
    """What `write` put on disk beside the export, and why an image is missing."""

    images: list[str] = field(default_factory=list)
    """The decision maps' file names, beside the report."""
    chart: str | None = None
    """The comparison chart's file name, beside the report."""
    notes: list[str] = field(default_factory=list)
    """One line per image that could not be drawn (no matplotlib, nothing to draw)."""


def write(session: Session, fmt: str, out: str | os.PathLike[str], inductor_names: bool = False,
          keep: Sequence[str | os.PathLike[str]] = ()) -> Written:
    """Export `session` as `fmt` into `out`, which may be none of the files in `keep` (the
    session's own file); a Markdown report gets its images beside it (only beside a
    regular file: a device or a pipe has no folder to put them in)."""
    target = output_path(out, keep)
    written = Written()
    beside = fmt == "md" and (not target.exists() or target.is_file())
    drawn: list[tuple[Path, Path]] = []
    try:
        if beside:
            written.images = _maps_beside(session, target, drawn, written.notes)
            written.chart = _chart_beside(session, target, drawn, written.notes)
        export(session, fmt, target, written.images, written.chart, inductor_names)
        for tmp, final in drawn:
            if final.name in written.images or final.name == written.chart:
                os.replace(tmp, final)
            else:
                tmp.unlink(missing_ok=True)
    except BaseException:
        for tmp, _ in drawn:
            tmp.unlink(missing_ok=True)
        raise
    return written


def _temporary(final: Path, drawn: list[tuple[Path, Path]]) -> Path:
    """Where an image is drawn until the report is written: a new file of this process's
    own beside it. The image's own name is checked first, as the report's is: a folder
    or a read-only file there is said in a note, and the report goes without it."""
    output_path(final)
    fd, name = tempfile.mkstemp(prefix=f".{final.stem}.", suffix=final.suffix, dir=final.parent)
    os.close(fd)
    tmp = Path(name)
    drawn.append((tmp, final))
    return tmp


def _chart_beside(session: Session, report: Path, drawn: list[tuple[Path, Path]], notes: list[str]) -> str | None:
    from kinspect.core.quality.comparison import comparison
    from kinspect.images import draw_comparison

    if comparison(session) is None:
        return None
    image = report.with_name(report.stem + ".compare.png")
    try:
        draw_comparison(session, _temporary(image, drawn))
    except KinspectError as e:  # no matplotlib: the report's table says it all the same
        notes.append(f"no comparison image: {e}")
        return None
    return image.name


def _maps_beside(session: Session, report: Path, drawn: list[tuple[Path, Path]], notes: list[str]) -> list[str]:
    from kinspect.images import draw

    if not session.measurements:  # a trace: the report's Quality section says which variant runs where
        return []
    image = report.with_name(report.stem + ".map.png")
    try:
        draw(session, _temporary(image, drawn))
    except KinspectError as e:  # no matplotlib, or nothing measured at two sizes: the report says the rest
        notes.append(f"no decision-map image: {e}")
        return []
    return [image.name]
