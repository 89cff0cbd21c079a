"""`kinspect export`: a session as JSON, a Markdown report or a Perfetto trace. A report
gets the decision maps drawn beside it (`REPORT.map.png`) when matplotlib is installed and
something was measured at two or more sizes, and `kinspect compare`'s chart
(`REPORT.compare.png`) when the session has a comparison; it links them."""

from __future__ import annotations

import sys
from pathlib import Path

from kinspect.core.errors import KinspectError
from kinspect.core.export import export
from kinspect.core.sessionfile.files import load


def run(session_path: str, fmt: str, out: str) -> int:
    session = load(session_path)
    target = Path(out)
    writable = target.parent.is_dir() and not target.is_dir()  # else export says why, in one line
    images = _maps_beside(session, target) if fmt == "md" and writable else []
    chart = _chart_beside(session, target) if fmt == "md" and writable else None
    export(session, fmt, out, images, chart)
    print(f"wrote {out} ({fmt}, {len(session.events)} events" + (f", maps in {images[0]}" if images else "")
          + (f", comparison in {chart}" if chart else "") + ")")
    return 0


def _chart_beside(session, report: Path) -> str | None:  # type: ignore[no-untyped-def]
    from kinspect.core.comparison import comparison
    from kinspect.images import draw_comparison

    if comparison(session) is None:
        return None
    image = report.with_name(report.stem + ".compare.png")
    try:
        draw_comparison(session, image)
    except KinspectError as e:  # no matplotlib: the report's table says it all the same
        print(f"kinspect: no comparison image: {e}", file=sys.stderr)
        return None
    return image.name


def _maps_beside(session, report: Path) -> list[str]:  # type: ignore[no-untyped-def]
    from kinspect.images import draw

    image = report.with_name(report.stem + ".map.png")
    try:
        draw(session, image)
    except KinspectError as e:  # no matplotlib, or nothing measured at two sizes: the report says the rest
        print(f"kinspect: no decision-map image: {e}", file=sys.stderr)
        return []
    return [image.name]
