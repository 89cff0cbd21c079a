"""The subcommands, one module each: `add_args(parser)` declares the command's arguments and
`run(args)` does its work. `COMMANDS` is the one list of them: `kinspect --help`, the
parser and the dispatch are all built from it, so a new subcommand is its module plus one
line here.

A command's module is imported only when that command runs: `kinspect model.py` opens the
inspector in under a second, and importing every command's module (rich tables, the
quality analysis, the exports) would add about 0.3 s to it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    module: str = ""
    """The module under `kinspect.commands` holding `add_args` and `run` (default: `name`)."""

    def load(self) -> ModuleType:
        return importlib.import_module(f"{__name__}.{self.module or self.name}")


COMMANDS = (
    Command("open", "open a recorded session (or a torchrun job's rank sessions, or their folder)", "open_session"),
    Command("explain", "headless: what each site picks for a shape"),
    Command("export", "write a session as JSON, a Markdown report or a Perfetto trace"),
    Command("record", "headless: compile model.py with hints on the GPU, run it, save the session"),
    Command("run", "record an unmodified program: kinspect run [options] script.py ARGS... (or -m module ARGS...)"),
    Command("sweep", "GPU: time every variant of every site across a range of sizes; save the map"),
    Command("compare", "GPU: the whole model hinted, oracle, exact_hint, static and eager at each shape"),
    Command("advise", "GPU: propose the hints that cost the workload least, verified by compiling them"),
    Command("plot", "draw each site's decision map as an image (.png or .svg; needs matplotlib)"),
    Command("inspect", "the default: kinspect PATH opens model.py live (CUDA) or its recording, or a session"),
)

DEFAULT = "inspect"
"""The command a path given alone runs: `kinspect model.py` is `kinspect inspect model.py`."""
