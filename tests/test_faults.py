"""Faults injected into real recordings and exports, through the real command line: a
program that forks, leaves a thread running and changes its directory; the file size
limit (`ulimit -f`) and a full disk; SIGKILL and SIGTERM at random points of a recording
and of an export; read-only and symlinked targets. What was recorded before the fault is
kept and opens; the failure is one line.

Each `kinspect run` costs a process that imports torch, so the program
(tests/programs/hostile.py) does several hostile things in one run; the kills use
seeded random points, printed with any failure.
"""

from __future__ import annotations

import errno
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from synthetic import synthetic_session

from kinspect import cli
from kinspect.core.session.format import log as log_module
from kinspect.core.session.format.log import LiveLog
from kinspect.core.store import load, save

REPO = Path(__file__).resolve().parent.parent
HOSTILE = Path(__file__).resolve().parent / "programs" / "hostile.py"
KILLED = "the recording stopped before its end record (was it killed?)"

torch = pytest.importorskip("torch")


def environment(**env: str) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    environ.update(PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1", **env)
    return environ


def kinspect(cwd: Path, *args: str, limit: int | None = None, **env: str) -> subprocess.CompletedProcess:
    def limited() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-m", "kinspect", *args], cwd=cwd, env=environment(**env),
                          capture_output=True, text=True, timeout=300, preexec_fn=limited)


def batches(stdout: str, pid: int | None = None) -> list[int]:
    """The batch sizes the program says it dispatched (one process's, given its pid)."""
    rows = [line.split() for line in stdout.splitlines() if line[:1].isdigit()]
    return [int(b) for p, b in rows if pid is None or int(p) == pid]


def ours(stderr: str) -> list[str]:
    """kinspect's lines after the one a machine without a GPU opens with (this one has none)."""
    return [line for line in stderr.splitlines() if not line.startswith("kinspect: no CUDA GPU here")]


@pytest.fixture
def here(tmp_path: Path) -> Path:
    for program in (HOSTILE, HOSTILE.with_name("standin.py")):
        shutil.copy(program, tmp_path / program.name)
    return tmp_path


# ---------------------------------------------------------------- what programs do


def test_a_program_that_forks_leaves_a_thread_and_changes_directory_is_recorded_whole(here):
    done = kinspect(here, "run", "-o", "rel.session.json", "hostile.py", HOSTILE="fork,thread,chdir")
    assert done.returncode == 0, done.stderr
    parent = int(done.stdout.split()[1])
    assert ours(done.stderr) == [
        "kinspect: saved rel.session.json: 1 sites, 4 dispatches, 0 measurements, 2 findings",
        "kinspect: the program forked 2 processes: a recording holds its own process's dispatches, so what they "
        "dispatched is not in the session",
    ]
    # the session and its log where they were asked for, not in the folder the program moved to
    assert sorted(p.name for p in here.iterdir()) == ["elsewhere", "hostile.py", "rel.session.json",
                                                      "rel.session.jsonl", "standin.py"]
    s = load(here / "rel.session.json")
    # the parent's dispatches, the thread's (300, after the main code) among them; none of the children's
    assert sorted(e.key[0][0] for e in s.events) == sorted(batches(done.stdout, parent)) == [100, 200, 300, 400]
    log = load(here / "rel.session.jsonl")  # the children never wrote into it
    assert log.truncated is None and log.events == s.events and [x.name for x in log.sites] == ["multi_kernel_0"]


# ---------------------------------------------------------------- no room


def test_the_file_size_limit_keeps_the_log_so_far_and_says_so_in_one_line(here):
    limit = 96 * 1024
    done = kinspect(here, "run", "hostile.py", limit=limit, HOSTILE="many", MANY="3000")
    lines = ours(done.stderr)
    log = here / "hostile.session.jsonl"
    assert lines == [
        f"kinspect: {log}: the recording log cannot grow (past the file size limit, {limit} bytes: ulimit -f): it "
        "keeps what was recorded until now, and opens",
        f"kinspect: error: cannot write {here / 'hostile.session.json'}: File too large; what was recorded is in "
        f"{log}, which opens as the session does"], done.stderr
    assert done.returncode == 2 and not (here / "hostile.session.json").exists()
    assert log.stat().st_size <= limit and not list(here.glob(".*"))
    kept = load(log)
    sizes = [e.key[0][0] for e in kept.events]
    assert sizes == [100, *range(1, len(sizes))] and len(sizes) > 500  # every dispatch up to the limit


def test_a_full_disk_mid_recording_keeps_the_log_so_far_and_says_so_once(tmp_path, monkeypatch):
    monkeypatch.setattr(log_module, "_CHUNK", 64 * 1024)
    s = synthetic_session(sites=1, events=0)
    said: list[str] = []
    log = LiveLog(tmp_path / "m.session.jsonl", s, on_failure=said.append)
    log.site(s.sites[0])
    log.runtime_site(0, s.sites[0].name)

    def full(fd: int, offset: int, length: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full)
    key = s.sites[0].variants[0].key
    log.record({"type": "key", "id": 0, "key": [list(t) for t in key]})
    written = 0
    while not said:  # past the first chunk, where the log must grow
        log.record(["e", 0, 0, 0, 0, False, None, None, written])
        written += 1
    log.record(["e", 0, 0, 0, 0, False, None, None, written])  # dropped, as the one that did not fit
    log.close()
    assert said == [f"{tmp_path / 'm.session.jsonl'}: the recording log cannot grow (No space left on device): it "
                    "keeps what was recorded until now, and opens"]
    kept = load(tmp_path / "m.session.jsonl")
    assert [e.t_ns for e in kept.events] == list(range(written - 1)) and kept.truncated == KILLED


# ---------------------------------------------------------------- killed


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_recording_killed_at_a_random_point_opens_with_a_prefix_of_its_dispatches(here, sig):
    seed = 40 + sig
    delay = random.Random(seed).uniform(0.0, 0.4)
    proc = subprocess.Popen([sys.executable, "-m", "kinspect", "run", "hostile.py"], cwd=here,
                            env=environment(HOSTILE="many,sleep", MANY="20000"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("parent")
    time.sleep(delay)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == -sig, (seed, err)
    kept = load(here / "hostile.session.jsonl")
    sizes = [e.key[0][0] for e in kept.events]
    assert sizes == [100, *range(1, len(sizes))][:len(sizes)], seed  # in order, none missing, none made up
    assert not (here / "hostile.session.json").exists()
    if sig == signal.SIGKILL:  # it may land inside the write of a record: that one is cut short, and said so
        assert kept.truncated == KILLED or re.fullmatch(r"the (last record \(line \d+\)|records from line \d+ on) "
                                                        r"(was|were) cut short.*", kept.truncated), kept.truncated
    else:  # handled between two of Python's steps: no record is cut
        assert kept.truncated == KILLED
    if sig == signal.SIGTERM and "sleeping" in out:  # written at the signal: every dispatch made
        assert len(sizes) == 20001, seed


@pytest.fixture(scope="module")
def big_export(tmp_path_factory) -> Path:
    """A session large enough that exporting it takes a while, and an export already there."""
    sys.path.insert(0, str(REPO))
    from benchmarks.bigsession import big_session

    folder = tmp_path_factory.mktemp("export")
    save(big_session(events=150_000), folder / "big.session.json")
    (folder / "trace.json").write_text('{"old": true}\n')
    return folder


@pytest.mark.parametrize("sig, writing", [(signal.SIGKILL, False), (signal.SIGKILL, True), (signal.SIGTERM, False),
                                          (signal.SIGTERM, True)])
def test_an_export_killed_at_a_random_point_leaves_the_old_file_or_the_whole_new_one(big_export, sig, writing):
    """Killed at a random point from its start, or (`writing`) once its file is being written."""
    seed = 2 * sig + writing
    delay = random.Random(seed).uniform(0.0, 0.05 if writing else 1.5)
    out = big_export / "trace.json"
    proc = subprocess.Popen([sys.executable, "-m", "kinspect", "export", "big.session.json", "--format", "perfetto",
                             "-o", out.name], cwd=big_export, env=environment(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    while writing and proc.poll() is None and not any(p.name.startswith(".trace") for p in big_export.iterdir()):
        time.sleep(0.002)
    time.sleep(delay)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    text = out.read_text(encoding="utf-8")
    assert text == '{"old": true}\n' or "traceEvents" in json.loads(text), (seed, err)
    temporary = [p.name for p in big_export.iterdir() if p.name.startswith(".")]
    if sig == signal.SIGTERM:
        assert (proc.returncode, err) in ((0, ""), (128 + signal.SIGTERM, "kinspect: terminated\n")), seed
        assert temporary == [], seed  # what it was writing went with it
    for name in temporary:  # what a SIGKILL leaves is a dot file beside the target, never the target
        (big_export / name).unlink()
    out.write_text('{"old": true}\n')


# ---------------------------------------------------------------- targets


def test_a_run_onto_a_read_only_or_symlinked_target_is_one_line_before_the_program_runs(tmp_path, capsys):
    program = tmp_path / "never.py"
    program.write_text("raise SystemExit('the program ran')\n")
    locked = tmp_path / "locked.session.json"
    locked.write_text("{}")
    locked.chmod(0o444)
    (tmp_path / "linked.session.jsonl").symlink_to(tmp_path / "nowhere")
    (tmp_path / "mine.session.jsonl").write_text("my notes\n")
    cases = {
        "locked.session.json": f"{locked}: is read-only; kinspect does not replace it (make it writable, or name "
                               "another file)",
        "linked.session.json": f"{tmp_path / 'linked.session.jsonl'}: is a symlink; kinspect writes its log only as "
                               "a file of its own: record elsewhere (-o)",
        "mine.session.json": f"{tmp_path / 'mine.session.jsonl'}: is there and is not a kinspect log; kinspect does "
                             "not replace it: record elsewhere (-o)",
    }
    before = sorted(os.listdir(tmp_path))
    for name, said in cases.items():
        assert cli.main(["run", "-o", str(tmp_path / name), str(program)]) == 2
        assert capsys.readouterr().err == f"kinspect: error: {said}\n"
    assert sorted(os.listdir(tmp_path)) == before and locked.read_text() == "{}"
    assert (tmp_path / "mine.session.jsonl").read_text() == "my notes\n" and not (tmp_path / "nowhere").exists()


# ---------------------------------------------------------------- streams


def test_a_closed_or_broken_stderr_or_stdout_changes_no_exit_status(tmp_path):
    session = str(REPO / "samples" / "linear.session.json")

    def status(args: list[str], **streams: int) -> int:
        return subprocess.run([sys.executable, "-m", "kinspect", *args], env=environment(), timeout=120,
                              **streams).returncode

    assert subprocess.run(f"{sys.executable} -m kinspect explain {session} 2>&- >&-", shell=True,
                          env=environment()).returncode == 0
    assert subprocess.run(f"{sys.executable} -m kinspect explain {tmp_path / 'none.json'} 2>&-", shell=True,
                          env=environment(), stdout=subprocess.DEVNULL).returncode == 2
    read, write = os.pipe()
    os.close(read)  # stderr's reader is gone before the error is said
    assert status(["explain", str(tmp_path / "none.json")], stdout=subprocess.DEVNULL, stderr=write) == 2
    assert status(["export", session, "--format", "md", "-o", str(tmp_path / "r.md")], stdout=subprocess.DEVNULL,
                  stderr=write) == 0
    os.close(write)
