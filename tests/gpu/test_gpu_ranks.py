"""A DDP job recorded under the real launcher on two GPUs: `torchrun --nproc-per-node 2 -m
kinspect record samples/ddp.py --measure` writes one session per rank, each naming its
rank, world size and GPU, and `kinspect explain` shows the ranks side by side. With
KINSPECT_RECORD_DIR set the rank sessions are saved there (scripts/device_session.sh
ranks), to be committed as the sample's recording.

The same command's code on the CPU (gloo, stand-in kernels): tests/test_torchrun_cpu.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from gpu_cases import ROOT, SAMPLES

from kinspect.core.store import load

DDP = SAMPLES / "ddp.py"


def run(*args: object, timeout: int = 450) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
    env.pop("FORCE_COLOR", None)
    result = subprocess.run([sys.executable, *map(str, args)], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=timeout)
    print(result.stderr[-6000:])
    assert result.returncode == 0, result.stderr[-6000:]
    return result


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA GPUs")
def test_torchrun_records_each_rank_of_a_ddp_job_and_explain_merges_them(tmp_path):
    out = Path(os.environ.get("KINSPECT_RECORD_DIR") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    recorded = run("-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                   "-m", "kinspect", "record", DDP, "--measure", "-o", out / "ddp.session.json")
    assert "kinspect: rank 0: saved" in recorded.stderr and "kinspect: rank 1: saved" in recorded.stderr
    sessions = [load(out / f"ddp.rank{r}.session.json") for r in (0, 1)]
    for r, s in enumerate(sessions):
        env = s.environment
        assert (env.rank, env.world_size, env.local_rank) == (r, 2, r)
        assert env.gpu and "NVIDIA" in env.gpu
        assert s.sites, f"rank {r}: DDP's module compiled no size-hint site"
        assert all(sym.alias == "B" for sym in s.symbols if sym.input is not None), s.symbols
        steps = [e for e in s.events if e.step is not None]
        assert sorted({e.step for e in steps}) == list(range(6))
        assert all(e.picked == e.predicted for e in s.events)
        assert s.measurements
    assert [e.key for e in sessions[0].events if e.step == 1] != [e.key for e in sessions[1].events if e.step == 1]

    table = run("-m", "kinspect", "explain", out / "ddp.rank0.session.json", out / "ddp.rank1.session.json").stdout
    print(table)
    assert "rank 0 of 2: NVIDIA" in table and "rank 1 of 2: NVIDIA" in table
    assert "(cuda:0)" in table and "(cuda:1)" in table
    assert "steps by rank: picks and measured µs per site" in table
    doc = json.loads(run("-m", "kinspect", "explain", out, "--json").stdout)  # the folder: its rank sessions
    assert [st["step"] for st in doc["steps"]] == list(range(6))
    assert all(st["slowest"] in (0, 1) and len(st["ranks"]) == 2 for st in doc["steps"])  # every step timed on both
    assert {s["rank"] for s in doc["ranks"]} == {0, 1} and doc["missing_ranks"] == []
    trace = tmp_path / "ddp.trace.json"
    run("-m", "kinspect", "export", out / "ddp.rank0.session.json", out / "ddp.rank1.session.json",
        "--format", "perfetto", "-o", trace)
    pids = {e["pid"] for e in json.loads(trace.read_text())["traceEvents"] if e.get("cat") == "dispatch"}
    assert pids == {1, 2}
