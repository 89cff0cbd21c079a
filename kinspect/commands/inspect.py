"""`kinspect open SESSION` and `kinspect PATH`: pick a session source, run the inspector
(a session, a TORCH_TRACE log or a folder of them, or a model file).

A model file runs live where CUDA is available (compiled and run by the inspector, with
the debugger able to pause and override it); elsewhere the recording saved next to it
(`model.session.json`, or the `.jsonl` log a killed recording leaves) opens instead,
with a banner saying where it was made.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from kinspect.commands import recording
from kinspect.commands.rank_sessions import is_merged, load_merged, rank_sessions_in
from kinspect.commands.model_output import model_output
from kinspect.commands.stderr_log import log_path_for, stderr_to_log
from kinspect.core.printing import say
from kinspect.commands.options import compile_flags, compile_options, name_flag, renames
from kinspect.core.errors import KinspectError
from kinspect.core.store import load
from kinspect.core.source import RecordedSource, SessionSource
from kinspect.core.trace.files import is_output_code, is_trace, output_code_files, trace_files
from kinspect.tui.terminal_driver import driver_drawing_to

SESSION_SUFFIXES = (".json", ".jsonl")


def open_session(path: str | Sequence[str], names: Mapping[str, str] | None = None) -> int:
    paths = [path] if isinstance(path, str) else list(path)
    if is_merged(paths):
        return _run(ranks_source(paths))
    return _run(RecordedSource(load(paths[0], names), paths[0]))


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="+")
    compile_flags(parser)
    name_flag(parser)


def run(args: argparse.Namespace) -> int:
    paths = list(args.path)
    return _run(ranks_source(paths) if is_merged(paths) else
                source_for_path(paths[0], compile_options(args), renames(args)))


def ranks_source(paths: Sequence[str]) -> RecordedSource:
    """A torchrun job's rank sessions: the lowest rank's in the inspector, with the job's
    findings and the Ranks tab showing every rank side by side."""
    merged = load_merged(paths)
    return RecordedSource(merged.lead(), merged.sources[0], ranks=merged)


def source_for_path(path: str, changes: dict[str, bool] | None = None,
                    names: Mapping[str, str] | None = None) -> SessionSource:
    """The source `kinspect PATH` opens: a session file, or a model live or recorded
    (`names`: the user's renames of a recording's sizes; a live model's are its own)."""
    p = Path(path)
    if p.suffix in SESSION_SUFFIXES or is_trace(p) or (p.is_dir() and (trace_files(p) or output_code_files(p))) or \
            (p.suffix == ".py" and is_output_code(p)):
        return RecordedSource(load(p, names), p)
    if p.suffix != ".py":
        raise KinspectError(f"{path}: expected a model file (.py), a session file (.json, .jsonl) or a "
                            "TORCH_TRACE log")
    if not p.is_file():
        raise KinspectError(f"{path}: no such model file")
    if recording.cuda_available():
        return _live_source(p, changes or {})
    from kinspect.inductor import check_model_file, check_syntax

    found = recording.existing_recording(p)
    ranks = [] if found else rank_sessions_in(p.parent, p.stem)
    if found is None and not ranks:
        with model_output(p.name):
            check_model_file(p)  # its problems first, in the one line they get on a GPU
        raise KinspectError(recording.no_cuda(p, "the live pipeline"))
    check_syntax(p)  # the rest of the check imports torch: the app runs it as the recording shows
    if ranks:  # a torchrun job's: the lowest rank, the others in the Ranks tab
        merged = load_merged([str(r) for r in ranks])
        return recording.ModelRecording(p, recording.recording_of(p, merged.lead(), ranks[0]), ranks[0], merged)
    return recording.ModelRecording(p, recording.recording_of(p, load(found, names), found), found)


def _live_source(model: Path, changes: dict[str, bool]) -> SessionSource:
    """Compile and run `model` on this GPU, recording as it goes; the inspector starts at
    once and the compile runs in its worker (`prepare`). Imported here, so that opening a
    recording never imports torch's compiler."""
    from kinspect.inductor import LiveSource, Options

    return LiveSource(model, Options(failure_log=log_path_for(model), **changes))


def _run(source: SessionSource) -> int:
    from kinspect.core.session.records import collector_paused

    # Importing Textual and the panes makes objects that live as long as the process: the
    # cycle collector walks them over and over meanwhile (a tenth of a second of a cold
    # start), and once they are frozen out of its passes, never again.
    with collector_paused(freeze=True):
        from kinspect.tui.app import InspectorApp

    model = getattr(source, "model", None) if source.live else None
    if model is None:
        app = InspectorApp(source)
        app.run()
        return _status(app.return_code)
    log = _log_path(Path(model))
    with stderr_to_log(log) as terminal:
        app = InspectorApp(source, driver_class=driver_drawing_to(terminal))
        app.run()
    say(f"kinspect: the compiler's and the GPU's messages of this session are in {log}", err=True)
    return _status(app.return_code)


def _status(code: int | None) -> int:
    """A crash of the inspector (Textual prints its traceback and sets 1) never exits 0."""
    return code or 0


def _log_path(model: Path) -> Path:
    """Beside the model if that folder is writable, else in the temporary folder."""
    path = log_path_for(model)
    try:
        with open(path, "a", encoding="utf-8"):
            return path
    except OSError:
        fd, name = tempfile.mkstemp(prefix=model.stem + ".", suffix=".kinspect.log")
        os.close(fd)
        return Path(name)
