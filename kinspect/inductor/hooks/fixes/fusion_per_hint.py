"""`--fusion-per-hint`: each hint's epilogue-fusion benchmark among that hint's own choices.

Stock Inductor (2.11 to 2.15) keeps one list of compiled fused choices across its loop over
`multi_kernel_hints` in `Scheduler.speedup_by_fusion`, so at each later hint the earlier
hints' choices compete too. Each was compiled and benchmarked at its own hint's sizes, a
smaller problem, so it usually wins: a larger hint's variant runs a config tuned for a
smaller one (docs/upstream/fusion-per-hint.md; the patch there moves the list into the loop).

kinspect cannot move a local variable, so it makes the comparison come out as the patch's
does. While `speedup_by_fusion` runs in this mode, the hint its loop is at is read where the
loop asks for that hint's timings (`MultiTemplateBuffer.choice_timings(hint)`), and the
choice being benchmarked where it is swapped in (`swap_as_triton_caller`). A choice of
another hint is then not benchmarked: it gets `FOREIGN`, slower than any time a benchmark
returns but not infinite, so it is picked only where none of the hint's own choices could be
(each failed to compile, or spilled registers: stock Inductor's fallback, where the patch
would have none). After the call, the hint's timings keep only its own choices where any
remain, as the patch leaves them. The kernels and the runtime choice are Inductor's own.

The fused benchmark itself launches a grid of the wrong size: a template kernel's benchmark
harness sizes its tensors and size arguments at the kernel's hint, but its grid
(`TritonTemplateKernel.kernel_benchmark_extra_args`) at the graph's example sizes, so where
the grid grows with a dynamic size (a GEMM's rows) every hint's fused choices are timed on the
example's share of tiles: one small problem at every hint (docs/upstream/fusion-per-hint.md,
"The fused time of another problem"). In this mode that grid is evaluated at the kernel's
hint, through the same `optimization_hints_with_override` its tensors are sized by.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
from collections.abc import Iterator
from typing import Any

from kinspect.inductor.hooks.fixes.modes import Mode

FOREIGN = sys.float_info.max
"""The time given to another hint's choice in a hint's fusion benchmark."""

_loop = threading.local()


class _Loop:
    """One `speedup_by_fusion` call's state: its scheduler, where its hint loop is, and what
    was kept from being benchmarked there."""

    def __init__(self, scheduler: Any) -> None:
        self.scheduler = scheduler
        self.multi: Any = None
        self.hint: int | None = None
        self.choice: Any = None
        self.skipped: list[tuple[Any, int, Any]] = []
        """(multi-template, hint, choice) given `FOREIGN` there."""

    def foreign(self, scheduler: Any) -> bool:
        """Whether the choice about to be benchmarked for this scheduler belongs to another
        hint than the one the loop is at."""
        own = getattr(self.choice, "hint_override", None)
        return (scheduler is self.scheduler and self.hint is not None and own is not None
                and own != self.hint)

    def tidy(self) -> None:
        """Each hint's timings without the choices it did not benchmark, where one of its own
        remains: what `_choice_timings[hint]` holds with the upstream patch."""
        for multi, hint, choice in self.skipped:
            timings = getattr(multi, "_choice_timings", {}).get(hint)
            if timings and any(getattr(c, "hint_override", None) == hint for c in timings):
                timings.pop(choice, None)


def _current() -> _Loop | None:
    return getattr(_loop, "state", None) if MODE.active else None


# ---------------------------------------------------------------- the patches

def _speedup_by_fusion(orig: Any) -> Any:
    @functools.wraps(orig)
    def wrapped(scheduler: Any, *a: Any, **k: Any) -> Any:
        if not MODE.active:
            return orig(scheduler, *a, **k)
        outer, state = _current(), _Loop(scheduler)
        _loop.state = state
        try:
            return orig(scheduler, *a, **k)
        finally:
            _loop.state = outer
            state.tidy()
    return wrapped


def _choice_timings(orig: Any) -> Any:
    @functools.wraps(orig)
    def wrapped(multi: Any, hint_override: int | None = None) -> Any:
        state = _current()
        if state is not None:
            state.multi, state.hint = multi, hint_override
        return orig(multi, hint_override)
    return wrapped


def _swap(orig: Any) -> Any:
    @functools.wraps(orig)
    @contextlib.contextmanager
    def wrapped(multi: Any, caller: Any) -> Iterator[None]:
        state = _current()
        if state is None or multi is not state.multi:
            with orig(multi, caller):
                yield
            return
        previous, state.choice = state.choice, caller
        try:
            with orig(multi, caller):
                yield
        finally:
            state.choice = previous
    return wrapped


def _benchmark(orig: Any) -> Any:
    @functools.wraps(orig)
    def wrapped(scheduler: Any, module: Any, *a: Any, **k: Any) -> Any:
        state = _current()
        if state is not None and state.foreign(scheduler):
            state.skipped.append((state.multi, state.hint, state.choice))
            return FOREIGN, ""
        return orig(scheduler, module, *a, **k)
    return wrapped


def _benchmark_grid(orig: Any) -> Any:
    @functools.wraps(orig)
    def wrapped(kernel: Any) -> Any:
        hint = getattr(kernel, "hint_override", None)
        if not MODE.active or hint is None:
            return orig(kernel)
        from torch._inductor.virtualized import V

        sizevars = V.graph.sizevars
        if not hasattr(sizevars, "optimization_hints_with_override"):
            return orig(kernel)
        at_hint = functools.partial(_hints_at, sizevars, hint)
        names = [n for n in _EXAMPLE_HINTS if hasattr(sizevars, n)]
        for name in names:  # on this allocator alone, for this call
            setattr(sizevars, name, at_hint)
        try:
            return orig(kernel)
        finally:
            for name in names:
                delattr(sizevars, name)
    return wrapped


_EXAMPLE_HINTS = ("optimization_hints", "size_hints")
"""What the grid is sized by: `optimization_hints` on torch 2.13, `size_hints` on 2.11."""


def _hints_at(sizevars: Any, hint: int, exprs: Any, *a: Any, **k: Any) -> tuple[int, ...]:
    """The sizes at the kernel's hint, as its tensors and size arguments are sized."""
    return tuple(sizevars.optimization_hints_with_override(exprs, hint_override=hint))


def _install() -> None:
    """The methods patched; each acts only in this mode: inside a `speedup_by_fusion` call, on
    that call's scheduler and multi-template, or on a template kernel made for a hint."""
    from torch._inductor import ir
    from torch._inductor import select_algorithm as sa
    from torch._inductor.scheduler import Scheduler

    Scheduler.speedup_by_fusion = _speedup_by_fusion(Scheduler.speedup_by_fusion)
    Scheduler.benchmark_codegened_module = _benchmark(Scheduler.benchmark_codegened_module)
    mtb = ir.MultiTemplateBuffer
    mtb.choice_timings = _choice_timings(mtb.choice_timings)
    mtb.swap_as_triton_caller = _swap(mtb.swap_as_triton_caller)
    ttk = getattr(sa, "TritonTemplateKernel", None)
    if hasattr(ttk, "kernel_benchmark_extra_args"):  # where a torch lacks it, its harness has no grid of its own
        ttk.kernel_benchmark_extra_args = _benchmark_grid(ttk.kernel_benchmark_extra_args)


def _missing() -> list[str]:
    from torch._inductor import ir
    from torch._inductor.scheduler import Scheduler

    needed = [(Scheduler, "speedup_by_fusion"), (Scheduler, "benchmark_codegened_module"),
              (getattr(ir, "MultiTemplateBuffer", None), "choice_timings"),
              (getattr(ir, "MultiTemplateBuffer", None), "swap_as_triton_caller")]
    return [f"{getattr(o, '__name__', 'MultiTemplateBuffer')}.{n}" for o, n in needed if not hasattr(o, n)]


MODE = Mode("--fusion-per-hint", _install, _missing)
fusion_per_hint = MODE.on
"""`with fusion_per_hint():` every graph scheduled inside picks each hint's fused choice among
that hint's own."""
