"""`kinspect open S.json`: the inspector on a recorded session, on any machine (several rank
sessions of a torchrun job, or their folder, open together)."""

from __future__ import annotations

import argparse

from kinspect.commands import inspect
from kinspect.commands.options import name_flag, renames


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", nargs="+", help="a session file; several rank sessions or a folder of them merge")
    name_flag(parser)


def run(args: argparse.Namespace) -> int:
    return inspect.open_session(args.session, renames(args))
