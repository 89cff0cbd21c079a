"""`kinspect export`: a session as JSON, a Markdown report or a Perfetto trace. A report
gets the decision maps drawn beside it (`REPORT.map.png`) when matplotlib is installed and
something was measured at two or more sizes, and `kinspect compare`'s chart
(`REPORT.compare.png`) when the session has a comparison; it links them
(`kinspect.report_files`, which the inspector's export writes through too)."""

from __future__ import annotations

import argparse

from kinspect.commands.options import name_flag, renames
from kinspect.core.errors import KinspectError
from kinspect.commands.rank_sessions import is_merged, load_merged, rank_files
from kinspect.core.printing import say
from kinspect.core.export import export_ranks
from kinspect.core.store import load
from kinspect.report_files import write


def add_args(x: argparse.ArgumentParser) -> None:
    x.add_argument("session", nargs="+", help="a session; several rank sessions or a folder of them: perfetto only")
    x.add_argument("--format", required=True, choices=("json", "md", "perfetto"), dest="format")
    x.add_argument("-o", "--output", required=True, metavar="FILE", help="file to write")
    x.add_argument("--inductor-names", action="store_true",
                   help="md: shapes and tensors by Inductor's names (the whole key, arg3_1 (s33, 1024)), "
                        "not yours (B=1000, x (B, 1024))")
    name_flag(x)


def run(args: argparse.Namespace) -> int:
    paths, fmt, out = list(args.session), args.format, args.output
    if is_merged(paths):
        if fmt != "perfetto":
            raise KinspectError(f"--format {fmt} takes one session; a torchrun job's rank sessions export "
                                "together as --format perfetto (a process per rank)")
        merged = load_merged(paths)
        export_ranks(merged, out, keep=rank_files(paths))
        events = sum(len(s.events) for s in merged.sessions)
        say(f"wrote {out} (perfetto, ranks {', '.join(map(str, merged.ranks))}, {events} events)")
        return 0
    session = load(paths[0], renames(args))
    written = write(session, fmt, out, args.inductor_names, keep=paths)
    for note in written.notes:
        say(f"kinspect: {note}", err=True)
    images, chart = written.images, written.chart
    say(f"wrote {out} ({fmt}, {len(session.events)} events" + (f", maps in {images[0]}" if images else "")
        + (f", comparison in {chart}" if chart else "") + ")")
    return 0
