"""Where a recording is written: never over a session or a log the user did not name.

A recording's default file (`script.session.json` beside a script, `model.session.json`
beside a model) may hold a recording already, one made on another machine perhaps (the
samples' were made on an H200): a recording that finds its default name taken takes the
next free one (`script.1.session.json`) and says so. A file named with `-o` is the user's
to replace, and only by a recording that recorded something (`keeps`).

The crash-safe log beside the session (`.jsonl`) is created afresh, never opened over
another file: where the named session's log is there from an earlier recording, the new
log is written under a free name and takes the log's name once the session is saved, so
that a recording killed meanwhile loses neither. The paths are absolute, so that a
program that changes its working directory saves where it was asked to.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kinspect.core.errors import KinspectError
from kinspect.core.session.format.log import check_replaceable_log
from kinspect.core.session.model import Session
from kinspect.core.store import RECORDING_SUFFIX, output_path, rank_path


@dataclass(frozen=True)
class RecordingFiles:
    shown: str
    """The session file as messages name it: as the user typed it, or the free name."""
    session: Path
    log: Path
    """Where the log is written while recording (created, empty, by `recording_files`)."""
    taken: str | None = None
    """The default name that was taken, when a free one was chosen instead."""

    def keeps(self, session: Session) -> bool:
        """Whether `session` is left unsaved: it recorded nothing (no site, no dispatch)
        and saving it would replace a file, or take a new name beside the default's."""
        return not (session.sites or len(session.events)) and (self.taken is not None or self.session.exists())

    def settle(self) -> None:
        """Once the session is saved: its log takes the session's log name."""
        final = self.session.with_suffix(".jsonl")
        if self.log != final:
            os.replace(self.log, final)

    def discard(self) -> None:
        """Nothing was saved: the log recorded nothing, and goes."""
        self.log.unlink(missing_ok=True)

    def taken_text(self) -> str | None:
        """The line saying a free name was chosen, or None."""
        if self.taken is None:
            return None
        return f"{self.taken} is there: recording into {self.shown} (-o {self.taken} replaces it)"


def recording_files(out: str | None, default: Path, keep: Iterable[str | os.PathLike[str]] = (),
                    rank: int | None = None) -> RecordingFiles:
    """The files of a recording into `out` (named by the user) or else `default`, one
    rank's where `rank` is given; checked, and its log created, before anything runs."""
    named = Path(out) if out is not None else default
    if rank is not None:
        named = rank_path(named, rank)
    taken = None
    if out is None and _taken(named):
        taken, named = str(named), free_path(named)
    output_path(named, keep)
    session = named.absolute()
    return RecordingFiles(str(named), session, _new_log(session), taken)


def free_path(session: Path) -> Path:
    """`session` where neither it nor its log is there yet, else the first numbered name
    free (`name.1.session.json`): a default name never replaces a file."""
    return session if not _taken(session) else next(p for p in _numbered(session) if not _taken(p))


def _taken(session: Path) -> bool:
    return os.path.lexists(session) or os.path.lexists(session.with_suffix(".jsonl"))


def _numbered(session: Path) -> Iterable[Path]:
    """`name.1.session.json`, `name.2.session.json`, ... (or `name.1.json` for another suffix)."""
    name = session.name
    stem, suffix = (name[:-len(RECORDING_SUFFIX)], RECORDING_SUFFIX) if name.endswith(RECORDING_SUFFIX) \
        else (session.stem, session.suffix)
    return (session.with_name(f"{stem}.{n}{suffix}") for n in itertools.count(1))


def _new_log(session: Path) -> Path:
    """The log's file, created: the session's log name when that is free, else (that
    name holds an earlier recording's log) a free name beside it."""
    final = session.with_suffix(".jsonl")
    for path in itertools.chain([final], (final.with_name(f"{final.stem}.{n}.jsonl") for n in itertools.count(1))):
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644))
            return path
        except FileExistsError:
            if path == final:
                check_replaceable_log(final)
        except OSError as e:
            raise KinspectError(f"{final}: cannot record into it: {e.strerror or e}") from None
    raise AssertionError
