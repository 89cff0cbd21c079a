"""Hint advice in the core: the subset search is exact (every subset's decision checked
against Inductor's real `SizeHintMultiKernelCall`, brute force), predictions on a recorded
H200 sweep agree with the quality figures computed another way, and workloads parse."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
from fake_pipeline import SizeHintMultiKernelCall  # sets the env the class needs on a CPU, then imports it
from standins import StandIn
from synthetic import synthetic_session

import torch
from kinspect.core.quality import advise
from kinspect.core.errors import KinspectError
from kinspect.core.quality.overview import site_quality
from kinspect.core.session.runtime import Measurement, Recompile
from kinspect.core.store import load
from kinspect.core.quality.variance import variants_of

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def measured_session(seed: int, variants: int, sizes: list[int]):
    """A synthetic session (two sites, `variants` hints) with every variant timed at every size."""
    rng = random.Random(seed)
    s = synthetic_session(sites=2, variants=variants, measured=False, seed=seed)
    for b in sizes:
        for site in s.sites:
            key = site.runtime_key({"s0": b, "s1": 64})
            for v in site.variants:
                s.measurements.append(Measurement(site.name, key, v.index, "cupti", round(rng.uniform(5, 50), 3)))
    return s


def inductor_pick(site, subset, key) -> int:
    """The variant (index in the full site) Inductor's own class runs when compiled with `subset`."""
    kept = [v for v in site.variants if v.hint in subset]
    call = SizeHintMultiKernelCall("mk", {v.key: StandIn(f"k{v.index}") for v in kept},
                                   {i: [slice(0, len(key))] for i in range(len(kept))})
    call.run(*(torch.empty(shape, device="meta") for shape in key))
    return kept[call.picked_kernel].index


def brute_force(session, workload, max_hints):
    """Every subset, every size, decided by the real class; GPU time over the oracle's, for
    the whole workload and per site."""
    hints = sorted({v.hint for s in session.sites for v in s.variants})
    out, per_site = {}, {}
    for r in range(1, max_hints + 1):
        for subset in itertools.combinations(hints, r):
            spent, best = {}, {}
            for sizes, w in workload.points:
                for site in session.sites:
                    key = site.runtime_key({"s0": sizes["B"], "s1": 64})
                    t = session.timings_at(site.name, key)
                    spent[site.name] = spent.get(site.name, 0.0) + w * t.median(inductor_pick(site, subset, key))
                    best[site.name] = best.get(site.name, 0.0) + w * t.median(t.fastest)
            out[subset] = sum(spent.values()) / sum(best.values())
            per_site[subset] = {name: spent[name] / best[name] for name in spent}
    return out, per_site


def test_the_search_is_exact_against_inductors_real_class_by_brute_force():
    rng = random.Random(3)
    sizes = sorted({rng.randint(1, 300_000) for _ in range(30)})
    session = measured_session(1, 6, sizes)
    workload = advise.Workload(tuple(({"B": b}, float(rng.randint(1, 9))) for b in sizes), "test")
    tabs = advise.tables(session, workload)
    assert not tabs.missing
    found = advise.search(tabs.sites, 3)
    truth, per_site = brute_force(session, workload, 3)
    assert {p.hints: p.regret for p in found} == pytest.approx(truth, rel=1e-12)
    for p in found:  # the worst site each subset leaves, decided by the real class too
        assert p.worst == pytest.approx(max(per_site[p.hints].values()), rel=1e-12)
        assert per_site[p.hints][p.worst_site] == pytest.approx(p.worst, rel=1e-12)
    assert len(found) == len(truth) == 6 + 15 + 20
    best = min(truth.values())
    assert found[0].regret == pytest.approx(best, rel=1e-12)
    assert found[0].hints == min((h for h, r in truth.items() if r <= best * (1 + 1e-12)), key=lambda h: (len(h), h))


def test_a_recorded_programs_proposals_name_the_site_each_leaves_worst():
    """advise's candidate run of the GPT-2-family training loop (H100, candidates 16, 32, 64,
    4096): 16 and 32 together cost x1.03 over the workload and leave the forward's c_attn at
    x1.13; 32 alone costs x1.05 and leaves a backward GEMM at x1.18, its one variant (tuned at
    1,024 rows) running the loop's 256 rows x1.4 slower than hint 16's."""
    fixture = Path(__file__).parent / "fixtures" / "sessions" / "gpt_train_candidates_16_32_64_4096_h100_2026-12-07.session.json"
    found = {p.hints: p for p in advise.search(advise.recorded_tables(load(fixture)).sites, 3)}
    assert (round(found[16, 32].regret, 3), found[16, 32].worst_site, round(found[16, 32].worst, 3)) == \
        (1.026, "multi_kernel_0", 1.132)
    assert (round(found[32,].regret, 3), found[32,].worst_site, round(found[32,].worst, 3)) == \
        (1.054, "multi_kernel_1@graph_1", 1.185)


def test_a_proposals_ties_that_inductors_rule_breaks_toward_the_slower_variant_are_said_with_a_hint_between():
    """The same candidate run: with 16 and 32 compiled, 512 rows (8 x 64, or 512 rows read
    flat) lie as far from hint 16's problem as from hint 32's at three GEMMs, and Inductor runs
    hint 16's; 32 alone leaves nothing to tie."""
    fixture = Path(__file__).parent / "fixtures" / "sessions" / "gpt_train_candidates_16_32_64_4096_h100_2026-12-07.session.json"
    session = load(fixture)
    tabs = advise.recorded_tables(session).sites
    found = advise.ties(tabs, (16, 32))
    assert [(t.site, t.runs, t.faster) for t in found] == [
        ("multi_kernel_0", 16, 32), ("multi_kernel_5", 16, 32), ("multi_kernel_1@graph_1", 16, 32)]
    assert round(found[0].slower_by, 2) == 1.61 and found[0].key[-1] == (512, 1152)
    assert advise.ties(tabs, (32,)) == [] and advise.ties_note([], (32,), {}) is None
    from kinspect.core.quality.side_by_side import site_labels
    assert advise.ties_note(found, (16, 32), site_labels(session)) == (
        "with hints 16, 32, Inductor's rule breaks a tie toward the slower variant at 3 keys (3 sites; the worst: "
        "graph_0 (forward) · addmm · transformer.h.0.attn.c_attn +1 at ((1152,), (512, 384), (384, 1152), (512, 1152)) "
        "runs hint 16's variant, ×1.61 slower than hint 32's); hint 23, between the tied ones in log2, may decide "
        "them: --candidates with it measures that")


def test_the_prediction_on_a_recorded_h200_sweep_is_the_quality_figures_sum():
    session = load(SAMPLES / "linear.session.json")
    (site,) = session.sites
    points = [dict(p) for p in session.sweeps[0].points]
    workload = advise.Workload(tuple((p, 1.0) for p in points), "the sweep")
    tabs = advise.tables(session, workload)
    q = site_quality(session, site)
    swept = {tuple(sorted(p.items())) for p in points}
    counted = [p for p in q.points if tuple(sorted(p.sizes.items())) in swept]
    assert len(counted) == len(tabs.sites[0].keys) > 40
    every = advise.workload_regret(tabs.sites, (64, 256, 4096))
    assert every == pytest.approx(sum(p.pick_us for p in counted) / sum(p.best_us for p in counted), rel=1e-9)
    only_256 = advise.workload_regret(tabs.sites, (256,))
    t = tabs.sites[0]
    assert only_256 == pytest.approx(t.times[:, 1].sum() / t.best.sum(), rel=1e-12)
    assert every > 1.0 and only_256 > every  # the recording's picks beat a single hint, and are not the oracle


def test_a_verification_of_the_same_compile_measures_what_was_predicted():
    session = load(SAMPLES / "linear.session.json")
    workload = advise.Workload(tuple((dict(p), 2.0) for p in session.sweeps[0].points), "the sweep")
    tabs = advise.tables(session, workload)
    same = Recompile((64, 256, 4096), "verify", variants_of(session), tuple(session.measurements))
    assert advise.measured_regret(session, tabs.sites, same) == pytest.approx(
        advise.workload_regret(tabs.sites, (64, 256, 4096)), rel=1e-12)
    # a compile with one hint (4096): its only variant is timed as this compile's v2
    only = Recompile((4096,), "verify", {"multi_kernel_0": ((4096, "k"),)},
                     tuple(Measurement(m.site, m.key, 0, m.method, m.median_us) for m in session.measurements
                           if m.variant == 2))
    assert advise.measured_regret(session, tabs.sites, only) == pytest.approx(
        advise.workload_regret(tabs.sites, (4096,)), rel=1e-9)


def test_a_size_without_every_variant_timed_is_left_out_and_named():
    session = measured_session(2, 3, [100, 1000])
    workload = advise.Workload((({"B": 100}, 1.0), ({"B": 5000}, 1.0)), "test")
    tabs = advise.tables(session, workload)
    assert tabs.missing == [{"B": 5000}] and all(len(t.keys) == 1 for t in tabs.sites)


def test_candidates_are_the_powers_of_two_in_the_range():
    assert advise.candidate_hints(1, 16384) == [2 ** e for e in range(1, 15)]  # B=1 is a graph of its own
    assert advise.candidate_hints(100, 1000) == [128, 256, 512]
    assert advise.candidate_hints(129, 200) == [129, 200]


def test_workload_file_counts_comments_and_a_bad_line():
    w = advise.parse_workload_file("# sizes\nB=1000 x40\nB=64\n\nB=1000\nB=8 S=128 *2\n", "w.txt")
    assert dict((tuple(s.items()), c) for s, c in w.points) == {
        (("B", 1000),): 41.0, (("B", 64),): 1.0, (("B", 8), ("S", 128)): 2.0}
    assert w.source == "the file w.txt (44 calls, 3 sizes)"
    with pytest.raises(KinspectError, match=r"^w.txt:2: a line reads B=1000 or B=1000 x40 \(a count\); got 'B=ten'$"):
        advise.parse_workload_file("B=1\nB=ten\n", "w.txt")
    with pytest.raises(KinspectError, match="no sizes"):
        advise.parse_workload_file("# nothing\n", "w.txt")


def test_uniform_and_model_workloads_say_what_they_are():
    u = advise.uniform_workload("B", 2, 16384, 8)
    assert u.source == "uniform over B=2..16384 in log space (8 sizes, one call each)"
    assert [s["B"] for s, _ in u.points][0] == 2 and [s["B"] for s, _ in u.points][-1] == 16384
    assert advise.uniform_workload("B", 1, 16384, 8).source == "uniform over B=2..16384 in log space (8 sizes, one call each)"
    m = advise.within(advise.steps_workload([{"B": 64}, {"B": 64}, {"B": 9000}, {"B": 1}], "the model file's workload"),
                      "B", (1, 4096))
    assert m.points == (({"B": 64}, 2.0),)
    assert m.source == "the model file's workload (4 calls, 3 sizes); 2 of its sizes outside B=2..4096 left out"
    with pytest.raises(KinspectError, match="no size of"):
        advise.within(m, "B", (5000, 6000))


def test_a_verification_runs_dispatch_reads_as_explain_gives_it_and_over_compiles_as_ranges():
    from kinspect.core.quality.advise import RunDispatch, dispatch_text

    one = RunDispatch(1.0604, "multi_kernel_0", 1.167, False)
    two = RunDispatch(1.0521, "multi_kernel_0", 1.292, False)
    assert dispatch_text([one]) == "×1.06, worst ×1.17 (multi_kernel_0)"
    assert dispatch_text([one, two]) == "×1.05–×1.06, worst ×1.17–×1.29 over 2 compiles"
    assert dispatch_text([RunDispatch(1.0, "multi_kernel_0", 1.0, True)]) == "one variant"
    assert dispatch_text([]) == "n/a"
