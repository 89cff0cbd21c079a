"""The samples a user starts from: each runs as a plain script, and each has a recorded
session (made on the GPU) that opens, validates and explains anywhere."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest

from kinspect.core.quality.explain import explain_site
from kinspect.core.store import load
from kinspect.core.dispatch.shapes import parse_shape, sizes_text

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
SCRIPTS = sorted(p for p in SAMPLES.glob("*.py") if not p.name.startswith("_"))
SESSIONS = sorted(SAMPLES.glob("*.session.json"))
SCHEMA = json.loads(files("kinspect.core.session.format").joinpath("session.schema.json").read_text(encoding="utf-8"))


def script_of(session: Path) -> Path:
    return session.with_name(session.name.removesuffix(".session.json") + ".py")


def test_there_are_samples():
    assert SCRIPTS, "samples/*.py are what the README points users to"


def recordings(script: Path) -> list[Path]:
    """The sample's session, or its ranks' sessions for a torchrun job's sample."""
    one = script.with_suffix(".session.json")
    return [one] if one.is_file() else sorted(script.parent.glob(f"{script.stem}.rank*.session.json"))


RANKS_SAMPLES = {"ddp.py"}
"""Recorded by torchrun on two GPUs (scripts/device_session.sh ranks), one session per rank."""
PROGRAM_SAMPLES = {"generate.py": "tokens generated per sequence"}
"""Ordinary scripts, not model files, recorded with `kinspect run` (scripts/device_session.sh
run): what each prints on every line of its own output."""


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_each_sample_has_a_recorded_session(script):
    found = recordings(script)
    if script.name in RANKS_SAMPLES:
        assert len(found) >= 2, f"record it: torchrun --nproc-per-node 2 -m kinspect record samples/{script.name}"
    elif script.name in PROGRAM_SAMPLES:
        assert found, f"record it on a GPU: scripts/device_session.sh run (kinspect run --measure samples/{script.name})"
    else:
        assert found, f"record it: kinspect record samples/{script.name}"


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name)
def test_a_recorded_sample_opens_validates_and_explains(path, kinspect_cli):
    session = load(path)
    jsonschema.Draft202012Validator(SCHEMA).validate(json.loads(path.read_text(encoding="utf-8")))
    assert session.truncated is None
    assert session.sites, "a sample is chosen to have at least one size-hint site"
    for e in session.events:
        assert e.predicted == e.picked or e.override is not None, f"{e.site} event {e.seq}"
    gpu = session.environment.gpu
    assert gpu and gpu != "synthetic" and re.search(r"NVIDIA|AMD|GPU", gpu), gpu

    if script_of(path).name in PROGRAM_SAMPLES:  # a program's run: its dispatches are the workload
        assert session.events and session.measurements
        result = kinspect_cli("explain", path)
    else:
        workload = session.model.workload
        assert workload, f"{script_of(path).name} has a workload to step through"
        result = kinspect_cli("explain", path, "--shape", sizes_text(workload[0]))
    assert result.returncode == 0, result.stderr
    for site in session.sites:
        assert site.name in result.stdout


@pytest.fixture(scope="module")
def script_runs() -> dict[str, subprocess.Popen]:
    """Every sample started at once: each imports torch, which is most of its time."""
    procs = {p.name: subprocess.Popen([sys.executable, str(p)], cwd=REPO, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True) for p in SCRIPTS}
    yield procs
    for proc in procs.values():
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_each_sample_runs_as_a_plain_script(script, script_runs):
    out, err = script_runs[script.name].communicate(timeout=120)
    missing = re.search(r"ModuleNotFoundError: No module named '(\w+)'", err)
    if missing and missing[1] != "kinspect" and "import" in script.read_text():
        pytest.skip(f"{script.name} needs {missing[1]} (a recording of it opens without)")
    assert script_runs[script.name].returncode == 0, err
    if script.name in PROGRAM_SAMPLES:
        assert out and all(PROGRAM_SAMPLES[script.name] in line for line in out.splitlines()), out
    else:
        assert re.fullmatch(r"torch\.Size\(\[\d+(, \d+)*\]\)\n", out), out


def test_the_readmes_full_key_fits_the_sample_it_names():
    """The README's example of a whole key, decided for samples/mlp.py's first site as the
    inspector would: no key mismatch, a choice."""
    readme = (REPO / "README.md").read_text()
    key = re.search(r"such as\s+`([^`]+)`\s+for `samples/mlp.py`'s first Linear", readme)
    assert key is not None, "the README names a full key for samples/mlp.py"
    session = load(SAMPLES / "mlp.session.json")
    expl = explain_site(session, session.sites[0], parse_shape(key.group(1)))
    assert expl.decision is not None and not any(s.mismatch for s in expl.decision.scores)


def test_the_license_is_a_pep_639_expression():
    """setuptools warns three times at every install about `license = {text = ...}`."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert isinstance(project["license"], str)
