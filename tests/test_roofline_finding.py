"""A site whose every variant runs far below the GPU's peak is a finding of its own: no
pick or hint fixes it. Autotune times quoted in findings say what they are."""

from __future__ import annotations

from pathlib import Path

from kinspect.core.quality.roofline import FAR_BELOW, far_below_peak
from kinspect.core.store import load

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "tests" / "fixtures" / "samples_h200_2026-11-30"


def test_gemm_2d_runs_far_below_peak_whatever_is_picked():
    s = load(FIGURES / "gemm_2d.session.json")
    (f,) = [f for f in s.findings if f.kind == "far-below-peak"]
    assert f.site == "multi_kernel_0"
    assert f.message.startswith("every variant runs at 0–")
    assert "64×4096×64 (M×K×N) takes 167.8 µs at best" in f.message
    assert "of the GPU's bf16 peak (757 TFLOP/s) at all 28 measured shapes" in f.message
    peak = s.environment.peaks["tflops_bf16"]
    assert all(m.tflops / peak < FAR_BELOW for m in s.measurements if m.tflops is not None)


def test_a_site_that_reaches_its_peak_somewhere_is_not_flagged():
    s = load(FIGURES / "linear.session.json")
    assert far_below_peak(s) == []


def test_autotune_times_in_findings_say_they_are_inductors_benchmark_at_the_hint():
    for name in ("linear", "gpt2", "gemm_2d"):
        s = load(FIGURES / f"{name}.session.json")
        for f in s.findings:
            if f.kind == "not-autotune-winner" and "when autotuned at hint" in f.message:
                assert "µs" in f.message and "not a time at any runtime shape" in f.message
