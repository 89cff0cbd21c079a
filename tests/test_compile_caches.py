"""A recording's Inductor caches, on the CPU with Inductor's own code: a GEMM layout tuned
in one graph of a recording is not benchmarked again in the next (the lookup Inductor's
`do_autotuning` makes, inside the per-graph context each `compile_fx_inner` enters), while
nothing from an earlier recording leaks in and every graph is still lowered (no FX graph
cache hit skips the hooks)."""

from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch")

from torch._inductor.codecache import PersistentCache  # noqa: E402
from torch._inductor.compile_fx import with_fresh_cache_if_config  # noqa: E402

from kinspect.inductor.hooks.compile_caches import RecordingCaches  # noqa: E402

HINTS = (64, 256, 4096)
LAYOUT = repr([("cuda", "torch.bfloat16", 100, 1024, 1024, 1, 0), ("cuda", "torch.bfloat16", 1024, 4096, 1, 1024, 0)])
"""What `create_inputs_key` makes of a Linear's x and weight: device, dtype, sizes, strides, offset."""


class Choice:
    """A template config as the autotune cache keys it."""

    def __init__(self, name: str) -> None:
        self.name = name

    def hash_key(self) -> str:
        return f"triton_mm-{self.name}"


CHOICES = [Choice("64x64x32"), Choice("128x128x64")]


def compile_graphs(graphs: int) -> list[int | None]:
    """Each graph autotunes the same layout at every hint, as `do_autotuning` does (one
    `compile_fx_inner` each); the hints actually benchmarked, in order."""
    benchmarked: list[int | None] = []
    for _ in range(graphs):
        with with_fresh_cache_if_config():
            for hint in (None, *HINTS):
                def bench(choices, hint=hint):
                    benchmarked.append(hint)
                    return {c: 1.0 + i for i, c in enumerate(choices)}
                timings = PersistentCache().lookup(CHOICES, "mm", LAYOUT, bench, hint_override=hint)
                assert set(timings) == set(CHOICES)  # a reused table is the whole table
    return benchmarked


@pytest.fixture(autouse=True)
def own_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "users-cache"))
    monkeypatch.delenv("TORCHINDUCTOR_FORCE_DISABLE_CACHES", raising=False)


def test_a_layout_tuned_in_one_graph_is_not_benchmarked_again_in_the_recordings_next_graph():
    caches = RecordingCaches(allow_caches=False)
    with caches.active():
        assert compile_graphs(3) == [None, *HINTS]
        assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == caches.directory
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"].endswith("users-cache")


def test_what_the_pipeline_set_before_tunes_every_graph_afresh():
    """`force_disable_caches` hands each graph compile a cache directory of its own."""
    with torch._inductor.config.patch(force_disable_caches=True):
        assert compile_graphs(2) == [None, *HINTS] * 2


def test_nothing_tuned_in_an_earlier_recording_leaks_into_the_next():
    first, second = RecordingCaches(allow_caches=False), RecordingCaches(allow_caches=False)
    with first.active():
        compile_graphs(1)
    with second.active():
        assert compile_graphs(1) == [None, *HINTS]
        with second.active():  # re-entered by a measurement's run: the same directory
            assert compile_graphs(1) == []
    assert first.directory != second.directory


def test_allow_caches_leaves_the_users_directory_and_settings():
    caches = RecordingCaches(allow_caches=True)
    with caches.active():
        assert os.environ["TORCHINDUCTOR_CACHE_DIR"].endswith("users-cache")
    assert caches.directory is None


def test_every_graph_of_a_recording_is_lowered_though_two_are_the_same(monkeypatch):
    """Two compiles of one FX graph: the FX graph cache would load the second without
    lowering it (no autotune table, key or symbol for the capture); the recording's
    caches leave it off."""
    from torch._inductor.graph import GraphLowering

    lowered = []
    real = GraphLowering.compile_to_module

    def counted(self, *a, **k):
        lowered.append(1)
        return real(self, *a, **k)

    monkeypatch.setattr(GraphLowering, "compile_to_module", counted)

    def compile_twice() -> int:
        lowered.clear()
        torch._dynamo.reset()
        for _ in range(2):
            def f(x, w):
                return x @ w

            torch.compile(f)(torch.randn(8, 16), torch.randn(16, 4))
            torch._dynamo.reset()
        return len(lowered)

    with RecordingCaches(allow_caches=False).active():
        assert compile_twice() == 2
    with RecordingCaches(allow_caches=True).active(), torch._inductor.config.patch(fx_graph_cache=True):
        assert compile_twice() == 1
