"""`kinspect compare` and `kinspect advise`, their real code on the CPU: the GPU pipeline
is tests/fake_pipeline.py, and a fresh compile in a process of its own is `fake_compile_afresh`
(a stand-in pipeline in this process) whose autotuning gives hint 256 another, 1.5x slower
kernel. GPU runs of both commands as subprocesses: tests/gpu/test_gpu_advise.py."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from fake_pipeline import FakePipeline, fake_compile_afresh, interrupt_measuring
from tables import cells

import kinspect.inductor
from kinspect import cli
from kinspect.commands import recording
from kinspect.core.store import load
from kinspect.inductor.recording import pipeline
from kinspect.inductor.jobs import recompile

REPO = Path(__file__).resolve().parent.parent
LINEAR = REPO / "samples" / "linear.py"


@pytest.fixture
def fake_gpu(monkeypatch):
    monkeypatch.setattr(recording, "cuda_available", lambda: True)
    monkeypatch.setattr(pipeline, "LivePipeline", FakePipeline)
    # kinspect.inductor keeps each name once a command (or a test) asked for it: the stand-in there too
    monkeypatch.setattr(kinspect.inductor, "LivePipeline", FakePipeline, raising=False)
    monkeypatch.setattr(recompile, "compile_afresh", fake_compile_afresh)
    monkeypatch.setattr(FakePipeline, "unstable_hint", 256)
    monkeypatch.setenv("COLUMNS", "200")
    FakePipeline.made.clear()


def test_compare_times_five_kinds_per_shape_saves_them_and_the_spread_of_two_compiles(tmp_path, fake_gpu, capsys):
    out = tmp_path / "linear.session.json"
    assert cli.main(["compare", str(LINEAR), "--shapes", "B=100", "B=1000", "--compiles", "2", "-o", str(out)]) == 0
    printed, err = capsys.readouterr()
    session = load(out)
    kinds = [(b.sizes["B"], b.kind, b.inspected) for b in session.baselines]
    assert kinds == [(b, k, k in ("hinted", "oracle")) for b in (100, 1000)
                     for k in ("hinted", "oracle", "exact_hint", "static", "eager")]
    (again,) = session.recompiles
    assert again.purpose == "variance" and again.hints == (64, 256, 4096)
    rows = {r[0]: r[1:] for r in map(cells, printed.splitlines()) if r and r[0].startswith(("B=", "geomean", "best"))}
    # hinted: the stand-in's CUPTI time of Inductor's pick plus 5 us (v0 at B=100: 8.22 us, v1 at B=1000:
    # 29.66 us); the oracle forces the fastest, which the stand-in's times (growing with the distance
    # from the hint) make the pick as well
    assert rows["B=100"][:2] == ["13.2", "13.2"] and rows["B=1000"][:2] == ["34.7", "34.7"]
    assert rows["B=100"][2:] == ["20.0", "21.0", "22.0"]  # the fresh-compile kinds (stand-in baselines)
    assert rows["best at"] == ["1/2", "0/2", "1/2", "0/2", "0/2"]  # a tie goes to the first kind
    assert "the same hints over 2 compiles (fresh caches)" in printed
    assert ("unstable-autotune: multi_kernel_0: hint 256 emitted 2 different kernels over 2 compiles; at B=1000 it ran "
            "29.7–44.5 µs (×1.50): one compile's figures for this hint may mislead") in printed.splitlines()
    assert "multi_kernel_0: geomean regret ×" in printed and "over 2 compiles)" in printed
    assert printed.splitlines()[-1].startswith("phases: shapes (variants, whole model, fresh-compile kinds) ")
    assert "compile 2/2: hints [64, 256, 4096] again in a fresh process, timing 2 sizes" in err
    assert "unstable-autotune" in {f.kind for f in session.findings}


def test_compare_over_a_range_takes_log_spaced_shapes(tmp_path, fake_gpu, capsys):
    out = tmp_path / "s.json"
    assert cli.main(["compare", str(LINEAR), "--range", "B=16..4096", "--points", "3", "-o", str(out)]) == 0
    assert sorted({b.sizes["B"] for b in load(out).baselines}) == [16, 256, 4096]
    assert load(out).recompiles == []


@pytest.mark.parametrize("args, message", [
    ([], "give --range NAME=LO..HI or --shapes B=... (one of them)"),
    (["--shapes", "S=3"], "--shapes names S, which linear.py's inputs() does not take (B)"),
    (["--shapes", "B=3", "--compiles", "0"], "--compiles takes 1 or more, got 0"),
])
def test_compare_refuses_bad_input_in_one_line_before_compiling(tmp_path, fake_gpu, capsys, args, message):
    out = tmp_path / "s.json"
    assert cli.main(["compare", str(LINEAR), *args, "-o", str(out)]) == 2
    assert capsys.readouterr().err == f"kinspect: error: {message}\n"
    assert not out.exists() and not FakePipeline.made


def test_advise_predicts_verifies_by_recompiling_and_ends_with_the_line_to_paste(tmp_path, fake_gpu, capsys):
    out = tmp_path / "linear.advise.session.json"
    args = ["advise", str(LINEAR), "--range", "B=16..4096", "--max-hints", "2", "--compiles", "2", "-o", str(out)]
    assert cli.main(args) == 0
    printed, err = capsys.readouterr()
    lines = printed.splitlines()
    assert "candidate hints: [16, 32, 64, 128, 256, 512, 1024, 2048, 4096]" in err
    assert lines[0] == ("workload: the model file's workload (8 calls, 8 sizes); "
                        "1 of its sizes outside B=16..4096 left out")
    proposed = next(cells(line) for line in lines if line.startswith("│ proposed"))
    default = next(cells(line) for line in lines if line.startswith("│ default"))
    assert proposed[1] == "128, 1024" and proposed[2] == "×1.14"
    assert proposed[3] == "×1.14 (×1.14–×1.14 over 2 compiles)"  # hint 256 is not in it: nothing unstable
    assert default[1:3] == ["64, 256, 4096", "×2.11"]
    assert default[3].startswith("×2.") and "over 2 compiles" in default[3]
    assert default[3] != "×2.11 (×2.11–×2.11 over 2 compiles)"  # its hint 256 autotuned otherwise
    assert lines[-2].startswith("phases: candidate compile ") and "verification compiles" in lines[-2]
    assert lines[-1] == "torch._inductor.config.multi_kernel_hints = [128, 1024]"
    session = load(out)
    assert [v.hint for v in session.sites[0].variants] == [16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
    assert [(r.hints, r.purpose) for r in session.recompiles] == [((128, 1024), "verify")] * 2 + [
        ((64, 256, 4096), "verify")] * 2
    assert sorted(p["B"] for p in session.sweeps[0].points) == [64, 100, 128, 129, 1000, 1024, 1025]


def test_advise_weighs_a_workload_file_and_says_so(tmp_path, fake_gpu, capsys):
    sizes = tmp_path / "sizes.txt"
    sizes.write_text("B=1000 x90\nB=100 x10\n")
    out = tmp_path / "a.json"
    assert cli.main(["advise", str(LINEAR), "--range", "B=64..2048", "--workload", str(sizes), "--max-hints", "1",
                     "-o", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "workload: the file sizes.txt (100 calls, 2 sizes)"
    assert lines[-1] == "torch._inductor.config.multi_kernel_hints = [1024]"  # 90% of the calls are at B=1000


def test_advise_uniform_without_a_model_workload(tmp_path, fake_gpu, capsys, monkeypatch):
    model = tmp_path / "model.py"
    model.write_text(LINEAR.read_text().replace("workload = ", "unused = "))
    (tmp_path / "model.session.json").write_text((REPO / "samples" / "linear.session.json").read_text())
    monkeypatch.setattr("fake_pipeline.SAMPLES", tmp_path)
    assert cli.main(["advise", str(model), "--range", "B=16..4096", "--points", "5", "--max-hints", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "workload: uniform over B=16..4096 in log space (5 sizes, one call each)"
    assert (tmp_path / "model.advise.session.json").exists()


@pytest.mark.parametrize("args, message", [
    (["--range", "B=1..10", "--range", "S=1..4"], "--range names S, which linear.py's inputs() does not take (B)"),
    (["--range", "B=1..10", "--max-hints", "0"], "--max-hints and --compiles take 1 or more"),
    (["--range", "B=20000..30000"], "no size of the model file's workload (8 calls, 8 sizes) lies in B=20000..30000"),
])
def test_advise_refuses_bad_input_in_one_line_before_compiling(tmp_path, fake_gpu, capsys, args, message):
    out = tmp_path / "s.json"
    assert cli.main(["advise", str(LINEAR), *args, "-o", str(out)]) == 2
    assert capsys.readouterr().err == f"kinspect: error: {message}\n"
    assert not out.exists() and not FakePipeline.made


def test_advise_with_a_bad_workload_file_names_its_line(tmp_path, fake_gpu, capsys):
    sizes = tmp_path / "w.txt"
    sizes.write_text("B=100\nB=1e3\n")
    assert cli.main(["advise", str(LINEAR), "--range", "B=1..10", "--workload", str(sizes)]) == 2
    assert capsys.readouterr().err == "kinspect: error: w.txt:2: a line reads B=1000 or B=1000 x40 (a count); got 'B=1e3'\n"


@pytest.mark.parametrize("command", [["compare", "--shapes", "B=100"], ["advise", "--range", "B=2..64"]])
def test_without_cuda_they_name_the_recording(monkeypatch, capsys, command):
    monkeypatch.setattr(recording, "cuda_available", lambda: False)
    assert cli.main([command[0], str(LINEAR), *command[1:]]) == 2
    err = capsys.readouterr().err
    assert f"kinspect {command[0]} needs a CUDA GPU and none is available here" in err and "linear.session.json" in err


def test_a_fresh_compile_that_fails_is_an_error_in_its_record_not_a_crash(tmp_path, monkeypatch):
    """The real child process, on this machine without CUDA: it says so in one line, the
    parent keeps that line as the recompile's error and leaves no file behind."""
    if recording.cuda_available():
        pytest.skip("this machine has CUDA: the child would compile")
    said = []
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    r = recompile.recompile(LINEAR, (64, 256), [{"B": 100}], "verify", tmp_path, said.append)
    assert r.hints == (64, 256) and r.purpose == "verify" and not r.measurements
    assert r.error == ("compile process failed: kinspect: error: the live pipeline needs a CUDA GPU "
                       "(Inductor's size-hint multi-kernel is Triton-only)")
    assert said[0].startswith("  the compile with hints [64, 256] failed after ") and list(tmp_path.iterdir()) == []


def test_explain_tells_the_inspected_compiles_timings_from_a_fresh_hinted_compile(tmp_path, fake_gpu, capsys):
    out = tmp_path / "s.json"
    assert cli.main(["compare", str(LINEAR), "--shapes", "B=100", "-o", str(out)]) == 0
    session = load(out)
    from kinspect.core.session.runtime import Baseline
    from kinspect.core.store import save

    session.baselines.append(Baseline({"B": 100}, "hinted", 40.0, 30.0))  # `explain --baselines hinted`: fresh
    save(session, out)
    capsys.readouterr()
    assert cli.main(["explain", str(out), "--shape", "B=100"]) == 0
    rows = [cells(line)[:3] for line in capsys.readouterr().out.splitlines() if "│ B=100 " in line]
    assert rows == [["hinted (this compile)", "B=100", "13.2"], ["oracle (this compile)", "B=100", "13.2"],
                    ["exact_hint", "B=100", "20.0"], ["static", "B=100", "21.0"], ["eager", "B=100", "22.0"],
                    ["hinted", "B=100", "30.0"]]


def test_ctrl_c_while_advise_times_the_candidates_saves_them_and_compiles_nothing_more(tmp_path, fake_gpu, monkeypatch,
                                                                                         capsys):
    calls = interrupt_measuring(monkeypatch, at_call=3)
    out = tmp_path / "a.json"
    assert cli.main(["advise", str(LINEAR), "--range", "B=16..4096", "-o", str(out)]) == 130
    assert capsys.readouterr().err.endswith("kinspect: interrupted\n")
    session = load(out)
    assert len(session.sweeps[0].points) == 2 and session.recompiles == [] and len(FakePipeline.made) == 1
    assert len(calls) == 3  # nothing timed after the interrupt


@pytest.mark.parametrize("command", [
    ["record"], ["sweep", "--range", "B=16..64", "--points", "2"], ["compare", "--shapes", "B=100", "--compiles", "2"],
    ["advise", "--range", "B=16..256", "--max-hints", "1"]], ids=lambda c: c[0])
@pytest.mark.parametrize("flag, option", [("--one-size-per-symbol", "one_size_per_symbol"),
                                          ("--fusion-per-hint", "fusion_per_hint"),
                                          ("--autotune-device-time", "autotune_device_time"),
                                          ("--fit-benchmark-tensors", "fit_benchmark_tensors"),
                                          ("--compile-layers-once", "layers_once")])
def test_what_kinspect_may_change_reaches_every_compile_a_command_makes(tmp_path, fake_gpu, capsys, command, flag,
                                                                        option):
    out = tmp_path / "linear.session.json"
    assert cli.main([command[0], str(LINEAR), *command[1:], flag, "-o", str(out)]) == 0
    assert FakePipeline.made and all(getattr(p.options.changes, option) for p in FakePipeline.made)
    assert cli.main([command[0], str(LINEAR), *command[1:], "-o", str(out)]) == 0
    assert not getattr(FakePipeline.made[-1].options.changes, option)


@pytest.mark.parametrize("flag, option", [("--one-size-per-symbol", "one_size_per_symbol"),
                                          ("--fusion-per-hint", "fusion_per_hint"),
                                          ("--autotune-device-time", "autotune_device_time"),
                                          ("--fit-benchmark-tensors", "fit_benchmark_tensors"),
                                          ("--compile-layers-once", "layers_once")])
def test_what_kinspect_may_change_reaches_the_live_inspectors_compile(monkeypatch, flag, option):
    """`kinspect MODEL.py FLAG` on a CUDA machine: the live source the inspector is given
    compiles with it (the app itself is not started here)."""
    from kinspect.commands import inspect

    monkeypatch.setattr(recording, "cuda_available", lambda: True)
    given = []
    monkeypatch.setattr(inspect, "_run", lambda source: given.append(source) or 0)
    assert cli.main([str(LINEAR), flag]) == 0
    assert cli.main([str(LINEAR)]) == 0
    assert [getattr(source.options.changes, option) for source in given] == [True, False]


def test_advise_with_a_variant_timed_nowhere_says_which_and_keeps_what_it_timed(tmp_path, fake_gpu, capsys, monkeypatch):
    real = FakePipeline.measure

    def failing(self, sizes, *args, **kwargs):
        out = real(self, sizes, *args, **kwargs)
        for i, m in enumerate(self.session.measurements):
            if m.variant == 2:
                self.session.measurements[i] = replace(m, median_us=None, error="CUDA error: an illegal memory access")
        return out

    monkeypatch.setattr(FakePipeline, "measure", failing)
    out = tmp_path / "a.json"
    assert cli.main(["advise", str(LINEAR), "--range", "B=64..2048", "--max-hints", "1", "-o", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err == ("kinspect: error: no workload size has every variant timed at every site, nothing to advise on: "
                   "multi_kernel_0: v2 (hint 256) failed at B=64: CUDA error: an illegal memory access (what was "
                   f"compiled and timed is saved in {out})")
    assert load(out).sweeps and not FakePipeline.made[1:]


def test_advise_names_the_call_sites_whose_keys_do_not_line_up_with_their_site(tmp_path, fake_gpu, capsys,
                                                                                monkeypatch):
    """A Llama's o projections share q, k and v's multi-kernel but hand Inductor a 4-D key:
    advise says so, under the workload line, with the call sites' names shown literally."""
    from kinspect.core.quality.model_calls import ModelCalls

    monkeypatch.setattr(ModelCalls, "misaligned", lambda self, site: ("layers.{0,1}.[b]o_proj",)
                        if site.name == "multi_kernel_0" else ())
    out = tmp_path / "a.json"
    assert cli.main(["advise", str(LINEAR), "--range", "B=64..2048", "--max-hints", "1", "-o", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == ("multi_kernel_0: layers.{0,1}.[b]o_proj hand Inductor keys laid out otherwise than the "
                        "site's tensors; weighed at the keys they were recorded with, decided as Inductor decides them")
