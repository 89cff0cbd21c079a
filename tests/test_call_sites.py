"""One multi-kernel called from two places, as Inductor emits for repeated layers, through
the real SizeHintMultiKernelCall with stand-in kernels: events name their call site, the
shape cache is shared (the first call at a new shape decides for the second), and the log
and the session file keep both."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

from kinspect.core.quality.findings import derive_findings
from kinspect.core.session.model import CallSite, Environment, Session, Site
from kinspect.core.store import load, save
from kinspect.core.session.format.log import LiveLog
from kinspect.core.dispatch.symbolic import SizeExpr, TensorSpec
from kinspect.inductor.hooks.recorder import Recorder
from kinspect.core.inductor_code.calls import call_lines

torch = pytest.importorskip("torch")
pytest.importorskip("torch._inductor.codegen.multi_kernel")

HINTS = (64, 256, 4096)
WRAPPER = textwrap.dedent("""\
    from torch._inductor.codegen.multi_kernel import SizeHintMultiKernelCall
    from standins import StandIn

    ran = []
    multi_kernel_0 = SizeHintMultiKernelCall('multi_kernel_0', {
        ((64, 1024), (64, 4096)): StandIn('k0', ran),
        ((256, 1024), (256, 4096)): StandIn('k1', ran),
        ((4096, 1024), (4096, 4096)): StandIn('k2', ran),
    }, {0: [slice(0, 2)], 1: [slice(0, 2)], 2: [slice(0, 2)]})


    def call(x0, out0, x1, out1):
        multi_kernel_0.run(x0, out0)   # layer 0
        multi_kernel_0.run(x1, out1)   # layer 1
""")


@pytest.fixture
def wrapper(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE", "1")
    path = tmp_path / "output_code.py"
    path.write_text(WRAPPER)
    return path


def load_wrapper(path: Path):
    spec = importlib.util.spec_from_file_location("kinspect_test_wrapper", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def site_of(code: str) -> Site:
    b = SizeExpr("s0")
    tensors = (TensorSpec("x", "input", (b, SizeExpr(1024))), TensorSpec("out", "output", (b, SizeExpr(4096))))
    from kinspect.core.session.model import Variant

    variants = tuple(Variant(i, h, ((h, 1024), (h, 4096)), f"k{i}") for i, h in enumerate(HINTS))
    calls = tuple(CallSite(i, call=text, line=n, module=f"h.{i}.mlp") for i, (n, text) in
                  enumerate(call_lines(code, "multi_kernel_0")))
    return Site("multi_kernel_0", "graph_0", "mm", tensors, variants, call_sites=calls)


def tensors(b: int):
    return [torch.empty(b, 1024, device="meta"), torch.empty(b, 4096, device="meta")]


def test_events_name_their_call_site_and_the_first_call_decides_for_both(wrapper, tmp_path):
    site = site_of(wrapper.read_text())
    assert [c.line for c in site.call_sites] == [13, 14]
    session = Session(Environment(created="test"), sites=[site])
    log = LiveLog(tmp_path / "rec.jsonl", session)
    log.site(site)
    with Recorder() as rec:
        rec.configure(log=log)
        module = load_wrapper(wrapper)
    for step, b in enumerate((100, 100, 1000)):
        rec.set_step(step)
        module.call(*tensors(b), *tensors(b))
    log.close()
    lines = {c.line: c.index for c in site.call_sites}
    events = rec.dispatch_events(call_site=lambda name, line: lines.get(line))
    assert [(e.call_site, e.cache_hit, e.picked) for e in events] == [
        (0, False, 0), (1, True, 0),   # B=100: layer 0 misses and decides v0; layer 1 hits
        (0, True, 0), (1, True, 0),
        (0, False, 1), (1, True, 1),   # B=1000: layer 0 decides v1 for both
    ]
    assert module.ran == ["k0", "k0", "k0", "k0", "k1", "k1"]  # what really ran, per call
    session.events = events
    shared = [f for f in derive_findings(session) if f.kind == "shared-cache"]
    assert len(shared) == 1
    assert "called from 2 places (h.0.mlp, h.1.mlp)" in shared[0].message
    assert "h.0.mlp decided 2 of 2 shapes" in shared[0].message
    from_log = load(tmp_path / "rec.jsonl")
    assert [(e.call_site, e.cache_hit, e.picked) for e in from_log.events] == \
        [(e.call_site, e.cache_hit, e.picked) for e in events]
    save(session, tmp_path / "s.json")
    again = load(tmp_path / "s.json")
    assert again.sites[0].call_sites == site.call_sites
    assert [e.call_site for e in again.events] == [0, 1, 0, 1, 0, 1]
