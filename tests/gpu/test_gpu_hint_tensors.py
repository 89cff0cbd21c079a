"""Inductor's benchmark tensors at a size hint, on the GPU: the misfit found on stock torch
(finding, reproducer that fails there), the way through (--fit-benchmark-tensors) on the
three cases that crashed, and autotune times that agree with timing the kernel on a tensor
of the right size."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpu_cases import MODELS, SAMPLES

from kinspect.core.errors import KinspectError
from kinspect.core.quality.benchmark_tensors import KIND
from kinspect.core.session.compile_changes import PATCH_KEY


def _pipeline(path: Path, **changes):
    from kinspect.core.session.compile_changes import CompileChanges
    from kinspect.inductor.launch.modelfile import load_model_file
    from kinspect.inductor.recording.pipeline import LivePipeline, Options

    said: list[str] = []
    hints = changes.pop("hints", None)
    live = LivePipeline(load_model_file(path), Options(progress=said.append, hints=hints,
                                                       changes=CompileChanges(**changes)))
    return live, said


def _findings(live, path):
    """The findings the session saved from this pipeline derives when opened."""
    from kinspect.core.store import load

    live.save(path)
    return [f for f in load(path).findings if f.kind == KIND]


def test_fitted_bmm_compiles_and_its_autotune_time_agrees_with_the_kernel_on_a_right_sized_tensor():
    live, _ = _pipeline(MODELS / "bmm_scores.py", fit_benchmark_tensors=True)
    live.compile()
    s = live.session
    assert s.environment.config.get(PATCH_KEY) is True
    site = s.sites[0]
    v = next(v for v in site.variants if v.hint == 4096)
    row = next(r for r in v.autotune if r.name == v.emitted) if v.emitted else None
    measured = live.measure({"S": 4096})
    kernel = next(m for m in measured if m.variant == v.index and m.method == "cupti" and m.median_us)
    print(f"hint 4096: autotuned {row and row.time_us} us ({v.emitted}), timed at S=4096 {kernel.median_us} us")
    assert row is not None and row.time_us
    assert 0.67 < row.time_us / kernel.median_us < 1.5


def test_timm_vit_with_the_batch_dynamic_records_and_sweeps_with_the_fit():
    pytest.importorskip("timm")
    from kinspect.inductor.jobs.sweep import run_sweep

    live, said = _pipeline(SAMPLES / "vit.py", fit_benchmark_tensors=True)
    live.compile()
    results = live.run_workload()
    assert live.session.sites and not [r.error for r in results if r.error]
    run_sweep(live, {"B": (2, 128)}, 10, said.append)
    out = os.environ.get("KINSPECT_RECORD_DIR")
    if out:
        live.save(Path(out) / "vit.session.json")
    assert live.session.measurements


def test_gpt2_with_the_candidate_hints_advise_tries_compiles_with_the_fit():
    pytest.importorskip("transformers")
    live, _ = _pipeline(SAMPLES / "gpt2.py", hints=[16, 32, 64, 128, 256, 512, 1024], fit_benchmark_tensors=True)
    started = time.perf_counter()
    live.compile()
    g = live.capture.graphs[0]
    print(f"gpt2 candidate compile: {time.perf_counter() - started:.0f} s, {len(live.session.sites)} sites, "
          f"{g.templates} templates, {len(g.timings)} (template, hint) autotune tables")
    assert live.session.sites


# Last: a stock compile that faults leaves this process's CUDA context unusable.
def test_stock_bmm_at_hint_4096_is_a_misfit_with_a_reproducer_that_fails_on_stock_torch(tmp_path):
    model = tmp_path / "bmm_scores.py"
    shutil.copy(MODELS / "bmm_scores.py", model)
    live, said = _pipeline(model)
    error = None
    try:
        live.compile()
    except KinspectError as e:
        error = str(e)
    print("stock bmm:", error or "compiled")
    every = _findings(live, tmp_path / "bmm.session.json")
    for f in every:
        print("finding:", f.message)
    found = [f for f in every if "hint 4096" in f.message]
    assert any("128*S" in f.message and "reads past the tensor" in f.message for f in found)
    if error is not None and "CUDA error" in error:
        assert "CUDA_LAUNCH_BLOCKING=1" in error, error
    scripts = sorted((tmp_path / "bmm_scores.hint-repro").glob("*hint4096*.py"))
    assert scripts, said
    report = scripts[0].with_suffix(".md").read_text()
    assert "128*s" in report and "```python" in report
    run = subprocess.run([sys.executable, str(scripts[0])], capture_output=True, text=True, timeout=400,
                         env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    print("reproducer:", run.returncode, run.stdout.strip().splitlines()[-3:])
    assert run.returncode == 1 and ("MISFIT" in run.stdout or "FAILED" in run.stdout)
