"""`kinspect export`: a session as JSON, a Markdown report or a Perfetto trace. A report
gets the decision maps drawn beside it (`REPORT.map.png`) when matplotlib is installed and
something was measured at two or more sizes, and `kinspect compare`'s chart
(`REPORT.compare.png`) when the session has a comparison; it links them."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from kinspect.core.errors import KinspectError
from kinspect.commands.rank_sessions import is_merged, load_merged
from kinspect.commands.terminal import say
from kinspect.core.export import export, export_ranks
from kinspect.core.store import load, output_path


def add_args(x: argparse.ArgumentParser) -> None:
    x.add_argument("session", nargs="+", help="a session; several rank sessions or a folder of them: perfetto only")
    x.add_argument("--format", required=True, choices=("json", "md", "perfetto"), dest="format")
    x.add_argument("-o", "--output", required=True, metavar="FILE", help="file to write")


def run(args: argparse.Namespace) -> int:
    paths, fmt, out = list(args.session), args.format, args.output
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
    target = output_path(out)
    beside = fmt == "md" and (not target.exists() or target.is_file())  # images go beside a file, not a device
    drawn: list[tuple[Path, Path]] = []
    """Images drawn under temporary names, renamed to theirs once the report is written."""
    try:
        images = _maps_beside(session, target, drawn) if beside else []
        chart = _chart_beside(session, target, drawn) if beside else None
        export(session, fmt, target, images, chart)
        for tmp, final in drawn:
            if final.name in images or final.name == chart:
                os.replace(tmp, final)
            else:
                tmp.unlink(missing_ok=True)
    except BaseException:
        for tmp, _ in drawn:
            tmp.unlink(missing_ok=True)
        raise
    say(f"wrote {out} ({fmt}, {len(session.events)} events" + (f", maps in {images[0]}" if images else "")
        + (f", comparison in {chart}" if chart else "") + ")")
    return 0


def _temporary(final: Path, drawn: list[tuple[Path, Path]]) -> Path:
    """Where an image is drawn until the report is written (a draw that fails may leave it)."""
    tmp = final.with_name(f".{final.stem}.{os.getpid()}{final.suffix}")
    drawn.append((tmp, final))
    return tmp


def _chart_beside(session, report: Path, drawn: list[tuple[Path, Path]]) -> str | None:  # type: ignore[no-untyped-def]
    from kinspect.core.quality.comparison import comparison
    from kinspect.images import draw_comparison

    if comparison(session) is None:
        return None
    image = report.with_name(report.stem + ".compare.png")
    try:
        draw_comparison(session, _temporary(image, drawn))
    except KinspectError as e:  # no matplotlib: the report's table says it all the same
        say(f"kinspect: no comparison image: {e}", err=True)
        return None
    return image.name


def _maps_beside(session, report: Path, drawn: list[tuple[Path, Path]]) -> list[str]:  # type: ignore[no-untyped-def]
    from kinspect.images import draw

    image = report.with_name(report.stem + ".map.png")
    try:
        draw(session, _temporary(image, drawn))
    except KinspectError as e:  # no matplotlib, or nothing measured at two sizes: the report says the rest
        say(f"kinspect: no decision-map image: {e}", err=True)
        return []
    return [image.name]
