"""The recording log as a live recording writes it: through the recorder, past its first
8 MiB, and killed with SIGKILL in the middle of a run.

The dispatches come from Inductor's own SizeHintMultiKernelCall with stand-in kernels on
meta tensors (as in test_recorder.py), so the log is written by the same code path as
on a GPU; what a user gets back is checked through `load`, the way the
inspector opens a recording.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from standins import StandIn
from synthetic import synthetic_session

from kinspect.core.dispatch.decision import decide
from kinspect.core.errors import SessionError
from kinspect.core.session.model import Finding
from kinspect.core.session.runtime import Measurement
from kinspect.core.store import load, read
from kinspect.core.session.format.log import LiveLog
from kinspect.inductor.hooks.recorder import Recorder

torch = pytest.importorskip("torch")
multi_kernel = pytest.importorskip("torch._inductor.codegen.multi_kernel")

REPO = Path(__file__).resolve().parent.parent
SIZES = (1, 64, 100, 128, 129, 1000, 1025, 8192)
KILLED = "the recording stopped before its end record (was it killed?)"


@pytest.fixture(autouse=True)
def _no_multi_kernel_cache(monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE", "1")


def live_session():
    """One addmm site (bias, x (s0, 1024), weight, out) with hints 64, 256, 1024."""
    return synthetic_session(sites=1, variants=3, measured=False)


def real_call(site):
    kernels = {v.key: StandIn(v.kernel_name + f"_{v.index}") for v in site.variants}
    return multi_kernel.SizeHintMultiKernelCall(site.name, kernels, {i: [slice(0, 4)] for i in range(len(kernels))})


def call_args(b: int):
    return (torch.empty(4096, device="meta"), torch.empty(b, 1024, device="meta"),
            torch.empty(4096, 1024, device="meta"), torch.empty(b, 4096, device="meta"))


def expected(site, n: int) -> list[tuple]:
    """(key, hit, picked) of the first n dispatches of the SIZES loop."""
    keys = [((4096,), (b, 1024), (4096, 1024), (b, 4096)) for b in SIZES]
    picks = [decide(site.keys, k).chosen for k in keys]
    return [(keys[i % len(SIZES)], i >= len(SIZES), picks[i % len(SIZES)]) for i in range(n)]


def open_log(path: Path, session) -> LiveLog:
    """What the pipeline writes before the model runs: header, symbols, graphs, sites."""
    log = LiveLog(path, session)
    log.symbols(session.symbols)
    for g in session.graphs:
        log.graph(g)
    for s in session.sites:
        log.site(s)
    return log


# ---------------------------------------------------------------- round trip


def recording(tmp_path: Path):
    """A live session, its log at model.session.jsonl, a recorder writing to it and the site's real call."""
    session = live_session()
    path = tmp_path / "model.session.jsonl"
    log = open_log(path, session)
    with Recorder() as rec:
        rec.configure(log=log)
        call = real_call(session.sites[0])
    return session, path, log, rec, call


def test_a_live_recording_reads_back_as_the_recorder_saw_it(tmp_path):
    session, path, log, rec, call = recording(tmp_path)
    site = session.sites[0]
    call.run(*call_args(100))  # the compile run: no step
    for step, b in enumerate((100, 3000, 64)):
        rec.set_step(step)
        call.run(*call_args(b))
    rec.configure(log=log, gate=lambda s, k, hit: 2)
    call.run(*call_args(100))  # forced on a hit
    call.run(*call_args(7))  # forced on a miss
    rec.configure(log=log)
    m = Measurement(site.name, ((4096,), (100, 1024), (4096, 1024), (100, 4096)), 1, "cuda_events", 12.5, 12.0, 13.0, 40, tflops=1.5, gbps=900.0)
    f = Finding("model-disagrees", "event 3: ⟨text⟩ [bold]as is[/bold]", "error", site.name, None, (1, 2))
    log.measurement(m)
    log.finding(f)
    log.close()

    loaded = read(path)
    events = rec.dispatch_events()
    assert loaded.truncated is None
    assert loaded.events == events
    assert [(e.step, e.cache_hit, e.override) for e in events] == [
        (None, False, None), (0, True, None), (1, False, None), (2, False, None), (2, True, 2), (2, False, 2)]
    assert [e.picked for e in events[-2:]] == [2, 2] and events[-1].predicted == 0
    assert (loaded.environment, loaded.model, loaded.symbols, loaded.graphs, loaded.sites) == (
        session.environment, session.model, session.symbols, session.graphs, session.sites)
    assert loaded.measurements == [m] and loaded.findings == [f]
    text = path.read_text(encoding="utf-8")
    assert "\x00" not in text and text.endswith('{"type":"end"}\n')


def test_a_site_is_introduced_in_the_log_before_its_first_event(tmp_path):
    """Events name runtime sites by index; a site attached while logging, or before the
    log was set, must be introduced before its first event or the log cannot be read."""
    session = synthetic_session(sites=2, variants=3, measured=False)
    path = tmp_path / "rec.jsonl"
    log = open_log(path, session)
    with Recorder() as rec:
        early = real_call(session.sites[0])
        rec.configure(log=log)
        late = real_call(session.sites[1])
    late.run(*call_args(100))
    early.run(*call_args(100))
    log.close()
    lines = path.read_text().splitlines()
    intro = [i for i, line in enumerate(lines) if '"runtime_site"' in line]
    first_event = next(i for i, line in enumerate(lines) if line.startswith('["d"'))
    assert len(intro) == 2 and max(intro) < first_event
    assert [e.site for e in load(path).events] == ["multi_kernel_1", "multi_kernel_0"]


# ---------------------------------------------------------------- growth


def with_sources(session, lines: int, variants: int):
    """The session with `lines` lines of source in its first variants: a big site record."""
    site = session.sites[0]
    src = "x = 1\n" * lines
    session.sites = [replace(site, variants=tuple(
        replace(v, source=src) if v.index < variants else v for v in site.variants))]
    return session


def test_events_that_cross_the_first_8_mib_chunk_are_all_kept(tmp_path):
    session = with_sources(live_session(), 564 * 1024, 2)  # a 7.9 MB site record
    path = tmp_path / "rec.jsonl"
    log = open_log(path, session)
    assert path.stat().st_size == 8 << 20
    with Recorder() as rec:
        rec.configure(log=log)
        call = real_call(session.sites[0])
    for i in range(25_000):  # about 1 MB of events
        call.run(*call_args(SIZES[i % len(SIZES)]))
    assert path.stat().st_size == 16 << 20
    log.close()
    loaded = load(path)
    assert loaded.truncated is None
    assert loaded.sites == session.sites
    assert len(loaded.events) == 25_000
    assert loaded.events == rec.dispatch_events()
    assert path.stat().st_size == len(path.read_bytes()) < 16 << 20


def test_a_record_larger_than_a_whole_chunk_is_written_whole(tmp_path):
    session = with_sources(live_session(), 680 * 1024, 3)  # a 14 MB site record
    path = tmp_path / "rec.jsonl"
    open_log(path, session).close()
    loaded = load(path)
    assert loaded.truncated is None and loaded.sites == session.sites


# ---------------------------------------------------------------- kill -9

CHILD = r"""
import os, signal, sys, time
import torch
from kinspect.core.session.format.log import FLUSH_S, LiveLog
from kinspect.inductor.hooks.recorder import Recorder
from synthetic import synthetic_session
from torch._inductor.codegen.multi_kernel import SizeHintMultiKernelCall

class StandIn:
    def __init__(self, name):
        self.inductor_meta = {"kernel_name": name}
    def run(self, *args, **kwargs):
        pass

path, count, big = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "big"
session = synthetic_session(sites=1, variants=3, measured=False)
site = session.sites[0]
if big:  # the events cross the first 8 MiB chunk
    from dataclasses import replace
    src = "x = 1\n" * (540 * 1024)
    site = replace(site, variants=tuple(replace(v, source=src if v.index < 2 else v.source) for v in site.variants))
    session.sites = [site]
log = LiveLog(path, session)
log.symbols(session.symbols)
log.site(site)
sizes = SIZES
args = {b: (torch.empty(4096, device="meta"), torch.empty(b, 1024, device="meta"),
            torch.empty(4096, 1024, device="meta"), torch.empty(b, 4096, device="meta")) for b in sizes}
with Recorder() as rec:
    rec.configure(log=log)
    call = SizeHintMultiKernelCall(site.name, {v.key: StandIn(str(v.index)) for v in site.variants},
                                   {i: [slice(0, 4)] for i in range(3)})
i = 0
while count < 0 or i < count:
    if i % 1000 == 0:
        rec.set_step(i // 1000)
    call.run(*args[sizes[i % len(sizes)]])
    i += 1
time.sleep(2 * FLUSH_S)  # the log's writer writes what was held back at least once a FLUSH_S
os.kill(os.getpid(), signal.SIGKILL)
""".replace("SIZES", repr(SIZES))


def start_child(tmp_path: Path, count: int, big: bool) -> tuple[subprocess.Popen, Path]:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    path = tmp_path / "killed.session.jsonl"
    env = {**os.environ, "TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE": "1", "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")])}
    proc = subprocess.Popen([sys.executable, str(script), str(path), str(count), "big" if big else "small"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return proc, path


def check_events(loaded, n: int) -> None:
    """Every event up to the kill, in order, as the loop made them."""
    got = [(e.seq, e.key, e.cache_hit, e.picked, e.predicted, e.step) for e in loaded.events]
    want = [(i, key, hit, picked, picked, i // 1000) for i, (key, hit, picked) in enumerate(expected(loaded.sites[0], n))]
    assert got == want


def test_a_recording_killed_with_sigkill_keeps_every_event_older_than_the_flush_interval(tmp_path):
    proc, path = start_child(tmp_path, 40_000, big=True)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, err.decode()
    assert path.stat().st_size == 16 << 20  # the events crossed into a second chunk
    loaded = load(path)
    assert loaded.truncated == KILLED
    check_events(loaded, 40_000)


def written_events(data: bytes) -> int:
    """Events on whole lines before the log's first unwritten (NUL) byte. A batch being
    copied in can hold its later bytes before its first ones (memmove stores its first
    vector last), so events past that hole are not yet written, and a kill inside the copy
    leaves them unread."""
    nul = data.find(b"\0")
    written = data if nul < 0 else data[:nul]
    return written[:written.rfind(b"\n") + 1].count(b'["d",')


def test_a_recording_killed_mid_loop_opens_with_what_it_had_written(tmp_path):
    proc, path = start_child(tmp_path, -1, big=False)
    seen = 0
    try:
        deadline = time.monotonic() + 30
        while seen < 3000 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
            if path.exists():
                seen = written_events(path.read_bytes())
    finally:
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=30)
    assert seen >= 3000, err.decode()
    loaded = load(path)
    assert loaded.truncated is not None
    assert len(loaded.events) >= seen
    check_events(loaded, len(loaded.events))


@pytest.mark.parametrize("piece", [1 << 20, 7, 64, 4099])
def test_a_write_killed_halfway_leaves_a_hole_and_the_log_opens_up_to_it(tmp_path, monkeypatch, piece):
    """A copy into the mapped file need not go front to back: a recording killed inside one
    left the first bytes of a record unwritten and later records whole after them (seen on
    the 2-core CI machine). The log opens with every record before the hole, however the
    pieces it is read in fall."""
    from kinspect.core.session.format import log as log_format

    monkeypatch.setattr(log_format, "_PIECE", piece)
    _, path, log, rec, call = recording(tmp_path)
    for step, b in enumerate((100, 3000, 64, 500, 7)):
        rec.set_step(step)
        call.run(*call_args(b))
    log.close()
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]  # no end record: it was killed
    events = [i for i, line in enumerate(lines) if line.startswith('["d",')]
    hole = events[-2]
    lines[hole] = "\x00" * 4 + lines[hole][4:]
    path.write_text("".join(lines) + "\x00" * 4096, encoding="utf-8")
    loaded = read(path)
    assert loaded.truncated == f"the records from line {hole + 1} on were cut short (the write the recording stopped in)"
    assert loaded.events == rec.dispatch_events()[:len(events) - 2]


@pytest.mark.parametrize("piece", [1 << 20, 5, 33])
@pytest.mark.parametrize("cut", [0, 9])
def test_a_killed_recording_s_padding_ends_its_log_wherever_the_pieces_fall(tmp_path, monkeypatch, piece, cut):
    """The NULs after a killed recording's last write are padding, not a hole: every record
    before them opens, the last one cut short where the write stopped in it."""
    from kinspect.core.session.format import log as log_format

    _, path, log, rec, call = recording(tmp_path)
    for step, b in enumerate((100, 3000, 64)):
        rec.set_step(step)
        call.run(*call_args(b))
    log.close()
    text = path.read_text(encoding="utf-8")
    text = text[:text.rindex('{"type":"end"}')]
    if cut:
        text = text[:-cut]  # the last event's write stopped partway
    path.write_text(text + "\x00" * 5000, encoding="utf-8")
    monkeypatch.setattr(log_format, "_PIECE", piece)
    loaded = read(path)
    n = len(rec.dispatch_events()) - (1 if cut else 0)
    assert loaded.events == rec.dispatch_events()[:n]
    lines = text.count("\n") + (1 if cut else 0)
    assert loaded.truncated == (f"the last record (line {lines}) was cut short" if cut
                                else "the recording stopped before its end record (was it killed?)")


def test_a_log_line_of_megabytes_is_read_once_and_named_in_one_line(tmp_path, monkeypatch):
    """A line with no end in sight is kept as its pieces and joined once, not copied whole
    at every piece read."""
    from kinspect.core.session.format import log as log_format

    _, path, log, rec, call = recording(tmp_path)
    call.run(*call_args(100))
    log.close()
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join([*lines[:3], b"7" * (4 << 20), *lines[3:]]))
    monkeypatch.setattr(log_format, "_PIECE", 64)
    with pytest.raises(SessionError, match=r"line 4: holds a number too long to read$"):
        read(path)
