"""Running a program as `python script.py ARGS` or `python -m module ARGS` would.

kinspect records the program from inside its own process, so the program must not see
kinspect there: its `sys.argv` is its own, it runs as `__main__`, `sys.path[0]` is its
folder (a module's: the working directory), and what it prints, reads, raises and exits
with is its own. The traceback of a program that raises leaves kinspect's frames out,
as Python's would have none of them.
"""

from __future__ import annotations

import importlib.util
import os
import runpy
import sys
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path

from kinspect.core.errors import KinspectError, echo

_KINSPECT = str(Path(__file__).resolve().parents[1])


@dataclass(frozen=True)
class Program:
    script: str | None
    module: str | None
    argv: tuple[str, ...]

    @staticmethod
    def parse(module: list[str] | None, program: list[str]) -> Program:
        """From `kinspect run`'s `-m MODULE ARGS...` or `script.py ARGS...`; one line for a
        program that is not there."""
        if module is not None:
            if not module:
                raise KinspectError("kinspect run -m needs a module name: kinspect run -m package.module ARGS...")
            name, *argv = module
            try:
                found = importlib.util.find_spec(name)
            except (ImportError, ValueError) as e:
                raise KinspectError(f"no module named {echo(name)}: {echo(str(e))}") from None
            if found is None:
                raise KinspectError(f"no module named {echo(name)} (from {os.getcwd()})")
            return Program(None, name, tuple(argv))
        if not program:
            raise KinspectError("kinspect run needs a program: kinspect run script.py ARGS... or -m package.module ARGS...")
        script, *argv = program
        if not Path(script).is_file():
            raise KinspectError(f"{echo(script)}: no such file")
        return Program(script, None, tuple(argv))

    @property
    def name(self) -> str:
        """What the session calls it: the script's path, or the module."""
        return self.script if self.script is not None else f"-m {self.module}"

    def session_path(self) -> Path:
        """Where its session goes by default: beside the script (`script.session.json`), or
        in the working directory for a module (`package.module.session.json`)."""
        if self.script is not None:
            path = Path(self.script)
            return path.with_name(path.stem + ".session.json")
        return Path(f"{self.module}.session.json")

    def files(self) -> tuple[str, ...]:
        """The program's own file, which no output may replace."""
        if self.script is not None:
            return (self.script,)
        try:
            origin = getattr(importlib.util.find_spec(self.module or ""), "origin", None)
        except (ImportError, ValueError):
            origin = None
        return (origin,) if origin else ()

    def run(self) -> None:
        """Run it as Python would, here, and wait for the threads it leaves running as
        Python does before it exits; its exceptions (SystemExit too) propagate."""
        saved_argv, saved_path0 = list(sys.argv), sys.path[0] if sys.path else None
        if self.script is not None:
            sys.argv = [self.script, *self.argv]
            _set_path0(str(Path(self.script).resolve().parent))
            try:
                runpy.run_path(self.script, run_name="__main__")
            finally:
                sys.argv = saved_argv
                _set_path0(saved_path0)
                _wait_for_threads()
            return
        sys.argv = [self.module or "", *self.argv]  # run_module puts the module's file first
        _set_path0(os.getcwd())
        try:
            runpy.run_module(self.module or "", run_name="__main__", alter_sys=True)
        finally:
            sys.argv = saved_argv
            _set_path0(saved_path0)
            _wait_for_threads()


def _wait_for_threads() -> None:
    """Wait for the program's non-daemon threads, as Python does once `__main__` ends: what
    they dispatch meanwhile is the program's, and recorded. The threads of a pool
    (`concurrent.futures`) are left out: Python tells them to stop at exit first, and an
    idle one would wait forever."""
    me = threading.current_thread()
    for t in threading.enumerate():
        made_by = (getattr(getattr(t, "_target", None), "__module__", None) or type(t).__module__ or "")
        if t is me or t.daemon or made_by.startswith("concurrent.futures"):
            continue
        t.join()


def _set_path0(value: str | None) -> None:
    if value is None:
        return
    if sys.path:
        sys.path[0] = value
    else:
        sys.path.insert(0, value)


def print_program_traceback(error: BaseException) -> None:
    """The traceback Python would print for the program, without kinspect's and runpy's
    frames before the program's own."""
    tb = error.__traceback__
    while tb is not None and _ours(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    traceback.print_exception(type(error), error, tb, file=sys.stderr)


def _ours(filename: str) -> bool:
    return filename.startswith(_KINSPECT) or filename in (runpy.__file__, "<frozen runpy>")
