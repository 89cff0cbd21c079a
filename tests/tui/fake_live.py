"""A live source for the debugger's tests: Inductor's own runtime class, on the CPU.

Each site of a synthetic session becomes a real `SizeHintMultiKernelCall`, built inside a
`Recorder` (construction is what the recorder hooks) with stand-in kernels that log which
of them ran, and is called through the real `run` on meta tensors of the site's runtime
key. The gate goes in exactly as `kinspect.inductor.recording.live_source.LiveSource` installs it,
so a test sees the model's thread block, step and run a forced kernel for real.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from standins import StandIn

from kinspect.core.errors import KinspectError
from kinspect.core.session.runtime import DispatchEvent, Measurement
from kinspect.core.session.model import Session, Site
from kinspect.core.dispatch.shapes import Key
from kinspect.inductor.hooks.recorder import Recorder

os.environ["TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE"] = "1"  # the class reads a disk cache keyed by real kernels

import torch  # noqa: E402
from torch._inductor.codegen.multi_kernel import SizeHintMultiKernelCall  # noqa: E402


@dataclass
class Step:
    step: int | None
    events: int
    error: str | None = None


class FakeLiveSource:
    """`workload` holds the user's sizes per step (`{"B": 64, "N": 64}`); each step calls
    every site once, in session order. `prepare` calls the model once at `examples` (the
    first step's sizes unless given), as LiveSource's compile does, and not the workload.
    `hold`, while set, keeps `prepare` compiling."""

    live = True

    def __init__(self, session: Session, workload: list[Mapping[str, int]],
                 examples: Mapping[str, int] | None = None) -> None:
        self._session = session
        self.workload = workload
        self.examples = dict(examples or workload[0])
        self.ran: list[str] = []
        """Every stand-in kernel that ran, by name (`multi_kernel_0_k2`)."""
        self.prepared = False
        self.hold = threading.Event()
        self.recompile: dict[int, str] = {}
        """Workload step -> what the model says before it, as LiveSource's pipeline says
        what a recompile (Dynamo specialising a size) is doing; `hold`, while set, keeps
        that step compiling."""
        self._progress: Callable[[str], None] = lambda what: None
        self.closed = False
        self.recorder = Recorder()
        with self.recorder:
            self.calls = [self._call(site) for site in session.sites]

    def _call(self, site: Site) -> SizeHintMultiKernelCall:
        n = len(site.runtime_tensors or site.tensors)
        kernels = {v.key: StandIn(f"{site.name}_k{v.index}", self.ran) for v in site.variants}
        return SizeHintMultiKernelCall(site.name, kernels, {v.index: [slice(0, n)] for v in site.variants})

    # ------------------------------------------------------------ SessionSource

    @property
    def session(self) -> Session:
        """Empty until compiled, as LiveSource's is."""
        return self._session if self.prepared else Session(environment=self._session.environment)

    @property
    def can_measure(self) -> bool:
        return self.prepared

    def banner(self) -> str:
        return ("live" if self.prepared else "compiling") + ": fake model on the CPU"

    def prepare(self, progress: Callable[[str], None], cancel: threading.Event) -> None:
        self._progress = progress  # LiveSource's pipeline keeps it for later compiles too
        progress("autotuning graph_0 at hint 256")
        while self.hold.is_set() and not cancel.is_set():
            cancel.wait(0.01)
        self.run_sizes(self.examples, step=None)
        self.prepared = True

    def measure(self, site: Site, key: Key, progress, cancel: threading.Event) -> list[Measurement]:
        raise KinspectError("the fake model measures nothing")

    def close(self) -> None:
        self.closed = True

    # ------------------------------------------------------------ running

    def run_sizes(self, sizes: Mapping[str, int], step: int | None) -> Step:
        env = self._session.resolve(sizes)
        before = len(self.recorder)
        self.recorder.set_step(step)
        for site, call in zip(self._session.sites, self.calls):
            call.run(*(torch.empty(shape, device="meta") for shape in site.runtime_key(env)))
        self._session.events = self.recorder.dispatch_events()
        return Step(step, len(self.recorder) - before)

    def run_workload(self, on_step: Callable[[Step], None] | None = None,
                     cancel: threading.Event | None = None) -> list[Step]:
        out = []
        for i, sizes in enumerate(self.workload):
            if cancel is not None and cancel.is_set():
                break
            if i in self.recompile:
                self._progress(self.recompile[i])
                while self.hold.is_set() and not (cancel is not None and cancel.is_set()):
                    time.sleep(0.01)
            r = self.run_sizes(sizes, step=i)
            out.append(r)
            if on_step is not None:
                on_step(r)
        return out

    def set_gate(self, gate: Callable[[DispatchEvent], int | None] | None) -> None:
        """As LiveSource.set_gate, through the same recorder method."""
        self.recorder.set_event_gate(gate)
