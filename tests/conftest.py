"""Fixtures shared across test files; file-specific helpers stay in their own file."""

from __future__ import annotations

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


@pytest.fixture
def synthetic() -> Session:
    """Three sites (addmm on B, mm on B and 2*N), three hints, events and measurements."""
    return synthetic_session(sites=3, variants=3, events=24, seed=7)


@pytest.fixture
def session_file(tmp_path: Path, synthetic: Session) -> Path:
    path = tmp_path / "session.json"
    save(synthetic, path)
    return path


@pytest.fixture
def kinspect_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run `python -m kinspect ARGS` as a user would, with a wide, colourless terminal."""

    def run(*args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "COLUMNS": "240", "NO_COLOR": "1", "TERM": "dumb"}
        env.pop("FORCE_COLOR", None)
        return subprocess.run(
            [sys.executable, "-m", "kinspect", *map(str, args)],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=60,
        )

    return run
