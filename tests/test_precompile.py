"""While a recording autotunes in a subprocess, Inductor's own `make_precompile_fn`
compiles every template config in this process, none in its compile-worker pool (whose
kernels the autotune subprocess compiled again); outside a recording, or autotuning in
process, Inductor precompiles as it always does.

Driven through the real `AlgorithmSelectorCache.make_precompile_fn` with stand-in choices
whose compiles only say where they ran. Inductor skips precompiling on Python 3.11.0–3.11.8
(a CPython bug); CI's 3.11 is one of those, so the tests present a later version to it."""

from __future__ import annotations

import collections
import concurrent.futures
import sys

import pytest

torch = pytest.importorskip("torch")

from torch._inductor import async_compile as ac  # noqa: E402
from torch._inductor import autotune_process as ap  # noqa: E402
from torch._inductor import select_algorithm as sa  # noqa: E402

from kinspect.inductor.hooks.capture import CompileCapture  # noqa: E402

Version = collections.namedtuple("Version", "major minor micro releaselevel serial")


class Choice(sa.TritonTemplateCaller):
    """A Triton GEMM config whose compile records where it ran."""

    def __init__(self, name: str, ran: list[tuple[str, str]]) -> None:
        self.name, self.ran = name, ran
        self.bmreq = object.__new__(ap.TritonGPUBenchmarkRequest)
        self.bmreq.module_path, self.bmreq.kernel_name = __file__, name

    def kernel_hash_key(self) -> str:
        return self.name

    def hash_key(self) -> str:
        return self.name

    def precompile(self) -> None:
        self.ran.append(("this process", self.name))

    def mark_failed(self) -> None:
        pass

    def __str__(self) -> str:
        return self.name


@pytest.fixture
def inductor(monkeypatch):
    """Inductor with its compile pool up, and where each config's compile ran."""
    ran: list[tuple[str, str]] = []

    def pool(self, kernel_name, source_code, *a, **k):
        ran.append(("compile pool", kernel_name))
        done = concurrent.futures.Future()
        done.set_result((None, 0))
        return type("Compiled", (), {"future": done})()

    monkeypatch.setattr(sys, "version_info", Version(3, 12, 0, "final", 0))
    monkeypatch.setattr(ac.AsyncCompile, "triton", pool)
    monkeypatch.setattr(ac.AsyncCompile, "use_process_pool", classmethod(lambda cls: True))
    counter = iter(range(1000))

    def precompile(subproc: bool) -> list[tuple[str, str]]:
        ran.clear()
        n = next(counter)
        choices = [Choice(f"triton_mm_{n}_{i}", ran) for i in range(3)]
        with torch._inductor.config.patch(autotune_in_subproc=subproc):
            sa.AlgorithmSelectorCache().make_precompile_fn(choices, "mm", f"inputs-{n}")()
        return sorted(ran)

    return precompile


def test_a_recording_that_autotunes_in_a_subprocess_precompiles_in_this_process(inductor):
    with CompileCapture():
        ran = inductor(subproc=True)
    assert [where for where, _ in ran] == ["this process"] * 3
    assert ac.AsyncCompile.use_process_pool()  # the pool is Inductor's again after the precompile


def test_without_a_recording_or_a_subprocess_inductor_uses_its_pool(inductor):
    CompileCapture().__enter__().__exit__(None, None, None)  # hooks installed, no recording now
    assert [where for where, _ in inductor(subproc=True)] == ["compile pool"] * 3
    with CompileCapture():
        assert [where for where, _ in inductor(subproc=False)] == ["compile pool"] * 3

