"""`kinspect export`: a session as JSON, a Markdown report or a Perfetto trace. A report
gets the decision maps drawn beside it (`REPORT.map.png`) when matplotlib is installed and
something was measured at two or more sizes, and `kinspect compare`'s chart
(`REPORT.compare.png`) when the session has a comparison; it links them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kinspect.core.errors import KinspectError
from kinspect.commands.rank_sessions import is_merged, load_merged
from kinspect.commands.terminal import say
from kinspect.core.export import export, export_ranks
from kinspect.core.store import load


def run(session_path: str | Sequence[str], fmt: str, out: str) -> int:
    paths = [session_path] if isinstance(session_path, str) else list(session_path)
    if is_merged(paths):
        if fmt != "perfetto":
            raise KinspectError(f"--format {fmt} takes one session; a torchrun job's rank sessions export "
                                "together as --format perfetto (a process per rank)")
        merged = load_merged(paths)
        export_ranks(merged, out)
        events = sum(len(s.events) for s in merged.sessions)
        say(f"wrote {out} (perfetto, ranks {', '.join(map(str, merged.ranks))}, {events} events)")
        return 0
    session = load(paths[0])
    target = Path(out)
    writable = target.parent.is_dir() and not target.is_dir()  # else export says why, in one line
    images = _maps_beside(session, target) if fmt == "md" and writable else []
    chart = _chart_beside(session, target) if fmt == "md" and writable else None
    export(session, fmt, out, images, chart)
    say(f"wrote {out} ({fmt}, {len(session.events)} events" + (f", maps in {images[0]}" if images else "")
          + (f", comparison in {chart}" if chart else "") + ")")
    return 0


def _chart_beside(session, report: Path) -> str | None:  # type: ignore[no-untyped-def]
    from kinspect.core.quality.comparison import comparison
    from kinspect.images import draw_comparison

    if comparison(session) is None:
        return None
    image = report.with_name(report.stem + ".compare.png")
    try:
        draw_comparison(session, image)
    except KinspectError as e:  # no matplotlib: the report's table says it all the same
        say(f"kinspect: no comparison image: {e}", err=True)
        return None
    return image.name


def _maps_beside(session, report: Path) -> list[str]:  # type: ignore[no-untyped-def]
    from kinspect.images import draw

    image = report.with_name(report.stem + ".map.png")
    try:
        draw(session, image)
    except KinspectError as e:  # no matplotlib, or nothing measured at two sizes: the report says the rest
        say(f"kinspect: no decision-map image: {e}", err=True)
        return []
    return [image.name]
