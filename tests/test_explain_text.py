"""What `kinspect explain` prints, read as a user reads it: names kept whole through a
pipe, no sentinel for a distance, the user's names, unmeasured keys said so."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kinspect.core.dispatch.heuristics import NO_KEY_DISTANCE, UNCOVERED, distance_text

REPO = Path(__file__).resolve().parent.parent
MLP = REPO / "samples" / "mlp.session.json"


def explain(*args: str, columns: str | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
    env.update({"NO_COLOR": "1", "TERM": "dumb", **({"COLUMNS": columns} if columns else {})})
    result = subprocess.run([sys.executable, "-m", "kinspect", "explain", *args], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def piped() -> str:
    return explain(str(MLP), "--shape", "B=1000")


def test_through_a_pipe_names_stay_whole(piped):
    assert "…" not in piped
    assert "triton_tem_fused_addmm_relu_t_2" in piped and "multi_kernel_1" in piped


def test_on_a_terminal_it_keeps_to_the_terminals_width():
    out = explain(str(MLP), "--shape", "B=1000", columns="80")
    assert max(len(line) for line in out.splitlines()) <= 80


def test_an_unmeasured_key_says_it_is_not_measured():
    out = explain(str(MLP), "--shape", "B=999", "--site", "multi_kernel_0")
    assert "not measured at this key" in out


def test_ceil_distances_say_what_they_mean_not_a_sentinel():
    out = explain(str(MLP), "--shape", "B=8192", "--heuristic", "ceil", "--site", "multi_kernel_0")
    assert "2e+06" not in out and "2000002" not in out
    assert "2 dims above hint + 2.000" in out  # hint 4096 is below B=8192 in x and out
    assert distance_text(2 * UNCOVERED + 0.0226, "ceil") == "2 dims above hint + 0.023"
    assert distance_text(NO_KEY_DISTANCE) == "no key"
    assert distance_text(3.93157) == "3.932"


def test_help_lists_the_heuristics():
    result = subprocess.run([sys.executable, "-m", "kinspect", "explain", "--help"], cwd=REPO,
                            capture_output=True, text=True, timeout=60)
    for name in ("inductor", "log2-l2", "log2-linf", "l1", "ceil"):
        assert name in result.stdout


def test_call_sites_name_the_module_class_once():
    out = explain(str(MLP))
    assert "0 (Linear) (Linear)" not in out and "0 (Linear)" in out


def test_the_whole_models_figures_say_what_they_count():
    out = explain("tests/fixtures/samples_h200_2026-11-30/gpt2.session.json", columns="200")
    row = next(line for line in out.splitlines() if "whole model" in line)
    assert "35 × 4 sites" in row and "140" not in row  # 35 shapes at each of 4 sites, not 140 shapes
    assert "workload extra" in out and " +" in row  # extra time, signed: +100% reads twice as long
    assert "(+100%: twice as long)" in " ".join(out.split())


def test_on_a_narrow_terminal_kernel_names_keep_the_end_that_tells_them_apart():
    from kinspect.core.cut import cut_middle

    name = "triton_tem_fused_add_addmm_arange_embedding_native_layer_norm_unsqueeze_view_1"
    assert cut_middle(name, 30) == "triton_te…orm_unsqueeze_view_1" and len(cut_middle(name, 30)) == 30
    assert cut_middle("short", 30) == "short"
    out = explain("tests/fixtures/samples_h200_2026-11-30/gpt2.session.json", columns="120")
    ends = [line.split("…")[-1].split()[0] for line in out.splitlines() if ": triton_tem_" in line and "…" in line][:3]
    assert len(ends) == 3 and [e[-6:] for e in ends] == ["view_1", "view_2", "view_3"], ends


def test_site_and_heuristic_apply_without_a_shape_too():
    gpt2 = "tests/fixtures/samples_h200_2026-11-30/gpt2.session.json"
    out = explain(gpt2, "--site", "multi_kernel_2", "--heuristic", "l1", columns="200")
    assert "picks decided by l1: a what-if (Inductor decides by inductor)" in " ".join(out.split())
    assert "multi_kernel_2" in out and "multi_kernel_1" not in out.split("what-if on these measurements")[0]
    assert "whole model" not in out
    assert "findings (" in out and "at multi_kernel_2, by kind" in out


def test_an_unknown_site_or_heuristic_without_a_shape_is_one_line():
    gpt2 = "tests/fixtures/samples_h200_2026-11-30/gpt2.session.json"
    for args, message in ((("--site", "nope"), "no site named 'nope'"), (("--heuristic", "nope"), "unknown heuristic")):
        result = subprocess.run([sys.executable, "-m", "kinspect", "explain", gpt2, *args], cwd=REPO,
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 2 and result.stdout == ""
        assert result.stderr.startswith(f"kinspect: error: {message}") and result.stderr.count("\n") == 1
