"""Inductor's caches while a recording compiles: on, in a directory of the recording's own.

A recording must see every compile Inductor makes (a graph loaded from the FX graph
cache is never lowered, so no hook sees its autotune tables, keys or symbols), and
nothing an earlier run left may leak in. `force_disable_caches` gives both, but by
handing each graph compile a fresh cache directory of its own: a GEMM layout tuned in
one graph is tuned again in the next (the backward graph, a recompile at a new size
range, each piece of a model that Dynamo splits at a graph break).

So a recording turns off the caches that skip lowering (FX graph, AOTAutograd, every
remote one), keeps those that only memoise a timing (the autotune cache, keyed by op,
input sizes, strides, dtype, hint and each choice's code; the fused-kernel benchmark
cache, keyed by the kernel's source), and points Inductor's and Triton's cache
directories at one fresh directory for the whole recording. Each distinct GEMM layout is
then benchmarked once per hint however many layers, graphs and recompiles share it, and
every template still has its autotune table (a hit returns the stored timings to the
same `choice_timings` the capture reads). What a hit does skip is building the benchmark
tensors again, so a layout's benchmark-tensor check runs on its first template.

`--allow-caches` leaves Inductor's settings and directory as the user has them; a user's
`TORCHINDUCTOR_FORCE_DISABLE_CACHES=1` is kept as well.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import Any

INDUCTOR = {
    "force_disable_caches": False,
    "fx_graph_cache": False,
    "fx_graph_remote_cache": False,
    "autotune_local_cache": True,
    "autotune_remote_cache": False,
    "bundled_autotune_remote_cache": False,
}
"""Inductor's settings while a recording compiles (each set where this torch has it)."""
AOT_AUTOGRAD = {"enable_autograd_cache": False, "enable_remote_autograd_cache": False}

OWN = "this recording's own (FX graph cache off, autotune results shared by the recording's compiles)"
INDUCTORS = "Inductor's own (--allow-caches: a graph compiled in an earlier run loads without its compile-time facts)"


def described(allow_caches: bool) -> str:
    """What the session's environment says of the caches a recording compiled with."""
    return INDUCTORS if allow_caches else OWN


def _present(config: Any, wanted: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in wanted.items() if hasattr(config, k)}


def _clear_inductor_caches() -> None:
    """Inductor memoises its cache paths; moving the directory must drop them."""
    from torch._inductor import utils

    clear = getattr(utils, "clear_caches", None) or getattr(utils, "clear_inductor_caches", None)
    if clear is not None:
        clear()


@contextlib.contextmanager
def _env(values: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class RecordingCaches:
    """The caches one recording compiles with; `with caches.active():` around anything
    that may compile (re-entrant: a measurement runs the model inside a run)."""

    def __init__(self, allow_caches: bool) -> None:
        self.allow_caches = allow_caches
        self.directory: str | None = None
        """Created on the first compile, and left there: the session names wrapper files in it."""
        self._depth = 0

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        if self.allow_caches or self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        import torch._functorch.config as aot
        import torch._inductor.config as cfg

        if self.directory is None:
            self.directory = tempfile.mkdtemp(prefix="kinspect-inductor-")
        settings = _present(cfg, INDUCTOR)
        if os.environ.get("TORCHINDUCTOR_FORCE_DISABLE_CACHES") == "1":
            settings.pop("force_disable_caches", None)
        self._depth += 1
        try:
            with _env({"TORCHINDUCTOR_CACHE_DIR": self.directory,
                       "TRITON_CACHE_DIR": os.path.join(self.directory, "triton")}), \
                    cfg.patch(settings), aot.patch(_present(aot, AOT_AUTOGRAD)):
                _clear_inductor_caches()
                try:
                    yield
                finally:
                    _clear_inductor_caches()
        finally:
            self._depth -= 1
