"""GEMM template configs precompiled in this process while a recording autotunes in a
subprocess, so that the subprocess finds every kernel already built.

Inductor compiles a template's configs before it times them: in its compile-worker pool
once that pool is up, else in threads of its own process. With `autotune_in_subproc` (what
`--fit-benchmark-tensors` turns on) the timing happens in a child process, which loads each
config's kernel through Triton's cache. On the H200 (torch 2.11, Triton 3.6) the child
found there only the kernels compiled in Inductor's own process: every config the pool had
compiled, it compiled again, one at a time, before timing it (GPT-2, one compile each:
50 of 350 configs at 2 layers and 75 of 331 at 12 layers, 31 s and 60 s of the child's 36 s
and 65 s; `benchmarks/repeated_layers.py`). Each such kernel had a twin from the pool in the
same cache directory, with the same IR and metadata and another cache key (the evidence, and
the likely cause: docs/upstream/autotune-subprocess-recompiles.md). How many it redoes
depends on when the pool comes up, so the same model compiled twice took very different
times; precompiled here, the child compiled none again and GPT-2's template autotuning
took 8 s where it had taken 33-39 s.

While a recording autotunes in a subprocess, each template's configs are therefore
precompiled in threads of this process, as Inductor itself does before its pool is up. The
kernels, their timings and the choice among them are Inductor's; only where the configs are
compiled moves.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator
from typing import Any

_lock = threading.RLock()


@contextlib.contextmanager
def _without_pool(async_compile: type) -> Iterator[None]:
    """Inductor asks `AsyncCompile.use_process_pool()` per config while submitting them."""
    with _lock:
        original = async_compile.__dict__["use_process_pool"]
        async_compile.use_process_pool = classmethod(lambda cls: False)
        try:
            yield
        finally:
            async_compile.use_process_pool = original


def _in_process(orig: Callable[..., Any], wanted: Callable[[], bool], async_compile: type) -> Callable[..., Any]:
    @functools.wraps(orig)
    def wrapped(*a: Any, **k: Any) -> Any:
        if not wanted():
            return orig(*a, **k)
        with _without_pool(async_compile):
            return orig(*a, **k)
    return wrapped


def install(recording: Callable[[], bool]) -> bool:
    """Precompile templates in this process whenever `recording()` and Inductor autotunes
    in a subprocess; False where this torch lacks the hooks (its precompiles stay as they are)."""
    import torch._inductor.config as cfg
    from torch._inductor import async_compile, select_algorithm

    selector = getattr(select_algorithm, "AlgorithmSelectorCache", None)
    pool = getattr(async_compile, "AsyncCompile", None)
    if selector is None or pool is None or not hasattr(selector, "make_precompile_fn") \
            or "use_process_pool" not in pool.__dict__:
        return False

    def wanted() -> bool:
        return bool(getattr(cfg, "autotune_in_subproc", False)) and recording()

    selector.make_precompile_fn = _in_process(selector.make_precompile_fn, wanted, pool)
    return True
