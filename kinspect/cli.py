"""The `kinspect` command: argument parsing and error reporting, nothing else.

The subcommands come from `kinspect.commands.COMMANDS`; each hands its work to the core,
the Inductor layer or the TUI. Bad input surfaces as one `kinspect: error:` line and exit
status 2 (`--debug` keeps the traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

from kinspect import commands
from kinspect.commands import Command
from kinspect.core.errors import KinspectError, echo, shown


class _Parser(argparse.ArgumentParser):
    """Usage mistakes read like every other error: one `kinspect: error:` line, status 2."""

    def error(self, message: str) -> NoReturn:
        if len(message) > _MESSAGE_LIMIT:  # argparse quotes the words it refused: a 5,000-digit one too
            message = f"{message[:_MESSAGE_LIMIT]}… ({len(message):,} characters)"
        self.exit(2, f"kinspect: error: {shown(message)} (see: {self.prog} --help)\n")


_MESSAGE_LIMIT = 300


def _parser(chosen: Command | None) -> argparse.ArgumentParser:
    """Every command is listed; only the chosen one's module is imported for its arguments."""
    p = _Parser(
        prog="kinspect",
        description="Inspect PyTorch Inductor's size-hint multi-kernel dispatch.",
        epilog="kinspect PATH opens model.py live (CUDA) or a recorded session anywhere.",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for command in commands.COMMANDS:
        parser = sub.add_parser(command.name, help=command.help)
        if command is chosen:
            command.load().add_args(parser)
        # `--debug` after the subcommand works too
        parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    return p


def _command_for(words: list[str]) -> Command | None:
    """The command the words name; a first word that is no command but names a path (it
    exists, or has a suffix or a folder) is the default command's, which says what is
    wrong with that path; any other word is an error, not a path to open."""
    first = next((w for w in words if not w.startswith("-")), None)
    if first is None:
        return None
    by_name = {c.name: c for c in commands.COMMANDS}
    if first in by_name:
        return by_name[first]
    path = Path(first)
    if not (path.suffix or path.name != first or path.exists()):
        raise KinspectError(f"{echo(first)} is neither a command ({', '.join(by_name)}) nor a file")
    words.insert(words.index(first), commands.DEFAULT)
    return by_name[commands.DEFAULT]


class _Terminated(BaseException):
    """SIGTERM, raised where the command is, so that what it was writing is removed as on
    Ctrl-C (`store.write_with`) and no temporary file is left behind."""


_OWN_SIGTERM = frozenset({"run", "open", "inspect"})
"""Commands that leave SIGTERM as it is: `run` hands it to the program (its log is written
first), the inspector to Textual."""


@contextlib.contextmanager
def _sigterm_raises(command: Command | None) -> Iterator[None]:
    if command is None or command.name in _OWN_SIGTERM or threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminated(signum: int, frame: Any) -> None:
        raise _Terminated

    before = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def main(argv: Sequence[str] | None = None) -> int:
    _closed_streams_to_devnull()
    try:
        return _main(argv)
    except BrokenPipeError:  # `kinspect explain S | head`, or stderr's reader gone: nobody reads the rest
        _closed_streams_to_devnull(broken=True)
        return 0


def _closed_streams_to_devnull(broken: bool = False) -> None:
    """A closed stdout or stderr (`2>&-`) is a stream nobody reads, not a crash: what goes
    there goes to /dev/null, and the command's status is its own. With `broken`, a stream
    whose pipe has no reader any more goes there too, so that Python's last flush at exit
    cannot fail either."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        stream = getattr(sys, name)
        if stream is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))
        elif broken:
            try:
                stream.flush()
            except (OSError, ValueError):
                with contextlib.suppress(OSError):
                    devnull = os.open(os.devnull, os.O_WRONLY)
                    os.dup2(devnull, fd)
                    os.close(devnull)


def _say_error(text: str) -> None:
    try:
        print(text, file=sys.stderr)
    except BrokenPipeError:
        _closed_streams_to_devnull(broken=True)


def _main(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    args = None
    try:
        command = _command_for(words)
        parser = _parser(command)
        args = parser.parse_args(words)
        if command is None:
            parser.print_help()
            return 2
        with _sigterm_raises(command):
            return command.load().run(args)
    except KinspectError as err:
        if args is not None and args.debug:
            traceback.print_exc()
        _say_error(f"kinspect: error: {shown(str(err))}")
        return 2
    except KeyboardInterrupt:
        _say_error("kinspect: interrupted")
        return 130
    except _Terminated:
        _say_error("kinspect: terminated")
        return 128 + signal.SIGTERM


if __name__ == "__main__":
    sys.exit(main())
