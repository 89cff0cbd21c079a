"""Baselines: stored with the session, shown by explain, produced by a child process as data."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from synthetic import synthetic_session

from kinspect.core.errors import SessionError
from kinspect.core.session.runtime import Baseline
from kinspect.core.store import load, save
from kinspect.core.session.format.document import session_from_json, session_to_json
from kinspect.inductor.timing.baseline import _clean, run_baseline

REPO = Path(__file__).resolve().parent.parent


def test_baselines_round_trip_and_are_validated(tmp_path):
    s = synthetic_session()
    s.baselines = [Baseline({"B": 1000}, "static", 61.2, 14.8), Baseline({"B": 1000}, "eager", None, None, "CUDA out of memory")]
    path = tmp_path / "s.json"
    save(s, path)
    assert load(path).baselines == s.baselines
    doc = session_to_json(s)
    doc["baselines"][0]["kind"] = "__import__('os')"
    with pytest.raises(SessionError, match=r"baselines\[0\]\.kind: must be one of"):
        session_from_json(doc)


def test_explain_shows_the_baselines_at_the_typed_sizes(tmp_path):
    s = synthetic_session()
    s.baselines = [Baseline({"B": 1000, "N": 64}, "static", 61.2, 14.8), Baseline({"B": 8, "N": 64}, "eager", 70.0, 9.0)]
    path = tmp_path / "s.json"
    save(s, path)
    out = subprocess.run([sys.executable, "-m", "kinspect", "explain", str(path), "--shape", "B=1000 N=64", "--json"],
                         capture_output=True, text=True, cwd=REPO, check=True)
    assert json.loads(out.stdout)["baselines"] == [
        {"sizes": {"B": 1000, "N": 64}, "kind": "static", "wall_us": 61.2, "gpu_us": 14.8, "error": None,
         "inspected": False}]
    table = subprocess.run([sys.executable, "-m", "kinspect", "explain", str(path), "--shape", "B=1000 N=64"],
                           capture_output=True, text=True, cwd=REPO, check=True, env={"COLUMNS": "120", "PATH": ""})
    assert "static" in table.stdout and "14.8" in table.stdout and "eager" not in table.stdout


def test_a_failing_baseline_is_reported_as_data_not_raised():
    r = run_baseline(str(REPO / "samples" / "linear.py"), "eager", {"B": 100}, [64, 256, 4096], timeout=120)
    assert r["kind"] == "eager"
    # on a CPU-only machine the child cannot run the model; on a GPU machine it gives times
    assert ("error" in r) != ("gpu_us" in r)


def test_child_output_keeps_only_baseline_fields():
    assert _clean({"kind": "static", "wall_us": 1.5, "gpu_us": True, "exec": "rm -rf /", "error": 3}, "static") == {
        "kind": "static", "wall_us": 1.5}
