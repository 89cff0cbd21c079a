"""`kinspect advise` over a grid of two sizes (a transformer's B and S), on the CPU: the
workload and candidates a grid gives, and the search on keys holding B, S and B*S entries,
exact against Inductor's real `SizeHintMultiKernelCall` by brute force."""

from __future__ import annotations

import itertools
import random

import pytest
from fake_pipeline import SizeHintMultiKernelCall  # sets the env the class needs on a CPU, then imports it
from standins import StandIn

import torch
from kinspect.core.dispatch.symbolic import SizeExpr, TensorSpec
from kinspect.core.errors import KinspectError
from kinspect.core.quality import advise
from kinspect.core.session.model import Environment, Session, Site, SymbolInfo, Variant
from kinspect.core.session.runtime import Measurement

HINTS = [16, 32, 64, 128, 256, 512, 1024]
BS = SizeExpr(("mul", "s0", "s1"))


def _site(name: str, tensors: tuple[TensorSpec, ...], key_at) -> Site:
    """A site whose variant keys are what Inductor writes: every non-constant entry the hint."""
    return Site(name, "graph_0", "addmm", tensors,
                tuple(Variant(i, h, key_at(h), f"k_{name}_{i}") for i, h in enumerate(HINTS)))


def transformer_session(seed: int, grid: list[dict[str, int]]) -> Session:
    """GPT-2's c_attn (x through the (B*S, 768) view) and an MLP input keyed (B, S, 768), every
    variant timed at every grid size."""
    sites = [
        _site("multi_kernel_0", (TensorSpec("bias", "input", (SizeExpr(2304),)),
                                 TensorSpec("x", "input", (BS, SizeExpr(768))),
                                 TensorSpec("weight", "input", (SizeExpr(768), SizeExpr(2304))),
                                 TensorSpec("out", "output", (BS, SizeExpr(2304)))),
              lambda h: ((2304,), (h, 768), (768, 2304), (h, 2304))),
        _site("multi_kernel_1", (TensorSpec("x", "input", (SizeExpr("s0"), SizeExpr("s1"), SizeExpr(768))),
                                 TensorSpec("weight", "input", (SizeExpr(768), SizeExpr(3072))),
                                 TensorSpec("out", "output", (BS, SizeExpr(3072)))),
              lambda h: ((h, h, 768), (768, 3072), (h, 3072))),
    ]
    s = Session(environment=Environment("2026-12-01T00:00:00Z", gpu="synthetic"),
                symbols=[SymbolInfo("s0", "B", example=4), SymbolInfo("s1", "S", example=128)], sites=sites)
    rng = random.Random(seed)
    for sizes in grid:
        for site in sites:
            key = site.runtime_key({"s0": sizes["B"], "s1": sizes["S"]})
            for v in site.variants:
                s.measurements.append(Measurement(site.name, key, v.index, "cupti", round(rng.uniform(5, 80), 3)))
    return s


def inductor_pick(site: Site, subset, key) -> int:
    kept = [v for v in site.variants if v.hint in subset]
    call = SizeHintMultiKernelCall("mk", {v.key: StandIn(f"k{v.index}") for v in kept},
                                   {i: [slice(0, len(key))] for i in range(len(kept))})
    call.run(*(torch.empty(shape, device="meta") for shape in key))
    return kept[call.picked_kernel].index


def test_a_grid_workload_is_the_product_of_log_spaced_sizes_inside_every_range():
    spans = {"B": (1, 32), "S": (16, 1024)}
    w = advise.uniform_grid(spans, 16)
    assert w.source == "uniform over the grid B=2..32 × S=16..1024 in log space (16 sizes, one call each)"
    assert {s["B"] for s, _ in w.points} == {2, 5, 13, 32} and {s["S"] for s, _ in w.points} == {16, 64, 256, 1024}
    assert advise.grid_candidates(spans) == [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    steps = advise.steps_workload([{"B": 4, "S": 128}, {"B": 64, "S": 128}, {"B": 4, "S": 4096}], "w")
    assert advise.within_all(steps, spans).points == (({"B": 4, "S": 128}, 1.0),)
    with pytest.raises(KinspectError, match="no size of"):
        advise.within_all(steps, {"B": (100, 200), "S": (16, 1024)})


def test_the_grid_search_on_b_s_and_b_times_s_keys_is_exact_against_inductors_real_class():
    grid = [dict(s) for s, _ in advise.uniform_grid({"B": (2, 32), "S": (16, 1024)}, 16).points]
    grid += [{"B": 2, "S": 128}, {"B": 7, "S": 300}]  # a tie between hints at distance 8 among them
    session = transformer_session(5, grid)
    rng = random.Random(9)
    workload = advise.Workload(tuple((s, float(rng.randint(1, 5))) for s in grid), "grid")
    tabs = advise.tables(session, workload)
    assert not tabs.missing
    found = {p.hints: p.regret for p in advise.search(tabs.sites, 2)}
    truth = {}
    for r in (1, 2):
        for subset in itertools.combinations(HINTS, r):
            spent = best = 0.0
            for sizes, w in workload.points:
                for site in session.sites:
                    key = site.runtime_key({"s0": sizes["B"], "s1": sizes["S"]})
                    t = session.timings_at(site.name, key)
                    spent += w * t.median(inductor_pick(site, subset, key))
                    best += w * t.median(t.fastest)
            truth[subset] = spent / best
    assert found == pytest.approx(truth, rel=1e-12)
    assert len(found) == 7 + 21


def test_a_site_never_timed_for_every_variant_is_left_out_with_why_and_the_rest_is_advised():
    """One site whose variant failed at every size (a 2-layer Llama's rotary GEMM on the H200
    left advise with nothing at all): its sizes are not all dropped, the site is, and why is kept."""
    from dataclasses import replace

    grid = [dict(s) for s, _ in advise.uniform_grid({"B": (2, 32), "S": (16, 1024)}, 16).points]
    session = transformer_session(5, grid)
    session.measurements = [
        replace(m, median_us=None, error="CUDA error: an illegal memory access")
        if m.site == "multi_kernel_1" and m.variant == 3 else m for m in session.measurements]
    workload = advise.Workload(tuple((s, 1.0) for s in grid), "grid")
    tabs = advise.tables(session, workload)
    assert [t.site for t in tabs.sites] == ["multi_kernel_0"] and not tabs.missing
    assert tabs.left_out == {"multi_kernel_1": "v3 (hint 128) failed at B=2 S=16: CUDA error: an illegal memory access"}
    assert advise.search(tabs.sites, 2)
    session.measurements = [m for m in session.measurements if m.site != "multi_kernel_0"]
    tabs = advise.tables(session, workload)
    assert tabs.sites == [] and set(tabs.left_out) == {"multi_kernel_0", "multi_kernel_1"}
    assert advise.untimed_reasons(session, workload) == [
        "multi_kernel_0: nothing was timed at B=2 S=16 (key ((2304,), (32, 768), (768, 2304), (32, 2304)))",
        "multi_kernel_1: v3 (hint 128) failed at B=2 S=16: CUDA error: an illegal memory access"]


def test_a_kernel_shorter_than_the_launch_gap_is_named_as_such():
    from dataclasses import replace

    grid = [{"B": 2, "S": 16}]
    session = transformer_session(5, grid)
    session.measurements = [replace(m, median_us=0.0) if m.site == "multi_kernel_1" and m.variant == 0 else m
                            for m in session.measurements]
    tabs = advise.tables(session, advise.Workload(((grid[0], 1.0),), "one"))
    assert tabs.left_out == {"multi_kernel_1": "v0 (hint 16) timed 0 µs at B=2 S=16: shorter than the launch gap "
                                               "the timing takes off"}


def llama_like_session(grid: list[dict[str, int]]) -> Session:
    """multi_kernel_1 shared by four projections per model call: q, k and v hand Inductor
    the (B, S, 768) key its tensors give, o hands it the attention's (B, 12, S, 64) output,
    as a Llama's o_proj does; each grid size's model call recorded, and timed at both keys."""
    from dataclasses import replace

    from kinspect.core.session.model import CallSite
    from kinspect.core.session.runtime import DispatchEvent

    s = transformer_session(5, grid)
    names = ["q_proj", "k_proj", "v_proj", "o_proj"]
    s.sites[1] = replace(s.sites[1], call_sites=tuple(
        CallSite(i, module=f"layers.0.self_attn.{n}", module_class="Linear") for i, n in enumerate(names)))
    rng = random.Random(3)
    for sizes in grid:
        b, t = sizes["B"], sizes["S"]
        plain = s.sites[1].runtime_key({"s0": b, "s1": t})
        odd = ((b, 12, t, 64), (768, 3072), (b * t, 3072))
        calls = [("multi_kernel_0", 0, s.sites[0].runtime_key({"s0": b, "s1": t}))]
        calls += [("multi_kernel_1", i, odd if n == "o_proj" else plain) for i, n in enumerate(names)]
        for site, call_site, key in calls:
            s.events.append(DispatchEvent(len(s.events), site, key, 0, 0, False, call_site=call_site))
        for v in s.sites[1].variants:
            s.measurements.append(Measurement("multi_kernel_1", odd, v.index, "cupti", round(rng.uniform(5, 80), 3)))
    return s


def test_a_shared_site_is_weighed_per_call_at_every_key_its_calls_hand_inductor():
    """The o projection's key does not line up with the site's tensors, and Inductor
    decides it on what it has (the common prefix): advice counts each of the four calls at
    the key it was recorded with, exact against Inductor's real class by brute force."""
    grid = [{"B": b, "S": t} for b in (2, 8) for t in (64, 256, 1024)]
    session = llama_like_session(grid)
    workload = advise.Workload(tuple((g, float(i + 1)) for i, g in enumerate(grid)), "grid")
    tabs = advise.tables(session, workload)
    assert not tabs.missing and not tabs.left_out
    assert [t.misaligned for t in tabs.sites] == [(), ("layers.0.self_attn.o_proj",)]
    assert [len(t.keys) for t in tabs.sites] == [6, 12]
    found = {p.hints: p.regret for p in advise.search(tabs.sites, 2)}
    truth = {}
    for r in (1, 2):
        for subset in itertools.combinations(HINTS, r):
            spent = best = 0.0
            for (sizes, w), call in zip(workload.points, range(len(grid))):
                for e in session.events[5 * call:5 * call + 5]:
                    site = session.site(e.site)
                    t = session.timings_at(site.name, e.key)
                    spent += w * t.median(inductor_pick(site, subset, e.key))
                    best += w * t.median(t.fastest)
            truth[subset] = spent / best
    assert found == pytest.approx(truth, rel=1e-12)


def test_without_recorded_calls_each_call_site_counts_at_the_key_the_tensors_give():
    grid = [{"B": 2, "S": 64}, {"B": 8, "S": 1024}]
    session = llama_like_session(grid)
    session.events = []
    tabs = advise.tables(session, advise.Workload(tuple((g, 1.0) for g in grid), "grid"))
    assert [(len(t.keys), list(t.weights)) for t in tabs.sites] == [(2, [1.0, 1.0]), (2, [4.0, 4.0])]


def test_a_key_only_some_calls_hand_inductor_must_be_timed_too():
    """Every key a site's calls hand Inductor is weighed, so each must have been timed: a
    site without a time at one of them is left out, naming that key."""
    grid = [{"B": 2, "S": 64}]
    session = llama_like_session(grid)
    session.measurements = [m for m in session.measurements if not (m.site == "multi_kernel_1" and len(m.key[0]) == 4)]
    tabs = advise.tables(session, advise.Workload(((grid[0], 1.0),), "one"))
    assert tabs.left_out == {"multi_kernel_1": "nothing was timed at B=2 S=64 (key ((2, 12, 64, 64), (768, 3072), "
                                               "(128, 3072)))"}


def test_a_key_laid_out_otherwise_than_its_site_is_named_by_its_model_call_not_by_misread_sizes():
    """Read by position, the o projection's (2, 12, 64, 64) gave `B=2 S=12` (the heads
    where S would be) in explain, the findings and the TUI; it is named by the recorded
    model call it came in, and by nothing where no call recorded it."""
    from kinspect.core.quality.overview import SizeNamer

    session = llama_like_session([{"B": 2, "S": 64}])
    site = session.sites[1]
    odd, plain = ((2, 12, 64, 64), (768, 3072), (128, 3072)), site.runtime_key({"s0": 2, "s1": 64})
    assert site.symbol_values(odd) == {} and site.symbol_values(plain) == {"s0": 2, "s1": 64}
    namer = SizeNamer(session)
    assert namer(site, odd) == {"B": 2, "S": 64} and namer(site, site.runtime_key({"s0": 3, "s1": 50})) == {"B": 3, "S": 50}
    session.events = []
    assert SizeNamer(session)(site, odd) == {}


def test_a_fresh_compile_that_keys_a_site_otherwise_is_verified_at_its_own_keys():
    """On the H200 a Llama's rotary GEMM was keyed on three tensors in the candidate compile
    and on two in each verification compile, so every verification read `not every size was
    timed`. The fresh compile's own sites and dispatches say which keys it saw at each size."""
    from dataclasses import replace

    from kinspect.core.session.runtime import DispatchEvent, Recompile

    grid = [{"B": b, "S": t} for b in (2, 8) for t in (64, 1024)]
    session = llama_like_session(grid)
    workload = advise.Workload(tuple((g, 1.0 + i) for i, g in enumerate(grid)), "grid")
    tabs = advise.tables(session, workload)
    # The fresh compile: multi_kernel_0 keyed on x alone, (B*S, 768), with hints 64 and 1024.
    kept = (2, 6)
    fresh_sites = [replace(session.sites[0], tensors=(TensorSpec("x", "input", (BS, SizeExpr(768))),),
                           variants=tuple(Variant(j, HINTS[v], ((HINTS[v], 768),), f"k{v}") for j, v in enumerate(kept))),
                   replace(session.sites[1], variants=tuple(replace(session.sites[1].variants[v], index=j)
                                                            for j, v in enumerate(kept)))]
    own = Session(environment=session.environment, symbols=session.symbols, sites=fresh_sites)
    rng = random.Random(11)
    for sizes in grid:
        b, t = sizes["B"], sizes["S"]
        plain, odd = fresh_sites[1].runtime_key({"s0": b, "s1": t}), ((b, 12, t, 64), (768, 3072), (b * t, 3072))
        calls = [("multi_kernel_0", 0, ((b * t, 768),))] + [("multi_kernel_1", i, odd if i == 3 else plain)
                                                            for i in range(4)]
        for site, call_site, key in calls:
            own.events.append(DispatchEvent(len(own.events), site, key, 0, 0, False, call_site=call_site))
        for site, _, key in calls[:2] + calls[-1:]:
            for j in range(2):
                own.measurements.append(Measurement(site, key, j, "cupti", round(rng.uniform(5, 80), 3)))
    r = Recompile((64, 1024), "verify", {s.name: tuple((v.hint, v.kernel_name) for v in s.variants) for s in fresh_sites},
                  tuple(own.measurements))
    assert advise.measured_regret(session, tabs.sites, r) is None  # at the candidate's keys nothing was timed
    spent = best = 0.0
    for i, (sizes, w) in enumerate(workload.points):
        for e in own.events[5 * i:5 * i + 5]:
            site = own.site(e.site)
            spent += w * own.timings_at(e.site, e.key).median(inductor_pick(site, (64, 1024), e.key))
    best = sum(float((t.weights * t.best).sum()) for t in tabs.sites)
    assert advise.measured_regret(session, tabs.sites, r, own) == pytest.approx(spent / best, rel=1e-12)
