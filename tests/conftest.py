"""Fixtures shared across test files; file-specific helpers stay in their own file."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from synthetic import synthetic_session

from kinspect.core.session.model import Session
from kinspect.core.store import save

REPO = Path(__file__).resolve().parent.parent

# Inductor's CPU code checks which vector instruction sets work by compiling and loading a
# small C++ program per set, once per cache directory. Tests give their compiles fresh cache
# directories (in this process and in the programs they run), so each compile paid about
# 7 s of g++ for it: trust the CPU's own flags instead, for this process and its children.
os.environ.setdefault("TORCHINDUCTOR_VEC_ISA_OK", "1")

if os.environ.get("PYTEST_XDIST_WORKER"):
    # pytest-xdist starts its workers with COLUMNS=80 and LINES=24, which a pipe never has:
    # the tables that print wide into a pipe would think they were on an 80-column terminal
    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)


@pytest.fixture
def synthetic() -> Session:
    """Three sites (addmm on B, mm on B and 2*N), three hints, events and measurements."""
    return synthetic_session(sites=3, variants=3, events=24, seed=7)


@pytest.fixture
def session_file(tmp_path: Path, synthetic: Session) -> Path:
    path = tmp_path / "session.json"
    save(synthetic, path)
    return path


TERMINAL = {"COLUMNS": "240", "NO_COLOR": "1", "TERM": "dumb"}
"""A wide, colourless terminal, for the same tables whatever runs the tests."""


@pytest.fixture
def kinspect_cli(monkeypatch: pytest.MonkeyPatch) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`kinspect ARGS` as a user runs it, in this process: the exit status and what it
    prints, through the same `cli.main` as `python -m kinspect` (a process of its own
    costs about a second of imports and adds nothing for a session file)."""
    from kinspect import cli

    def run(*args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
        out, err = io.StringIO(), io.StringIO()
        with monkeypatch.context() as mp:
            for name, value in TERMINAL.items():
                mp.setenv(name, value)
            mp.delenv("FORCE_COLOR", raising=False)
            mp.chdir(REPO)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = cli.main([str(a) for a in args])
                except SystemExit as stop:  # argparse's usage errors and --help
                    code = stop.code if isinstance(stop.code, int) else 2
        return subprocess.CompletedProcess(["kinspect", *map(str, args)], code, out.getvalue(), err.getvalue())

    return run


@pytest.fixture
def kinspect_process() -> Callable[..., subprocess.CompletedProcess[str]]:
    """`python -m kinspect ARGS` in a process of its own: for a model file, whose import
    may do anything to the process that loads it."""

    def run(*args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, **TERMINAL}
        env.pop("FORCE_COLOR", None)
        return subprocess.run(
            [sys.executable, "-m", "kinspect", *map(str, args)],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=60,
        )

    return run
