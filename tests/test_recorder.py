"""The recorder against Inductor's own SizeHintMultiKernelCall, run by run.

Instances of the installed torch's real runtime class are built inside `with Recorder()`
(construction is what the recorder hooks) with stand-in kernels that log which of them
ran, and called through the real `run` on meta tensors. Every assertion about what ran
reads that log, never only what the recorder claims.
"""

from __future__ import annotations

import math

import pytest
from standins import StandIn

from kinspect.inductor.hooks.recorder import Recorder

torch = pytest.importorskip("torch")
multi_kernel = pytest.importorskip("torch._inductor.codegen.multi_kernel")
Call = multi_kernel.SizeHintMultiKernelCall

HINTS = (64, 256, 4096)


@pytest.fixture(autouse=True)
def _no_multi_kernel_cache(monkeypatch):
    """Without it, SizeHintMultiKernelCall.__init__ reads a disk cache keyed by real kernels."""
    monkeypatch.setenv("TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE", "1")


def linear_call(ran: list[str], name: str = "multi_kernel_0", hints=HINTS):
    """An addmm-like site keyed on x (B, 1024) and out (B, 4096), one variant per hint."""
    kernels = {((h, 1024), (h, 4096)): StandIn(f"{name}_k{i}", ran) for i, h in enumerate(hints)}
    return Call(name, kernels, {i: [slice(0, 2)] for i in range(len(hints))})


def args(b: int, extra: bool = False):
    out = [torch.empty(b, 1024, device="meta"), torch.empty(b, 4096, device="meta")]
    if extra:  # an epilogue input the hint keys do not have
        out.append(torch.empty(b, 4096, device="meta"))
    return out


def key(b: int) -> tuple:
    return ((b, 1024), (b, 4096))


def nearest(b: int) -> int:
    """Inductor's rule, written out: log2 L1 distance, first minimum wins."""
    def lg(v: int) -> float:
        return math.log2(v) if v > 0 else -1
    dists = [2 * abs(lg(b) - lg(h)) for h in HINTS]
    return dists.index(min(dists))


def variant_that_ran(ran: list[str]) -> int:
    return int(ran[-1].rsplit("_k", 1)[1])


# ---------------------------------------------------------------- plain recording


@pytest.mark.parametrize("sizes", [[100, 100, 5000, 100], [0, 1, 63, 64, 128, 129, 1024, 2048, 2049, 10**6]])
def test_every_run_is_one_event_with_what_actually_ran(sizes):
    ran: list[str] = []
    with Recorder() as rec:
        call = linear_call(ran)
    seen: set[int] = set()
    expect = []
    for b in sizes * 2:
        call.run(*args(b))
        expect.append((key(b), b in seen, variant_that_ran(ran)))
        seen.add(b)
    events = rec.dispatch_events()
    assert len(ran) == len(events) == len(rec) == len(sizes) * 2
    assert [(e.key, e.cache_hit, e.picked) for e in events] == expect
    assert [e.picked for e in events] == [nearest(b) for b in sizes * 2]
    assert all(e.predicted == e.picked and e.override is None for e in events)
    assert all(e.site == "multi_kernel_0" for e in events)


def test_a_tie_at_the_geometric_midpoint_runs_the_first_minimum():
    ran: list[str] = []
    with Recorder() as rec:
        call = linear_call(ran)
    call.run(*args(128))  # log2 128 is 7: as far from 64 as from 256
    call.run(*args(128))
    assert ran == ["multi_kernel_0_k0"] * 2
    assert [(e.picked, e.predicted, e.cache_hit) for e in rec.dispatch_events()] == [(0, 0, False), (0, 0, True)]


def test_a_key_with_an_extra_tensor_is_predicted_as_inductors_zip_truncates_it():
    ran: list[str] = []
    with Recorder() as rec:
        call = Call("multi_kernel_0", {((h, 1024), (h, 4096)): StandIn(f"k{i}", ran) for i, h in enumerate(HINTS)},
                    {i: [slice(0, 3)] for i in range(3)})
    call.run(*args(3000, extra=True))
    (e,) = rec.dispatch_events()
    assert e.key == ((3000, 1024), (3000, 4096), (3000, 4096))
    assert ran == ["k2"] and e.picked == e.predicted == 2


def test_events_carry_the_step_set_before_them_and_relative_times():
    ran: list[str] = []
    with Recorder() as rec:
        call = linear_call(ran)
    call.run(*args(100))  # before any step: the compile run
    rec.set_step(0)
    call.run(*args(100))
    call.run(*args(300))
    rec.set_step(1)
    rec.set_step(2)  # a step that dispatched nothing leaves no trace
    call.run(*args(100))
    rec.set_step(None)
    call.run(*args(9000))
    events = rec.dispatch_events()
    assert [e.seq for e in events] == [0, 1, 2, 3, 4]
    assert [e.step for e in events] == [None, 0, 0, 2, None]
    assert events[0].t_ns == 0
    assert all(a.t_ns <= b.t_ns for a, b in zip(events, events[1:]))
    assert [(e.seq, e.step, e.key) for e in rec.dispatch_events(start=3)] == [(3, 2, key(100)), (4, None, key(9000))]
    assert all(rec.dispatch_events(start=k) == events[k:] for k in range(6))  # a live session reads only new ones


def test_each_instance_is_its_own_site_named_by_the_namer():
    ran: list[str] = []
    with Recorder(namer=lambda call: f"{call.multi_kernel_name}@graph_1") as rec:
        first = linear_call(ran, "multi_kernel_0")
        second = linear_call(ran, "multi_kernel_1", hints=(32, 8192))
    second.run(*args(100))
    first.run(*args(100))
    assert ran == ["multi_kernel_1_k0", "multi_kernel_0_k0"]
    assert [s.name for s in rec.sites] == ["multi_kernel_0@graph_1", "multi_kernel_1@graph_1"]
    assert rec.sites[1].keys == (((32, 1024), (32, 4096)), ((8192, 1024), (8192, 4096)))
    assert [e.site for e in rec.dispatch_events()] == ["multi_kernel_1@graph_1", "multi_kernel_0@graph_1"]


def test_a_site_knows_the_module_that_built_it(tmp_path):
    """The wrapper file: the module whose top level creates the instance, as a loaded
    Inductor wrapper does."""
    import importlib.util

    wrapper = tmp_path / "wrapper_abc.py"
    wrapper.write_text(
        "from torch._inductor.codegen.multi_kernel import SizeHintMultiKernelCall\n"
        "class K:\n"
        "    inductor_meta = {'kernel_name': 'k'}\n"
        "    def run(self, *a, **k): pass\n"
        "multi_kernel_0 = SizeHintMultiKernelCall('multi_kernel_0', {((64, 8),): K()}, {0: [slice(0, 1)]})\n"
    )
    spec = importlib.util.spec_from_file_location("wrapper_abc", wrapper)
    module = importlib.util.module_from_spec(spec)
    with Recorder() as rec:
        spec.loader.exec_module(module)
    assert [(s.name, s.wrapper_file) for s in rec.sites] == [("multi_kernel_0", str(wrapper))]


# ---------------------------------------------------------------- the stepping gate


def test_an_override_on_a_hit_runs_the_forced_kernel_without_touching_inductors_cache():
    ran: list[str] = []
    with Recorder() as rec:
        call = linear_call(ran)
    call.run(*args(100))
    asked = []

    def gate(site, k, hit):
        asked.append((site.name, k, hit))
        return 2

    rec.configure(gate=gate)
    call.run(*args(100))
    rec.configure(gate=None)
    call.run(*args(100))
    assert ran == ["multi_kernel_0_k0", "multi_kernel_0_k2", "multi_kernel_0_k0"]
    assert asked == [("multi_kernel_0", key(100), True)]
    assert call._shape_cache == {key(100): 0}
    assert [(e.picked, e.predicted, e.cache_hit, e.override) for e in rec.dispatch_events()] == [
        (0, 0, False, None), (2, 0, True, 2), (0, 0, True, None)]


def test_an_override_on_a_miss_runs_the_forced_kernel_and_inductor_caches_its_own_pick():
    ran: list[str] = []
    with Recorder() as rec:
        call = linear_call(ran)
    asked = []

    def gate(site, k, hit):
        asked.append(hit)
        return 1 if not hit else None

    rec.configure(gate=gate)
    call.run(*args(5000))
    call.run(*args(5000))
    rec.configure(gate=None)
    call.run(*args(5000))
    assert ran == ["multi_kernel_0_k1", "multi_kernel_0_k2", "multi_kernel_0_k2"]
    assert asked == [False, True]
    assert call._shape_cache == {key(5000): 2}
    assert [(e.picked, e.predicted, e.cache_hit, e.override) for e in rec.dispatch_events()] == [
        (1, 2, False, 1), (2, 2, True, None), (2, 2, True, None)]


def test_a_gate_returning_none_changes_nothing_and_a_ui_callback_sees_each_event():
    ran: list[str] = []
    seen: list[int] = []
    with Recorder() as rec:
        call = linear_call(ran)
    rec.configure(gate=lambda site, k, hit: None, on_event=seen.append)
    for b in (100, 100, 5000):
        call.run(*args(b))
    assert ran == ["multi_kernel_0_k0", "multi_kernel_0_k0", "multi_kernel_0_k2"]
    assert seen == [0, 1, 2]
    assert all(e.override is None and e.picked == e.predicted for e in rec.dispatch_events())


def test_hits_recorded_before_and_after_stepping_are_the_same_events():
    """The fast hit path and the stepping path must record the same facts."""
    ran: list[str] = []
    with Recorder() as rec:
        call = linear_call(ran)
    call.run(*args(700))
    call.run(*args(700))
    rec.configure(on_event=lambda i: None)
    call.run(*args(700))
    rec.configure()
    call.run(*args(700))
    events = rec.dispatch_events()
    assert {(e.key, e.picked, e.predicted, e.cache_hit, e.override) for e in events[1:]} == {(key(700), 1, 1, True, None)}
    assert ran == ["multi_kernel_0_k1"] * 4


# ---------------------------------------------------------------- installation


def test_instances_made_after_leaving_the_recorder_are_not_watched():
    ran: list[str] = []
    with Recorder() as rec:
        watched = linear_call(ran)
    unwatched = linear_call(ran, "multi_kernel_9")
    unwatched.run(*args(100))
    watched.run(*args(100))
    assert ran == ["multi_kernel_9_k0", "multi_kernel_0_k0"]
    assert [s.name for s in rec.sites] == ["multi_kernel_0"]
    assert [e.site for e in rec.dispatch_events()] == ["multi_kernel_0"]
    assert "_get_cached_shape_choice" not in vars(unwatched)


def test_a_block_that_raises_leaves_no_recorder_active():
    ran: list[str] = []
    with pytest.raises(RuntimeError, match="boom"), Recorder() as rec:
        raise RuntimeError("boom")
    linear_call(ran)
    assert rec.sites == []


def test_overlapping_recorders_on_two_threads_each_see_their_own_instances():
    """A paused debugger run holds one recorder open on its thread while another pipeline
    compiles on this one: leaving either must not unhook the other."""
    import threading

    ran: list[str] = []
    entered, release = threading.Event(), threading.Event()
    other = Recorder()

    def paused_run() -> None:
        with other:
            entered.set()
            release.wait(5)

    t = threading.Thread(target=paused_run)
    t.start()
    entered.wait(5)
    with Recorder() as mine:
        release.set()
        t.join(5)  # the other recorder leaves while mine is active
        linear_call(ran, "multi_kernel_7")
    assert [s.name for s in mine.sites] == ["multi_kernel_7"]
    assert other.sites == []


# ---------------------------------------------------------------- Inductor's cache, not a copy


def test_a_cleared_or_changed_shape_cache_is_recorded_as_inductor_holds_it():
    """The recorder answers no hit from a memo of its own: what ran, what was recorded
    and what Inductor's cache holds stay one thing when the cache changes under it."""
    ran: list[str] = []
    with Recorder() as rec:
        call = linear_call(ran)
    call.run(*args(100))  # miss: v0
    call.run(*args(100))  # hit
    call._shape_cache.clear()
    call.run(*args(100))  # Inductor decides afresh
    call._shape_cache[key(100)] = 2
    call.run(*args(100))  # a hit on what the cache now says
    call._shape_cache = {}  # a new cache object
    call.run(*args(100))
    events = rec.dispatch_events()
    assert ran == ["multi_kernel_0_k0", "multi_kernel_0_k0", "multi_kernel_0_k0", "multi_kernel_0_k2", "multi_kernel_0_k0"]
    assert [(e.cache_hit, e.picked) for e in events] == [(False, 0), (True, 0), (False, 0), (True, 2), (False, 0)]
    assert call._shape_cache == {key(100): 0}


def test_a_miss_makes_no_prediction_in_the_run(monkeypatch):
    """kinspect's model of the pick is made when the events are read, once per key."""
    from kinspect.inductor.hooks import recorder

    made = []
    real = recorder.decide
    monkeypatch.setattr(recorder, "decide", lambda keys, key: made.append(key) or real(keys, key))
    ran: list[str] = []
    with Recorder() as rec:
        call = linear_call(ran)
    sizes = [100, 3000, 100, 7, 3000]
    for b in sizes:
        call.run(*args(b))
    assert made == []
    events = rec.dispatch_events()
    assert [e.predicted for e in events] == [e.picked for e in events] == [nearest(b) for b in sizes]
    assert sorted(made) == sorted({key(b) for b in sizes})
    rec.dispatch_events()
    assert len(made) == 3


def test_with_the_log_no_dispatch_is_predicted_as_it_runs_and_the_reader_predicts(monkeypatch, tmp_path):
    """Under `kinspect run` no key is foreseen: the log writes each event without
    kinspect's prediction (~20 us a key) and the reader makes it, once per key."""
    from kinspect.core.session.format.log import LiveLog
    from kinspect.core.session.model import Environment, Session
    from kinspect.inductor.hooks import recorder

    made = []
    real = recorder.decide
    monkeypatch.setattr(recorder, "decide", lambda keys, key: made.append(key) or real(keys, key))
    log = LiveLog(tmp_path / "r.jsonl", Session(Environment(created="test")))
    with Recorder() as rec:
        rec.configure(log=log)
        call = linear_call([])
    for b in (3000, 3000, 7):
        call.run(*args(b))
    assert made == []
    log.close()
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert lines[2:] == ['{"type":"key","id":0,"key":"((3000, 1024), (3000, 4096))"}',
                         f'["d",0,0,2,false,null,null,{rec._ts[0]}]',  # no wrapper: no call site
                         f'["d",0,0,2,true,null,null,{rec._ts[1]}]',
                         '{"type":"key","id":1,"key":"((7, 1024), (7, 4096))"}',
                         f'["d",0,1,0,false,null,null,{rec._ts[2]}]',
                         '{"type":"end"}']


# ---------------------------------------------------------------- unrecorded (kinspect compare's whole-model timing)


def test_unrecorded_runs_inductors_cached_pick_and_records_nothing():
    ran: list[str] = []
    with Recorder() as rec:
        call = linear_call(ran)
    call.run(*args(1000))  # the miss that caches Inductor's pick (v1)
    with rec.unrecorded():
        for _ in range(5):
            call.run(*args(1000))
    assert ran == ["multi_kernel_0_k1"] * 6 and len(rec) == 1
    call.run(*args(1000))
    assert [(e.picked, e.cache_hit) for e in rec.dispatch_events()] == [(1, False), (1, True)]  # recording again


def test_unrecorded_with_a_forced_variant_runs_it_at_that_key_only_and_leaves_inductors_cache():
    ran: list[str] = []
    with Recorder() as rec:
        call = linear_call(ran)
        other = linear_call(ran, "multi_kernel_1")
    for c in (call, other):
        c.run(*args(1000))
        c.run(*args(100))
    ran.clear()
    with rec.unrecorded({"multi_kernel_0": (key(1000), 2)}):  # the oracle: v2 is fastest at B=1000
        call.run(*args(1000))
        call.run(*args(100))  # another key: Inductor's pick
        other.run(*args(1000))  # another site: Inductor's pick
    assert ran == ["multi_kernel_0_k2", "multi_kernel_0_k0", "multi_kernel_1_k1"]
    assert call._shape_cache == {key(1000): 1, key(100): 0} and len(rec) == 4
    ran.clear()
    call.run(*args(1000))
    assert ran == ["multi_kernel_0_k1"] and rec.dispatch_events()[-1].picked == 1
