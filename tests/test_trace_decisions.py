"""The pick for a shape typed against a trace, checked against Inductor's own
SizeHintMultiKernelCall: built from the multi-kernel's definition as the trace's wrapper
code holds it (its hint keys in order and its real `arg_index`), run with stand-in kernels
on meta tensors of the key the typed sizes give, and the size arguments after them."""

from __future__ import annotations

import random

import pytest
from standins import StandIn
from traces import DDP, MLP, SAMPLES

from kinspect.core.dispatch.shapes import SymbolShape
from kinspect.core.inductor_code.multi_kernels import multi_kernels
from kinspect.core.store import load
from kinspect.core.trace.graphs import read_graph

torch = pytest.importorskip("torch")
multi_kernel = pytest.importorskip("torch._inductor.codegen.multi_kernel")


class Inductor:
    """Inductor's runtime class for one multi-kernel, built as the wrapper builds it."""

    def __init__(self, code: str, name: str) -> None:
        (mk,) = [m for m in multi_kernels(code)[0] if m.name == name]
        self.ran: list[str] = []
        kernels = {k: StandIn(f"v{i}", self.ran) for i, k in enumerate(mk.keys)}
        self.call = multi_kernel.SizeHintMultiKernelCall(mk.name, kernels, {i: [slice(*r) for r in ranges]
                                                                            for i, ranges in mk.arg_index.items()})
        self.width = max(stop for ranges in mk.arg_index.values() for _, stop in ranges)

    def pick(self, key) -> int:
        """What it runs for `key` met afresh (its shape cache emptied)."""
        self.call._shape_cache.clear()
        self.ran.clear()
        args = [torch.empty(shape, dtype=torch.uint8, device="meta") for shape in key]
        self.call.run(*args, *range(1, self.width - len(args) + 1))
        (name,) = self.ran
        return int(name[1:])


def sizes() -> list[int]:
    rng = random.Random(42)
    near = [x + d for h in (64, 128, 256, 512, 1024, 4096) for x in (h,) for d in (-1, 0, 1)]
    return sorted({2, 3, *near, *(rng.randint(2, 20000) for _ in range(40))})


@pytest.mark.parametrize("trace", [MLP, DDP / "dedicated_log_torch_trace_rank_1_fixture.log.gz"], ids=["mlp", "ddp"])
def test_a_shape_typed_against_a_trace_picks_what_inductor_picks(trace, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE", "1")  # else a disk cache keyed by real kernels
    s = load(trace)
    for site in s.sites:
        (symbol,) = site.symbols
        inductor = Inductor(next(g.wrapper_code for g in s.graphs if g.name == site.graph), site.name.split("@")[0])
        for b in sizes():
            key = s.runtime_key(site, SymbolShape({symbol: b}))
            assert site.decide(key).chosen == inductor.pick(key), (site.name, b)


def test_two_typed_sizes_pick_what_inductor_picks_on_gpt2_s_code(monkeypatch):
    """GPT-2's code (samples/generate.session.json): batch and length both dynamic, keys of
    3-D and 4-D inputs and B*S rows."""
    monkeypatch.setenv("TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE", "1")
    code = load(SAMPLES / "generate.session.json").graphs[0].wrapper_code
    rng = random.Random(7)
    for site in read_graph(code, 0, "0/0", None, []).sites:
        inductor = Inductor(code, site.name)
        for _ in range(60):
            env = {"s52": rng.choice([1, 2, 3, 8, 16, 64, 300]), "s27": rng.randint(1, 2048)}
            key = site.runtime_key(env)
            assert site.decide(key).chosen == inductor.pick(key), (site.name, env)
