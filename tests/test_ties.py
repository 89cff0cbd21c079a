"""`equally-near`: keys at which variants tie at Inductor's least distance and its rule runs
the first where a later one ran faster, on the GPT-2-family training loop's recording and
on a made-up Linear whose tie Inductor's own class decides."""

from __future__ import annotations

import random
from pathlib import Path

from fake_pipeline import SizeHintMultiKernelCall  # sets the env the class needs on a CPU, then imports it
from standins import StandIn
from synthetic import linear_site

import torch
from kinspect.core.quality.finding_groups import group_findings
from kinspect.core.quality.findings import derive_findings
from kinspect.core.session.model import Environment, Graph, Session, Site
from kinspect.core.session.runtime import DispatchEvent, Measurement
from kinspect.core.store import load

SESSIONS = Path(__file__).parent / "fixtures" / "sessions"
KIND = "equally-near"


def _session(site: Site, times: dict[int, list[float]]) -> Session:
    """The site called at each batch in `times`, every variant timed there (µs, tight spreads)."""
    events, measured = [], []
    for i, (batch, us) in enumerate(times.items()):
        key = site.runtime_key({"s0": batch})
        events.append(DispatchEvent(i, site.name, key, site.decide(key).chosen, site.decide(key).chosen, False))
        measured += [Measurement(site.name, key, v, "cuda_events", t, t * 0.99, t * 1.01, 50) for v, t in enumerate(us)]
    return Session(environment=Environment("2026-12-07T00:00:00Z", gpu="synthetic"),
                   graphs=[Graph("graph_0", sites=(site.name,))], sites=[site], events=events, measurements=measured)


def _inductor_runs(site: Site, batch: int) -> int:
    """The variant Inductor's own class runs at this batch, its kernels stood in."""
    key = site.runtime_key({"s0": batch})
    call = SizeHintMultiKernelCall("mk", {v.key: StandIn(f"k{v.index}") for v in site.variants},
                                   {v.index: [slice(0, len(key))] for v in site.variants})
    call.run(*(torch.empty(shape, device="meta") for shape in key))
    return call.picked_kernel


def test_a_tie_inductor_breaks_toward_the_slower_variant_is_named_with_the_hint_between():
    """Batch 128 lies a factor 2 from hint 64's problem and from hint 256's: Inductor's class
    runs hint 64's, 20 µs, where hint 256's takes 10."""
    site = linear_site(0, [64, 256, 4096], random.Random(0))
    assert _inductor_runs(site, 128) == 0
    (f,) = [f for f in derive_findings(_session(site, {128: [20.0, 10.0, 30.0], 1000: [9.0, 8.0, 9.5]}))
            if f.kind == KIND]
    assert f.variants == (0,) and f.severity == "warning"
    assert f.message == (
        "variants are equally near keys the program ran and Inductor runs the first of them (its rule keeps the first "
        "least distance) where a later one is faster: 1 of the 2 keys; at ((4096,), (128, 1024), (4096, 1024), "
        "(128, 4096)), v0 (hint 64) and v1 (hint 256) both 2.00 from it: v0 (hint 64) runs, 20.0 µs, where v1 "
        "(hint 256) takes 10.0 µs (×2.00); hint 128, between theirs in log2, would have a variant nearer than "
        "either; kinspect advise --run with it among --candidates measures it at the sizes the program runs")


def test_a_tie_the_first_variant_wins_or_that_timing_cannot_tell_says_nothing():
    site = linear_site(0, [64, 256, 4096], random.Random(0))
    faster_first = _session(site, {128: [10.0, 20.0, 30.0]})
    within_noise = _session(site, {128: [10.3, 10.0, 30.0]})  # x1.03: below the noise rule's x1.05
    no_tie = _session(site, {100: [20.0, 10.0, 30.0]})  # log2-nearer 64: Inductor's rule, no tie
    for s in (faster_first, within_noise, no_tie):
        assert not [f for f in derive_findings(s) if f.kind == KIND]


def test_the_gpt2_loop_at_16_32_ties_at_512_rows_where_hint_32s_variant_is_faster():
    """The GPT-2-family training loop at hints 16, 32 with both switches (H100, one compile):
    8 x 64 (512 rows) lies 4 from hint 16's problem (16 x 16) and hint 32's (32 x 32); Inductor
    runs hint 16's at three GEMMs, x1.26 to x1.60 slower. The group says the sentence once."""
    s = load(SESSIONS / "gpt_train_hints_16_32_h100_2026-12-07.session.json")
    found = {f.site: f for f in s.findings if f.kind == KIND}
    assert sorted(found) == ["multi_kernel_0", "multi_kernel_1@graph_1", "multi_kernel_5"]
    f = found["multi_kernel_1@graph_1"]
    assert ("at ((8, 64, 384), (384, 1536), (512, 1536)), v0 (hint 16) and v1 (hint 32) both 4.00 from it: v0 "
            "(hint 16) runs, 6.0 µs, where v1 (hint 32) takes 3.7 µs (×1.60); hint 23, between theirs in log2, "
            "would have a variant nearer than either") in f.message
    (group,) = [g for g in group_findings(s.findings) if g.kind == KIND]
    assert group.shared.startswith("variants are equally near keys the program ran and Inductor runs the first")
    assert group.own(f).startswith("at ((8, 64, 384), ")
