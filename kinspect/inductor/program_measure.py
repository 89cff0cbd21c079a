"""Timing every variant at each key a program ran, without touching what it computes.

Measuring inside the program's run would put kinspect's launches between its own and
hold its tensors, so the recording notes at each site's first call of a key (a cache
miss: Inductor's `_select_kernel_by_shape`, which a hit never reaches) what that call's
arguments were: each tensor's shape, strides, dtype and device, and the other arguments
as they are. After the program has finished, each variant is launched on new tensors
made to that description (random floats, zeroed integers), timed as `kinspect record
--measure` times it (CUDA-graph replays and CUPTI, `kinspect.inductor.measure`), and
the new tensors are dropped: the program's outputs are never read or written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kinspect.core.dispatch.shapes import Key, format_key
from kinspect.core.quality.roofline import gemm_flops, min_bytes
from kinspect.core.session.format.log import LiveLog
from kinspect.core.session.model import Measurement, Session
from kinspect.inductor.measure import (
    Timing,
    VariantLauncher,
    cupti_times,
    measure_overheads,
    measure_peaks,
    time_variants,
)
from kinspect.inductor.recorder import LiveSite


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
        measurement goes to the log as it is made. Without CUDA, says so and times none."""
        import torch

        if not self.calls:
            return []
        if not torch.cuda.is_available():
            say("--measure needs a CUDA GPU, and none is available here: recorded without timings")
            return []
        say("measuring the GPU's peaks (bf16 matmul, device copy) and timing overheads")
        peaks = measure_peaks() | measure_overheads()
        session.environment = replace(session.environment, peaks=peaks)
        by_index = {ls.index: ls for ls in sites}
        by_name = {s.name: s for s in session.sites}
        seen: set[tuple[str, Key]] = set()
        for n, ((index, key), (args, kwargs)) in enumerate(self.calls.items(), 1):
            ls = by_index[index]
            if (ls.name, key) in seen:  # a wrapper loaded twice: one site
                continue
            seen.add((ls.name, key))
            say(f"measuring {ls.name} at {format_key(key)} ({n}/{len(self.calls)})")
            made = self._measure_key(ls, by_name.get(ls.name), key, args, kwargs, dict(peaks), say)
            self.done += made
            if log is not None:
                for m in made:
                    log.measurement(m)
        return self.done

    @staticmethod
    def _measure_key(ls: LiveSite, site: Any, key: Key, args: list[Any], kwargs: dict[str, Any],
                     overheads: dict[str, float], say: Callable[[str], None]) -> list[Measurement]:
        import torch

        variants = list(range(len(ls.keys)))
        try:
            built = [a.build() if isinstance(a, TensorShape) else a for a in args]
            launcher = VariantLauncher(ls.call, built, kwargs)
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            return [Measurement(ls.name, key, v, "cuda_events", None, error="CUDA out of memory") for v in variants]
        try:
            timed = time_variants(launcher, variants, overheads, progress=say)
            profiled = cupti_times(launcher, [v for v in variants if isinstance(timed.get(v), Timing)])
        finally:
            launcher.release()
            del built
            torch.cuda.empty_cache()
        itemsize = next((a.dtype.itemsize for a in args if isinstance(a, TensorShape)), 2)
        return site_measurements(ls.name, key, variants, timed, profiled,
                                 gemm_flops(site, key) if site is not None else None, min_bytes(key, itemsize))


def site_measurements(site: str, key: Key, variants: Sequence[int], timed: dict[int, Timing | str],
                      profiled: dict[int, Timing], flops: float | None, nbytes: float,
                      l2_flush: bool = False) -> list[Measurement]:
    """Each variant's CUDA-event and CUPTI timing at a key as the session stores them
    (a variant that failed: its error)."""
    out = []
    for v in variants:
        t = timed.get(v)
        if not isinstance(t, Timing):
            out.append(Measurement(site, key, v, "cuda_events", None, error=str(t)))
            continue
        for method, tm in (("cuda_events", t), ("cupti", profiled.get(v))):
            if tm is None:
                continue
            sec = tm.median_us * 1e-6
            out.append(Measurement(
                site, key, v, method, round(tm.median_us, 3), round(tm.p20_us, 3),
                round(tm.p80_us, 3), tm.samples, l2_flush and method == "cuda_events",
                tflops=None if flops is None else round(flops / sec / 1e12, 3),
                gbps=round(nbytes / sec / 1e9, 2),
            ))
    return out
