"""Every variant of a site timed at one key, as the session's `Measurement`s.

A kernel's latency depends on the tensors it gets (strides, alignment, the values it
reads), so kinspect times variants on the arguments of a real call: the model runs once
with each site's `call.run` wrapped to keep its arguments at each key (`grabbed_arguments`), and
every variant is launched on those (`kinspect.inductor.timing.measure` does the timing). A caller
that holds a call's arguments some other way (tensors rebuilt from a program's recorded
shapes) calls `measure_call` itself; nothing here needs the pipeline.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from kinspect.core.dispatch.shapes import Key, format_key
from kinspect.core.printing import Passing
from kinspect.core.errors import KinspectError
from kinspect.core.dispatch.shapes import sizes_text
from kinspect.core.quality.model_calls import call_sizes
from kinspect.core.quality.roofline import gemm_flops, min_bytes
from kinspect.core.session.model import Environment, Session, Site
from kinspect.core.session.runtime import Measurement
from kinspect.inductor.timing.measure import (
    Timing, VariantLauncher, cupti_times, measure_overheads, measure_peaks, time_variants,
)
from kinspect.inductor.hooks.recorder import LiveSite

Say = Callable[[str], None]


def _quiet(text: str) -> None:
    """Progress nobody asked to hear."""


def with_peaks(environment: Environment, say: Say = _quiet) -> Environment:
    """The environment with the GPU's peaks and timing overheads, measured once per
    session: rates are read against the peaks, and `time_variants` subtracts the overheads."""
    if "tflops_bf16" in environment.peaks:
        return environment
    say("measuring the GPU's peaks (bf16 matmul, device copy) and timing overheads")
    return replace(environment, peaks=measure_peaks() | measure_overheads())


@contextlib.contextmanager
def grabbed_arguments(sites: Sequence[LiveSite]) -> Iterator[dict[int, dict[Key, tuple[tuple[Any, ...], dict[str, Any]]]]]:
    """Inside, each site's `call.run` runs as before and keeps the arguments of its last
    call at each key it sees, by site index and key: a multi-kernel several layers share
    is timed at every key its calls hand it (Llama's o projection passes a 4-D input where
    q, k and v pass 3-D ones, so its key differs), not only at the last layer's."""
    grabbed: dict[int, dict[Key, tuple[tuple[Any, ...], dict[str, Any]]]] = {}
    originals = {ls.index: ls.call.run for ls in sites}
    for ls in sites:
        def grab(*args: Any, _i: int = ls.index, _call: Any = ls.call, **kwargs: Any) -> None:
            grabbed.setdefault(_i, {})[_call._get_shape_cache_key(*args)] = (args, kwargs)
            originals[_i](*args, **kwargs)

        ls.call.run = grab
    try:
        yield grabbed
    finally:
        for ls in sites:
            ls.call.run = originals[ls.index]


def measure_call(name: str, call: Any, args: Sequence[Any], kwargs: Mapping[str, Any], *,
                 site: Site | None = None, overheads: Mapping[str, float] | None = None,
                 cupti: bool = True, l2_flush: bool = False, say: Say = _quiet,
                 cancel: threading.Event | None = None, at: str | None = None) -> list[Measurement]:
    """Every variant of `call` (a `SizeHintMultiKernelCall`) timed at the key of these
    arguments, by CUDA events and, with `cupti`, by CUPTI; a variant that cannot run is a
    measurement carrying its error. `site` (the session's) gives the FLOP rate;
    `overheads` are the environment's peaks (`with_peaks`), which the timing subtracts;
    `at` names the sizes in the progress line (else the key does)."""
    import torch

    key: Key = call._get_shape_cache_key(*args)
    say(Passing(f"measuring {name} at {at or format_key(key)}"))
    variants = list(range(len(call.kernels)))
    itemsize = next((a.element_size() for a in args if isinstance(a, torch.Tensor)), 2)
    flops = gemm_flops(site, key) if site is not None else None
    nbytes = min_bytes(key, itemsize)
    try:
        launcher = VariantLauncher(call, args, dict(kwargs))
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
        return [Measurement(name, key, v, "cuda_events", None, error="CUDA out of memory") for v in variants]
    try:
        timed = time_variants(launcher, variants, dict(overheads or {}), l2_flush=l2_flush, progress=say,
                              cancel=cancel)
        profiled = cupti_times(launcher, [v for v in variants if isinstance(timed.get(v), Timing)]) if cupti else {}
    finally:
        launcher.release()
    out = []
    for v in variants:
        t = timed.get(v)
        if not isinstance(t, Timing):
            out.append(Measurement(name, key, v, "cuda_events", None, error=str(t)))
            continue
        for method, tm in (("cuda_events", t), ("cupti", profiled.get(v))):
            if tm is None:
                continue
            sec = tm.median_us * 1e-6
            out.append(Measurement(
                name, key, v, method, round(tm.median_us, 3), round(tm.p20_us, 3),
                round(tm.p80_us, 3), tm.samples, l2_flush and method == "cuda_events",
                tflops=None if flops is None else round(flops / sec / 1e12, 3),
                gbps=round(nbytes / sec / 1e9, 2),
            ))
    return out


def measure_sites(session: Session, targets: Sequence[LiveSite], run: Callable[[], None], *,
                  cupti: bool = True, l2_flush: bool = False, say: Say = _quiet,
                  cancel: threading.Event | None = None) -> list[Measurement]:
    """`run` the model once (it raises if the run fails) with the targets' arguments
    grabbed, then time every variant of each target that ran, at each key it ran at. The
    session is read (its sites, its environment's overheads), not changed."""
    import torch

    with grabbed_arguments(targets) as grabbed:
        run()
    overheads = dict(session.environment.peaks)
    sites = {s.name: s for s in session.sites}
    ran = [(sites[ls.name], key) for ls in targets if ls.name in sites for key in grabbed.get(ls.index, {})]
    sizes = call_sizes(session, ran)  # one run: every key it dispatched was at these sizes
    out: list[Measurement] = []
    for ls in targets:
        site = sites.get(ls.name)
        for key, (args, kwargs) in grabbed.get(ls.index, {}).items():
            at = None
            if sizes and site is not None:
                at = sizes_text(sizes) + ("" if site.lines_up(key) else f" (its key {format_key(key)})")
            out += measure_call(ls.name, ls.call, args, kwargs, site=site, overheads=overheads, cupti=cupti,
                                l2_flush=l2_flush, say=say, cancel=cancel, at=at)
            torch.cuda.empty_cache()
    return out


def estimate_bytes(session: Session, build: Callable[[Mapping[str, int]], Sequence[Any]],
                   sizes: Mapping[str, int]) -> int | None:
    """GPU memory a measurement at these sizes needs: the inputs `build` makes (on the
    meta device, so nothing is allocated), each site's tensors, and the snapshot that
    measuring takes of them. None when the builder cannot run on meta."""
    import torch

    try:
        with torch.device("meta"):
            built = build(sizes)
    except Exception:  # no estimate; an out-of-memory is still caught when it runs
        return None
    tensors = [t for t in built if isinstance(t, torch.Tensor)]
    itemsize = tensors[0].element_size() if tensors else 4
    total = sum(t.numel() * t.element_size() for t in tensors)
    env = session.resolve(sizes) if session.symbols else {}
    for site in session.sites:
        try:
            key = site.runtime_key(env)
        except KinspectError:
            continue
        total += 2 * sum(math.prod(shape) for shape in key) * itemsize
    return total


def check_memory(session: Session, build: Callable[[Mapping[str, int]], Sequence[Any]],
                 sizes: Mapping[str, int]) -> None:
    """Refuse, in one line, sizes that would not fit in the GPU's free memory (before
    anything is allocated, so a sweep skips that size and goes on)."""
    import torch

    need = estimate_bytes(session, build, sizes)
    if need is None:
        return
    free, _ = torch.cuda.mem_get_info()
    if need > 0.9 * free:
        raise KinspectError(
            f"{sizes_text(sizes)} needs about {need / 2**30:.1f} GiB of GPU memory and "
            f"{free / 2**30:.1f} GiB is free; try smaller sizes"
        )
