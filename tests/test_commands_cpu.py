"""Every CLI command's real code on the CPU: `record`, `record --measure` and `explain
model.py --measure --baselines` with the GPU pipeline replaced by tests/fake_pipeline.py,
and what each says without CUDA (no stand-in: the model file and its recording are real).

GPU runs of the same commands, as subprocesses: tests/gpu/test_gpu_cli.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_pipeline import FakePipeline, interrupt_measuring
from tables import cells

import kinspect.inductor
from kinspect import cli
from kinspect.commands import inspect, recording
from kinspect.core.store import load
from kinspect.inductor.recording import pipeline

REPO = Path(__file__).resolve().parent.parent
LINEAR = REPO / "samples" / "linear.py"
MLP = REPO / "samples" / "mlp.py"
BROKEN = REPO / "tests" / "fixtures" / "models" / "broken.py"


@pytest.fixture
def fake_gpu(monkeypatch):
    monkeypatch.setattr(recording, "cuda_available", lambda: True)
    monkeypatch.setattr(pipeline, "LivePipeline", FakePipeline)
    # kinspect.inductor keeps each name once a command (or a test) asked for it: the stand-in there too
    monkeypatch.setattr(kinspect.inductor, "LivePipeline", FakePipeline, raising=False)
    FakePipeline.made.clear()


@pytest.fixture
def no_cuda(monkeypatch):
    monkeypatch.setattr(recording, "cuda_available", lambda: False)
    monkeypatch.setattr(inspect, "_run", lambda source: pytest.fail("the inspector started"))


# ---------------------------------------------------------------- on a (stand-in) GPU


def test_record_compiles_runs_the_workload_and_saves_the_session(tmp_path, fake_gpu, capsys):
    out = tmp_path / "linear.session.json"
    assert cli.main(["record", str(LINEAR), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "kinspect: compiling linear.py with hints [64, 256, 4096] (stand-in)\n" in err
    session = load(out)
    assert [e.step for e in session.events] == [None, *range(8)]  # the compile run, then the workload
    assert [e.key[1][0] for e in session.events] == [1000, 64, 100, 128, 129, 1000, 1024, 1025, 8192]
    assert all(e.picked == e.predicted for e in session.events)
    assert err.endswith(f"kinspect: saved {out}: 1 sites, 9 dispatches, {len(session.findings)} findings\n")
    logged = load(out.with_suffix(".jsonl"))  # the crash-safe log beside it
    assert (logged.symbols, logged.graphs, logged.sites, logged.events) == (
        session.symbols, session.graphs, session.sites, session.events)
    assert logged.graphs[0].wrapper_code
    (live,) = FakePipeline.made
    assert live.closed


def test_record_measure_times_every_variant_at_each_distinct_shape(tmp_path, fake_gpu, capsys):
    out = tmp_path / "s.json"
    assert cli.main(["record", str(LINEAR), "-o", str(out), "--measure", "--shapes", "B=100", "B=1000", "B=100"]) == 0
    session = load(out)
    assert sorted({(m.key[1][0], m.variant, m.method) for m in session.measurements}) == [
        (b, v, method) for b in (100, 1000) for v in range(3) for method in ("cuda_events", "cupti")]
    capsys.readouterr()
    assert cli.main(["explain", str(out), "--shape", "B=1000"]) == 0
    table = capsys.readouterr().out
    assert "multi_kernel_0 (addmm) · Linear at B=1000" in table
    assert "timed by CUDA events; fastest v1: the chosen variant" in table  # CUPTI would say v0
    rows = [cells(line) for line in table.splitlines() if line.startswith("│")]
    rows = [r for r in rows if len(r) > 2 and r[1].isdigit() and r[2].isdigit()]  # the site's, not the quality table's
    assert "dispatch quality over the measured shapes (one compile)" in table
    assert [r[:3] + r[4:8] for r in rows] == [  # through a pipe the table is wide: r[3] is the hint key
        ["", "0", "64", "7.932", "49.7", "48.7–50.7", "×1.67"],
        ["▶", "1", "256", "3.932", "29.7", "29.1–30.3", "×1.00"],
        ["", "2", "4096", "4.068", "30.3", "29.7–30.9", "×1.02"],
    ]


def test_explain_a_model_measures_and_times_baselines_at_the_shape(fake_gpu, capsys):
    args = ["explain", str(LINEAR), "--shape", "B=1000", "--measure", "--baselines", "eager,hinted"]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    chosen = next(cells(line) for line in out.splitlines() if "▶" in line)
    assert chosen[:3] + chosen[4:8] == ["▶", "1", "256", "3.932", "29.7", "29.1–30.3", "×1.00"]
    assert "timed by CUDA events; fastest v1: the chosen variant" in out
    assert "whole model, compiled afresh per kind" in out
    assert [cells(line)[:4] for line in out.splitlines() if "B=1000" in line and "eager" in line or "hinted" in line] == [
        ["eager", "B=1000", "20.0", "50.0"], ["hinted", "B=1000", "21.0", "51.0"]]
    assert cli.main([*args, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (site,) = doc["sites"]
    assert (site["method"], site["fastest"], site["chosen"], site["regret"]) == ("cuda_events", 1, 1, 1.0)
    assert [b["kind"] for b in doc["baselines"]] == ["eager", "hinted"]


def test_explain_a_model_with_bad_shape_names_is_one_line(fake_gpu, capsys):
    assert cli.main(["explain", str(LINEAR), "--shape", "S=3"]) == 2
    assert capsys.readouterr().err == "kinspect: error: --shape names S, which linear.py's inputs() does not take (B)\n"


# ---------------------------------------------------------------- without CUDA


def test_without_cuda_explain_model_falls_back_to_its_recording_with_a_note(no_cuda, capsys):
    assert cli.main(["explain", str(MLP), "--shape", "B=1000"]) == 0
    out, err = capsys.readouterr()
    recorded = load(MLP.with_name("mlp.session.json")).environment
    assert err == (f"kinspect: no CUDA GPU here: explaining the recording {MLP.with_name('mlp.session.json')} "
                   f"(made on {recorded.gpu}, {recorded.created})\n")
    assert "multi_kernel_0 (addmm) · 0 (Linear) at" in out and "multi_kernel_1 (addmm) · 2 (Linear) at" in out


@pytest.mark.parametrize("command", [["explain"], []])
def test_without_cuda_a_recording_of_another_model_beside_it_is_refused(tmp_path, no_cuda, capsys, command):
    model = tmp_path / "linear.py"
    model.write_text(LINEAR.read_text())
    (tmp_path / "linear.session.json").write_bytes(MLP.with_name("mlp.session.json").read_bytes())
    assert cli.main([*command, str(model)]) == 2
    err = capsys.readouterr().err
    assert err == (f"kinspect: error: {tmp_path / 'linear.session.json'} is a recording of mlp.py, not of linear.py: "
                   f"open it with kinspect open {tmp_path / 'linear.session.json'}, or record linear.py on a GPU "
                   f"machine (kinspect record {model})\n")


@pytest.mark.parametrize("args, what, instead", [
    (["record", str(MLP)], "kinspect record", "kinspect open"),
    (["explain", str(MLP), "--shape", "B=1000", "--measure"], "--measure (it runs the model)", "kinspect explain"),
    (["explain", str(MLP), "--shape", "B=1000", "--baselines", "eager"], "--baselines (it runs the model)", "kinspect explain"),
])
def test_without_cuda_commands_that_run_the_model_name_the_recording_that_exists(no_cuda, capsys, args, what, instead):
    assert cli.main(args) == 2
    assert capsys.readouterr().err == (
        f"kinspect: error: {MLP}: {what} needs a CUDA GPU and none is available here; "
        f"its recording opens anywhere: {instead} {MLP.with_name('mlp.session.json')}\n")


@pytest.mark.parametrize("command", [["record"], ["explain"], []], ids=["record", "explain", "inspect"])
def test_without_cuda_a_model_without_a_recording_says_how_to_make_one(tmp_path, no_cuda, capsys, command):
    model = tmp_path / "model.py"
    model.write_text(LINEAR.read_text())
    assert cli.main([*command, str(model)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "model.session.json" not in err
    assert err.endswith(f"and it has no recording beside it: record one on a GPU machine with kinspect record {model}\n")


@pytest.mark.parametrize("command", [["record"], ["explain"], []], ids=["record", "explain", "inspect"])
def test_without_cuda_a_syntax_error_is_what_every_command_reports(tmp_path, no_cuda, capsys, command):
    model = tmp_path / "model.py"
    model.write_text(BROKEN.read_text())
    (tmp_path / "model.session.json").write_text(MLP.with_name("mlp.session.json").read_text())
    assert cli.main([*command, str(model)]) == 2
    assert capsys.readouterr().err == "kinspect: error: model.py:7: syntax error: expected ':'\n"


def test_sweep_measures_the_planned_sizes_saves_them_and_prints_the_quality(tmp_path, fake_gpu, capsys):
    out = tmp_path / "linear.session.json"
    assert cli.main(["sweep", str(LINEAR), "--range", "B=16..8192", "--points", "10", "-o", str(out)]) == 0
    captured = capsys.readouterr()
    session = load(out)
    (sweep,) = session.sweeps
    sizes = [p["B"] for p in sweep.points]
    assert {16, 8192, 128, 129, 1024, 1025} <= set(sizes) and not sweep.skipped
    measured = {m.key[1][0] for m in session.measurements}
    assert set(sizes) <= measured
    assert "[1/" in captured.err and "sizes over B=16..8192" in captured.err
    assert "dispatch quality over the measured shapes (one compile)" in captured.out
    assert "what-if on these measurements" in captured.out
    assert load(out.with_suffix(".jsonl")).measurements  # the crash-safe log has them too


def test_sweep_refuses_a_bad_range_or_size_in_one_line(tmp_path, fake_gpu, capsys):
    out = tmp_path / "s.json"
    assert cli.main(["sweep", str(LINEAR), "--range", "B=1-5", "-o", str(out)]) == 2
    assert capsys.readouterr().err == "kinspect: error: a range reads NAME=LO..HI, e.g. B=1..16384; got 'B=1-5'\n"
    assert cli.main(["sweep", str(LINEAR), "--range", "S=2..5", "-o", str(out)]) == 2
    assert capsys.readouterr().err == "kinspect: error: --range names S, which linear.py's inputs() does not take (B)\n"
    assert not out.exists() and not FakePipeline.made  # refused before compiling: nothing written


def test_without_cuda_sweep_names_the_recording(no_cuda, capsys):
    assert cli.main(["sweep", str(LINEAR), "--range", "B=2..64"]) == 2
    err = capsys.readouterr().err
    assert "kinspect sweep needs a CUDA GPU and none is available here" in err and "linear.session.json" in err


def test_ctrl_c_during_a_sweep_keeps_what_was_measured(tmp_path, fake_gpu, monkeypatch, capsys):
    calls = interrupt_measuring(monkeypatch, at_call=3)
    out = tmp_path / "linear.session.json"
    assert cli.main(["sweep", str(LINEAR), "--range", "B=16..8192", "--points", "10", "-o", str(out)]) == 130
    (sweep,) = load(out).sweeps
    assert len(sweep.points) == 2 and sweep.skipped and all(why == "interrupted" for _, why in sweep.skipped)
    assert len(calls) == 3  # nothing measured after the interrupt
