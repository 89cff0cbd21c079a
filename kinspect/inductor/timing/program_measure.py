"""Timing every variant at each key a program ran, without touching what it computes.

Measuring inside the program's run would put kinspect's launches between its own and
hold its tensors, so the recording notes at each site's first call of a key (a cache
miss: Inductor's `_select_kernel_by_shape`, which a hit never reaches) what that call's
arguments were: each tensor's shape, strides, dtype and device, and the other arguments
as they are. After the program has finished, each variant is launched on new tensors
made to that description (random floats, zeroed integers), timed as `kinspect record
--measure` times it (CUDA-graph replays and CUPTI, `kinspect.inductor.timing.measurements`), and
the new tensors are dropped: the program's outputs are never read or written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kinspect.core.errors import error_line
from kinspect.core.printing import Passing
from kinspect.core.dispatch.shapes import Key
from kinspect.core.session.format.log import LiveLog
from kinspect.core.session.runtime import Measurement
from kinspect.core.session.model import Session
from kinspect.inductor.timing.measurements import measure_call, with_peaks
from kinspect.inductor.hooks.benchmark_tensors import sticky
from kinspect.inductor.hooks.recorder import LiveSite


@dataclass(frozen=True)
class TensorShape:
    """A tensor argument as the call passed it, without its data."""

    shape: tuple[int, ...]
    stride: tuple[int, ...]
    dtype: Any
    device: Any

    def build(self) -> Any:
        import torch

        t = torch.empty_strided(self.shape, self.stride, dtype=self.dtype, device=self.device)
        if t.is_floating_point() or t.is_complex():
            t.normal_()
        else:
            t.zero_()  # integer inputs are indices as often as not: zero is in bounds
        return t


class KeySnapshots:
    """The arguments of each site's first call of each key; then the measuring."""

    def __init__(self) -> None:
        self.calls: dict[tuple[int, Key], tuple[list[Any], dict[str, Any]]] = {}
        self.done: list[Measurement] = []
        """What `measure` has made so far (kept when it is interrupted)."""

    def watch(self, ls: LiveSite) -> None:
        """Note each miss's arguments: Inductor calls `_select_kernel_by_shape` only on a
        key its shape cache lacks, so a hit costs nothing more."""
        import torch

        call = ls.call
        select = call._select_kernel_by_shape
        calls = self.calls

        def _select_kernel_by_shape(*args: Any, **kwargs: Any) -> None:
            key = call._get_shape_cache_key(*args, **kwargs)
            if (ls.index, key) not in calls:
                calls[(ls.index, key)] = (
                    [TensorShape(tuple(a.shape), tuple(a.stride()), a.dtype, a.device)
                     if isinstance(a, torch.Tensor) else a for a in args],
                    dict(kwargs),
                )
            select(*args, **kwargs)

        call._select_kernel_by_shape = _select_kernel_by_shape

    def measure(self, session: Session, sites: Sequence[LiveSite], say: Callable[[str], None],
                log: LiveLog | None) -> list[Measurement]:
        """Time every variant at each noted key, in the order the program met them; each
        measurement goes to the log as it is made. Without CUDA, or after a CUDA fault of
        the program's (or of a variant's), says so and keeps what was timed before it."""
        import torch

        if not self.calls:
            return []
        if not torch.cuda.is_available():
            say("--measure needs a CUDA GPU, and none is available here: recorded without timings")
            return []
        fault = context_fault()
        if fault is not None:
            say(f"--measure times nothing: a CUDA error in the program ({fault}) left this process's GPU context "
                "failing every later call; recorded without timings")
            return []
        try:
            self._measure_all(session, sites, say, log)
        except Exception as e:
            if not sticky(str(e)):
                raise
            say(f"measuring stopped: {error_line(e)}, after which every CUDA call in this process fails; "
                f"the {len(self.done)} measurement{'s' if len(self.done) != 1 else ''} made before it are kept")
        return self.done

    def _measure_all(self, session: Session, sites: Sequence[LiveSite], say: Callable[[str], None],
                     log: LiveLog | None) -> None:
        session.environment = with_peaks(session.environment, say)
        by_index = {ls.index: ls for ls in sites}
        by_name = {s.name: s for s in session.sites}
        seen: set[tuple[str, Key]] = set()
        keys_of = Counter(by_index[index].name for index, _ in self.calls)
        for n, ((index, key), (args, kwargs)) in enumerate(self.calls.items(), 1):
            ls = by_index[index]
            if (ls.name, key) in seen:  # a wrapper loaded twice: one site
                continue
            if not any(name == ls.name for name, _ in seen):
                say(f"measuring {ls.name}: every variant at its {keys_of[ls.name]} key"
                    f"{'s' if keys_of[ls.name] > 1 else ''} (key {n} of {len(self.calls)} in all)")
            seen.add((ls.name, key))
            say(Passing(f"key {n} of {len(self.calls)}"))
            made = self._measure_key(ls, by_name.get(ls.name), key, args, kwargs, session, say)
            self.done += made
            if log is not None:
                for m in made:
                    log.measurement(m)

    @staticmethod
    def _measure_key(ls: LiveSite, site: Any, key: Key, args: list[Any], kwargs: dict[str, Any],
                     session: Session, say: Callable[[str], None]) -> list[Measurement]:
        import torch

        try:
            built = [a.build() if isinstance(a, TensorShape) else a for a in args]
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            return [Measurement(ls.name, key, v, "cuda_events", None, error="CUDA out of memory")
                    for v in range(len(ls.keys))]
        try:
            return measure_call(ls.name, ls.call, built, kwargs, site=site,
                                overheads=session.environment.peaks, say=say)
        finally:
            del built
            torch.cuda.empty_cache()


def context_fault() -> str | None:
    """The sticky CUDA error this process's context holds, in one line, or None: after an
    illegal memory access every CUDA call fails, so nothing can be timed."""
    import torch

    try:
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001 - only a sticky fault is an answer; anything else is left to measuring
        return error_line(e) if sticky(str(e)) else None
    return None
