"""`kinspect record` as the ranks of a real torchrun job on the CPU: torchrun's own launcher
(`torch.distributed.run.main`) starts two processes, each joins the gloo process group and
runs kinspect's command with the GPU pipeline stood in (tests/torchrun_record.py: the real
SizeHintMultiKernelCall with stand-in kernels). The model file reads its rank at import,
which only works if kinspect joined the group before importing it. Then the two sessions
merge, on the command line and in a Perfetto trace.

GPU run of the same command on two H200s, with DDP: tests/gpu/test_gpu_ranks.py.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from kinspect import cli
from kinspect.core.store import load

torch = pytest.importorskip("torch")
pytest.importorskip("torch.distributed.run")
if not torch.distributed.is_available() or not torch.distributed.is_gloo_available():
    pytest.skip("this torch has no gloo backend", allow_module_level=True)

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent

# Named linear.py so the stand-in pipeline compiles it with samples/linear.session.json's facts.
MODEL = textwrap.dedent("""\
    import torch
    import torch.distributed as dist
    from torch import nn

    model = nn.Linear(1024, 4096)


    def inputs(B=1000):
        return torch.randn(B, 1024)


    # Each rank its own batch sizes: rank 1 runs twice rank 0's.
    workload = [{"B": b * (1 + dist.get_rank())} for b in (64, 100, 1000)]
""")


@pytest.fixture
def job(tmp_path, monkeypatch):
    model = tmp_path / "linear.py"
    model.write_text(MODEL)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), str(REPO), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # torchrun sets it in this process otherwise
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    return model


@pytest.mark.filterwarnings("ignore:Unable to enable fault handler")
def test_each_rank_records_its_own_session_and_they_merge(job, tmp_path, capsys):
    from torch.distributed.run import main as torchrun

    torchrun(["--standalone", "--nproc-per-node", "2", "--log-dir", str(tmp_path / "logs"),
              str(TESTS / "torchrun_record.py"), "record", str(job), "--measure"])
    sessions = [load(tmp_path / f"linear.rank{r}.session.json") for r in (0, 1)]
    assert [(s.environment.rank, s.environment.world_size, s.environment.local_rank) for s in sessions] == [
        (0, 2, 0), (1, 2, 1)]
    assert all(s.environment.gpu == "fake GPU (CPU stand-in)" for s in sessions)
    assert [[e.key[1][0] for e in s.events if e.step is not None] for s in sessions] == [
        [64, 100, 1000], [128, 200, 2000]]  # each rank's own workload, read from its rank at import
    assert (tmp_path / "linear.rank1.session.jsonl").is_file()  # each rank's crash-safe log

    capsys.readouterr()
    assert cli.main(["explain", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "rank 0 of 2: fake GPU (CPU stand-in) (cuda:0), 7 dispatches, 18 measurements" in out
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│")]
    steps = [r for r in rows if len(r) == 6 and r[0].isdigit()]
    assert [(r[0], r[1], r[2], r[3].split()[0]) for r in steps] == [
        ("0", "0", "B=64", "v0"), ("0", "1", "B=128", "v0"),
        ("1", "0", "B=100", "v0"), ("1", "1", "B=200", "v1"),
        ("2", "0", "B=1000", "v1"), ("2", "1", "B=2000", "v2"),
    ]
    print(out)
    assert all(r[5] == "slowest" or float(r[5]) >= 0 for r in steps)

    trace = tmp_path / "job.trace.json"
    assert cli.main(["export", str(tmp_path / "linear.rank0.session.json"), str(tmp_path / "linear.rank1.session.json"),
                     "--format", "perfetto", "-o", str(trace)]) == 0
    doc = json.loads(trace.read_text())
    names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"}
    assert names == {1: "rank 0 · fake GPU (CPU stand-in) cuda:0 · linear",
                     2: "rank 1 · fake GPU (CPU stand-in) cuda:1 · linear"}
    first = {pid: min(e["ts"] for e in doc["traceEvents"] if e.get("cat") == "dispatch" and e["pid"] == pid
                      and e["args"]["step"] == 0) for pid in (1, 2)}
    assert first[1] == first[2]  # the ranks line up at their first workload step


@pytest.mark.parametrize("out, rank, expected", [
    ("model.session.json", 1, "model.rank1.session.json"),
    ("run.json", 0, "run.rank0.json"),
    ("run", 3, "run.rank3"),
])
def test_each_rank_saves_beside_the_others_with_its_rank_in_the_name(out, rank, expected):
    from kinspect.core.store import rank_path

    assert rank_path(Path("/r") / out, rank) == Path("/r") / expected


@pytest.mark.parametrize("environ, error", [
    ({"RANK": "0"}, "RANK is set but WORLD_SIZE is not: run kinspect record under torchrun, which sets both"),
    ({"RANK": "0", "WORLD_SIZE": "two", "LOCAL_RANK": "0"}, "WORLD_SIZE must be an integer, got 'two'"),
    ({"RANK": "2", "WORLD_SIZE": "2", "LOCAL_RANK": "0"},
     "RANK=2, WORLD_SIZE=2, LOCAL_RANK=0 do not describe a rank of a job"),
])
def test_an_incomplete_torchrun_environment_is_one_line(environ, error):
    from kinspect.core.errors import KinspectError
    from kinspect.inductor.launch.torchrun import from_environment

    with pytest.raises(KinspectError) as e:
        from_environment(environ)
    assert str(e.value) == error


def test_outside_torchrun_there_is_no_rank():
    from kinspect.inductor.launch.torchrun import Rank, from_environment

    assert from_environment({}) is None
    assert from_environment({"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1"}) == Rank(1, 2, 1)


def test_under_torchrun_without_cuda_each_rank_says_so_in_one_line(job, monkeypatch, capsys):
    from kinspect.commands import recording

    monkeypatch.setattr(recording, "cuda_available", lambda: False)
    for name, value in (("RANK", "1"), ("WORLD_SIZE", "2"), ("LOCAL_RANK", "1")):
        monkeypatch.setenv(name, value)
    assert cli.main(["record", str(job)]) == 2
    assert capsys.readouterr().err == (f"kinspect: error: {job}: rank 1: kinspect record under torchrun needs a CUDA "
                                       "GPU per rank and none is available here\n")
    assert not list(job.parent.glob("*.session.json*"))
