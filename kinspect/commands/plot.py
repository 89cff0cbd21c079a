"""`kinspect plot S.json -o map.png`: every site's decision map as an image (PNG or SVG)."""

from __future__ import annotations

import argparse
from kinspect.commands.options import name_flag, renames
from kinspect.core.printing import say
from kinspect.core.store import load, output_path


def add_args(pl: argparse.ArgumentParser) -> None:
    pl.add_argument("session")
    pl.add_argument("-o", "--output", required=True, metavar="FILE", help="image file: .png or .svg")
    pl.add_argument("--site", help="only this site")
    name_flag(pl)


def run(args: argparse.Namespace) -> int:
    from kinspect.images import draw

    out = args.output
    output_path(out, keep=[args.session])
    n = draw(load(args.session, renames(args)), out, args.site)
    say(f"wrote {out} ({n} map{'s' if n != 1 else ''})")
    return 0
