"""`kinspect run --measure`'s bookkeeping on the CPU: the arguments of each site's first
call of each key are noted (shapes, strides, dtypes; no data), and after the program every
variant is launched at each key on new tensors of that description, never on the
program's. The GPU timing itself is stood in (its own tests: tests/gpu)."""

from __future__ import annotations

import pytest
from standins import StandIn

from kinspect.core.session.model import Environment, Session
from kinspect.inductor.timing import measurements
from kinspect.inductor.timing.measure import Timing
from kinspect.inductor.timing.program_measure import KeySnapshots
from kinspect.inductor.hooks.recorder import Recorder

torch = pytest.importorskip("torch")
Call = pytest.importorskip("torch._inductor.codegen.multi_kernel").SizeHintMultiKernelCall


class Launched(StandIn):
    """Logs the tensors it was launched on."""

    def __init__(self, name, seen):
        super().__init__(name)
        self.seen = seen

    def run(self, *args, **kwargs):
        self.seen.append((self.inductor_meta["kernel_name"], args))


def test_each_key_is_timed_on_new_tensors_shaped_as_its_first_call(monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE", "1")
    seen: list = []
    snapshots = KeySnapshots()
    with Recorder(on_site=snapshots.watch) as rec:
        call = Call("multi_kernel_0", {((h, 8), (h, 4)): Launched(f"k{i}", seen) for i, h in enumerate((64, 4096))},
                    {0: [slice(0, 3)], 1: [slice(0, 3)]})
    x = torch.ones(100, 16)[:, ::2]  # strided: (100, 8) with strides (16, 2)
    out = torch.zeros(100, 4, dtype=torch.bfloat16)
    for _ in range(3):
        call.run(x, out, 7)
    call.run(torch.ones(5000, 8), torch.zeros(5000, 4, dtype=torch.bfloat16), 9)
    assert len(snapshots.calls) == 2  # one per key: hits add nothing
    seen.clear()

    def stand_in_timing(launcher, variants, overheads, l2_flush=False, progress=None, cancel=None):
        for v in variants:
            launcher.launch(v)
        return {v: Timing(10.0 + v, 9.0, 11.0, 25) for v in variants}

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(measurements, "time_variants", stand_in_timing)
    monkeypatch.setattr(measurements, "cupti_times", lambda launcher, variants: {})
    monkeypatch.setattr(measurements, "measure_peaks", lambda: {"tflops_bf16": 1.0})
    monkeypatch.setattr(measurements, "measure_overheads", lambda: {})
    said: list[str] = []
    made = snapshots.measure(Session(Environment(created="test")), rec.sites, said.append, None)
    assert [(m.key[0][0], m.variant, m.method, m.median_us) for m in made] == [
        (100, 0, "cuda_events", 10.0), (100, 1, "cuda_events", 11.0),
        (5000, 0, "cuda_events", 10.0), (5000, 1, "cuda_events", 11.0)]
    first = [args for name, args in seen[:2]]
    for a in first:
        assert a[0] is not x and a[0].shape == (100, 8) and a[0].stride() == (16, 2) and a[0].dtype == torch.float32
        assert a[1] is not out and a[1].dtype == torch.bfloat16 and a[2] == 7
    assert bool((x == 1).all()) and bool((out == 0).all())  # the program's tensors untouched
    assert "key 1 of 2" in said and any(s.startswith("measuring multi_kernel_0 at ") for s in said), said


ILLEGAL = "CUDA error: an illegal memory access was encountered"


def _two_keys(monkeypatch):
    """A site called at two keys, and measuring stood in up to the GPU."""
    monkeypatch.setenv("TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE", "1")
    snapshots = KeySnapshots()
    with Recorder(on_site=snapshots.watch) as rec:
        call = Call("multi_kernel_0", {((h, 8), (h, 4)): Launched(f"k{i}", []) for i, h in enumerate((64, 4096))},
                    {0: [slice(0, 2)], 1: [slice(0, 2)]})
    call.run(torch.ones(100, 8), torch.zeros(100, 4))
    call.run(torch.ones(5000, 8), torch.zeros(5000, 4))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(measurements, "cupti_times", lambda launcher, variants: {})
    monkeypatch.setattr(measurements, "measure_peaks", lambda: {"tflops_bf16": 1.0})
    monkeypatch.setattr(measurements, "measure_overheads", lambda: {})
    return snapshots, rec


def test_after_the_programs_cuda_fault_nothing_is_timed_and_one_line_says_why(monkeypatch):
    """An illegal memory access leaves the process's CUDA context failing every call: the
    H200's Llama under --compile-layers-once died so, and measuring then raised the same
    error and lost the session. Now nothing is launched and the line says why."""
    snapshots, rec = _two_keys(monkeypatch)

    error = getattr(torch, "AcceleratorError", RuntimeError)  # what torch 2.11 raises; older ones, RuntimeError

    def broken():
        raise error(ILLEGAL + "\nCUDA kernel errors might be asynchronously reported")

    def no_timing(*a, **k):
        raise AssertionError("timed on a broken context")

    monkeypatch.setattr(torch.cuda, "synchronize", broken)
    monkeypatch.setattr(measurements, "time_variants", no_timing)
    said: list[str] = []
    assert snapshots.measure(Session(Environment(created="test")), rec.sites, said.append, None) == []
    assert said == [f"--measure times nothing: a CUDA error in the program ({error.__name__}: {ILLEGAL}) left this "
                    "process's GPU context failing every later call; recorded without timings"]


def test_a_fault_while_measuring_keeps_the_keys_timed_before_it(monkeypatch):
    snapshots, rec = _two_keys(monkeypatch)
    timed = []

    def fault_on_second(launcher, variants, overheads, l2_flush=False, progress=None, cancel=None):
        timed.append(variants)
        if len(timed) == 2:
            raise RuntimeError(ILLEGAL)
        return {v: Timing(10.0 + v, 9.0, 11.0, 25) for v in variants}

    monkeypatch.setattr(measurements, "time_variants", fault_on_second)
    said: list[str] = []
    made = snapshots.measure(Session(Environment(created="test")), rec.sites, said.append, None)
    assert [(m.key[0][0], m.variant) for m in made] == [(100, 0), (100, 1)]
    assert said[-1] == (f"measuring stopped: RuntimeError: {ILLEGAL}, after which every CUDA call in this process "
                        "fails; the 2 measurements made before it are kept")


def test_an_error_that_is_not_a_fault_still_raises(monkeypatch):
    """Only a sticky CUDA fault is caught here; any other error is the recording's to report
    (ProgramRecording.finish saves the session with what was measured)."""
    snapshots, rec = _two_keys(monkeypatch)

    def broken_timer(*a, **k):
        raise ValueError("a bug in timing")

    monkeypatch.setattr(measurements, "time_variants", broken_timer)
    with pytest.raises(ValueError, match="a bug in timing"):
        snapshots.measure(Session(Environment(created="test")), rec.sites, lambda text: None, None)
