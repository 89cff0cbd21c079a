"""A TORCH_TRACE log written on the GPU, opened as kinspect opens a production run's trace,
against a recording of the same run: `kinspect run` records a program with `TORCH_TRACE`
set, so the trace and the session come from one compile, and the trace's predicted pick
must be the recorded pick at every dispatch.

With KINSPECT_TRACE_SAMPLE set (scripts/device_session.sh trace), the GPT-2 generation the
device script recorded with its trace (samples/generate.py: batch and length dynamic) is
checked the same way.

The trace on the CPU: tests/test_trace*.py, on fixtures made by scripts/trace_fixture.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from traces import matched_sites, trace_against_recording

from gpu_cases import ROOT

from kinspect.core.dispatch.shapes import SymbolShape
from kinspect.core.quality.hints_effect import hints_effect
from kinspect.core.store import load

PROGRAM = textwrap.dedent("""
    import torch
    from torch import nn


    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(1024, 4096)
            self.fc2 = nn.Linear(4096, 1024)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))


    model = torch.compile(MLP().to("cuda", torch.bfloat16), dynamic=True)
    with torch.no_grad():
        for b in (3, 64, 100, 128, 129, 300, 1000, 1024, 1025, 4000, 100, 8192):
            model(torch.randn(b, 1024, device="cuda", dtype=torch.bfloat16))
    print("done")
""")


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """The program recorded by `kinspect run --hints` with TORCH_TRACE set: (trace, session)."""
    folder = tmp_path_factory.mktemp("trace")
    program = folder / "program.py"
    program.write_text(PROGRAM)
    env = {**os.environ, "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1", "TORCH_TRACE": str(folder / "trace")}
    done = subprocess.run([sys.executable, "-m", "kinspect", "run", "--hints", "64,256,4096",
                           "-o", str(folder / "program.session.json"), str(program)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    print(done.stderr[-3000:])
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "done"
    logs = sorted((folder / "trace").glob("dedicated_log_torch_trace_*.log"))
    print("trace logs:", [(p.name, p.stat().st_size) for p in logs])
    assert logs
    return load(folder / "trace"), load(folder / "program.session.json")


def test_the_trace_holds_the_recording_s_sites(traced):
    trace, recording = traced
    assert len(trace.sites) == len(recording.sites) == 2
    assert [v.hint for s in trace.sites for v in s.variants] == [64, 256, 4096] * 2
    assert trace.model.hints == (64, 256, 4096)  # set per compile by --hints: read off the keys
    assert [c.module for s in trace.sites for c in s.call_sites] == ["fc1", "fc2"]
    assert not trace.events and trace.truncated is None
    print("trace:", hints_effect(trace).line())
    assert hints_effect(trace).line() == ("hints [64, 256, 4096] took effect: 2 size-hint multi-kernel sites in "
                                          "1 graph; every GEMM has one")


def test_the_trace_predicts_the_recorded_pick_at_every_dispatch(traced):
    trace, recording = traced
    checked, wrong = trace_against_recording(trace, recording)
    print(f"{checked} dispatches checked, {len(wrong)} differ", wrong[:5])
    assert checked == len(recording.events) >= 12
    assert wrong == []


def test_the_sizes_typed_against_the_trace_give_the_recorded_keys(traced):
    trace, recording = traced
    sites, wrong = matched_sites(trace, recording)
    assert wrong == []
    for e in recording.events:
        site = sites[e.site]
        sizes = site.symbol_values(e.key)
        assert sizes and trace.runtime_key(site, SymbolShape(sizes)) == e.key, (e.site, e.key)


def test_the_device_script_s_gpt2_trace_predicts_every_recorded_pick():
    sample = os.environ.get("KINSPECT_TRACE_SAMPLE")
    if not sample:
        pytest.skip("KINSPECT_TRACE_SAMPLE names no trace (scripts/device_session.sh trace sets it)")
    trace = load(sample)
    recording = load(Path(sample).with_name("generate.session.json"))
    checked, wrong = trace_against_recording(trace, recording)
    print(f"generate: {checked} dispatches checked, {len(wrong)} differ", wrong[:5])
    print("generate trace:", hints_effect(trace).line())
    assert checked == len(recording.events) > 100
    assert wrong == []
    assert [c.module for c in trace.sites[0].call_sites] == [c.module for c in recording.sites[0].call_sites]
