"""Dispatch quality over measured shapes: regret, the noise rule, slow-pick ranges, the
workload's loss, and what-ifs over heuristics and hint subsets."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from kinspect.core.quality.findings import derive_findings
from kinspect.core.quality.overview import model_quality, ranges_text, site_quality, worst_regrets
from kinspect.core.session.runtime import DispatchEvent, Measurement, Sweep
from kinspect.core.store import load
from kinspect.core.dispatch.shapes import SymbolShape
from kinspect.core.quality.whatif import current, what_ifs
from kinspect.tui.widgets.site_list import site_prompt

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def linear_with(times: dict[int, dict[int, tuple[float, float, float]]], method: str = "cuda_events"):
    """The linear sample with its measurements replaced: B -> variant -> (p20, median, p80)."""
    s = load(SAMPLES / "linear.session.json")
    site = s.sites[0]
    s.measurements = [
        Measurement(site.name, s.runtime_key(site, SymbolShape({"B": b})), v, method, med, p20, p80, 20)
        for b, by in times.items() for v, (p20, med, p80) in by.items()
    ]
    s.sweeps = [Sweep({"B": (16, 8192)}, tuple({"B": b} for b in times))]
    return s


FAST, SLOW = (9.8, 10.0, 10.2), (14.7, 15.0, 15.3)


def test_regret_and_the_noise_rule_per_site():
    s = linear_with({
        16: {0: FAST, 1: SLOW, 2: SLOW},            # picks v0: fastest
        100: {0: SLOW, 1: FAST, 2: SLOW},           # picks v0: x1.5, beyond noise
        128: {0: (10.1, 10.3, 10.6), 1: FAST, 2: SLOW},  # picks v0: x1.03, within noise
        1000: {0: SLOW, 1: (19.0, 20.0, 21.0), 2: FAST},  # picks v1: x2.0
    })
    q = site_quality(s, s.sites[0])
    assert [p.sizes["B"] for p in q.points] == [16, 100, 128, 1000]
    assert [p.slower for p in q.points] == [False, True, False, True]
    assert q.fastest_picked == 0.5
    assert abs(q.geomean_regret - (1.0 * 1.5 * 1.03 * 2.0) ** 0.25) < 1e-9
    assert q.worst.regret == 2.0 and dict(q.worst.sizes) == {"B": 1000}
    js = q.to_json()
    assert js["worst_sizes"] == {"B": 1000} and js["shapes"] == 4 and js["fastest_picked"] == 0.5


def test_a_pick_within_the_spread_is_not_slower_even_at_a_large_ratio():
    s = linear_with({100: {0: (5.0, 13.0, 20.0), 1: (8.0, 10.0, 12.0), 2: SLOW}})
    p = site_quality(s, s.sites[0]).points[0]
    assert p.regret == 1.3 and not p.slower


def test_the_noise_rule_at_its_edges():
    """Slower means the pick's p20 above the fastest's p80 (touching is not above) and at
    least 1.05 times its median (exactly 1.05 is slower)."""
    touching = linear_with({100: {0: (10.2, 15.0, 15.3), 1: FAST, 2: SLOW}})  # p20 10.2 = p80 10.2
    at_ratio = linear_with({100: {0: (10.3, 10.5, 10.7), 1: FAST, 2: SLOW}})  # 10.5 / 10.0
    below_ratio = linear_with({100: {0: (10.3, 10.49, 10.7), 1: FAST, 2: SLOW}})
    assert [site_quality(s, s.sites[0]).points[0].slower for s in (touching, at_ratio, below_ratio)] == \
           [False, True, False]


def test_the_site_lists_worst_regret_counts_only_picks_slower_beyond_noise():
    """The inspector's site list shows a site's worst regret beyond noise: a larger one
    within the spread is not it, and a site whose picks are all within noise shows ×1.00."""
    both = linear_with({
        100: {0: SLOW, 1: FAST, 2: SLOW},              # x1.5, beyond noise
        120: {0: (5.0, 20.0, 40.0), 1: FAST, 2: SLOW},  # x2.0, but within the spread
    })
    within = linear_with({120: {0: (5.0, 20.0, 40.0), 1: FAST, 2: SLOW}})
    site = both.sites[0]
    assert site_quality(both, site).worst.regret == 2.0  # the table's worst is every pick's
    assert worst_regrets(both) == {site.name: 1.5} and worst_regrets(within) == {site.name: 1.0}
    assert site_prompt(site, 0, 0, worst_regrets(both)[site.name]).plain.splitlines()[0] == f"  {site.name} ×1.50"
    assert site_prompt(site, 0, 0, worst_regrets(within)[site.name]).plain.splitlines()[0] == f"  {site.name} ×1.00"


def test_slow_pick_ranges_split_where_the_pick_or_the_fastest_changes_or_a_pick_is_fine():
    s = linear_with({
        100: {0: SLOW, 1: FAST, 2: SLOW},                 # v0 runs, v1 is fastest
        110: {0: (19.0, 20.0, 21.0), 1: FAST, 2: SLOW},   # the same pair, worse: one range
        115: {0: FAST, 1: SLOW, 2: SLOW},                 # v0 is the fastest: the range ends
        120: {0: SLOW, 1: FAST, 2: SLOW},                 # the same pair again: a range of its own
        125: {0: SLOW, 1: SLOW, 2: FAST},                 # v2 is fastest now: another range at once
        127: {0: (29.0, 30.0, 31.0), 1: SLOW, 2: FAST},
        200: {0: SLOW, 1: SLOW, 2: FAST},                 # v1 runs: another again
    })
    site = s.sites[0]
    assert ranges_text(site_quality(s, site).points, site, ["v0", "v1", "v2"]) == [
        "B=100..110: v0 runs, v1 is fastest (worst ×2.00 at B=110)",
        "B=120: v0 runs, v1 is fastest (worst ×1.50 at B=120)",
        "B=125..127: v0 runs, v2 is fastest (worst ×3.00 at B=127)",
        "B=200: v1 runs, v2 is fastest (worst ×1.50 at B=200)",
    ]


def test_a_range_over_two_sizes_names_the_one_that_moves_and_keeps_the_other():
    from kinspect.core.quality.overview import ShapePoint, _span

    key = ((1,),)

    def at(**sizes):
        return ShapePoint(key, sizes, 0, 1, 1.5, True, 15.0, 10.0)

    assert _span(at(B=4, S=64), at(B=4, S=128)) == "S=64..128 (B=4)"
    assert _span(at(B=4, S=64), at(B=8, S=128)) == "B=4 S=64 .. B=8 S=128"
    assert _span(at(B=4), at(B=8)) == "B=4..8"
    one = at(B=4)
    assert _span(one, one) == "B=4"


def test_slow_pick_findings_name_the_ranges_the_variants_and_the_worst():
    s = linear_with({
        64: {0: FAST, 1: SLOW, 2: SLOW},
        100: {0: SLOW, 1: FAST, 2: SLOW},
        120: {0: SLOW, 1: FAST, 2: SLOW},
        200: {0: SLOW, 1: FAST, 2: SLOW},
        1000: {0: SLOW, 1: (29.0, 30.0, 31.0), 2: FAST},
    })
    slow = [f for f in derive_findings(s) if f.kind == "slow-pick"]
    assert len(slow) == 1 and slow[0].severity == "warning"
    text = slow[0].message
    assert "3 of 5 measured shapes" in text and "worst ×3.00" in text and "one compile" in text
    assert "B=100..120: v0 (hint 64) runs, v1 (hint 256) is fastest (worst ×1.50 at B=100)" in text
    assert "B=1000: v1 (hint 256) runs, v2 (hint 4096) is fastest (worst ×3.00 at B=1000)" in text


def test_a_sweep_with_nothing_beyond_noise_says_so():
    s = linear_with({16: {0: FAST, 1: SLOW, 2: SLOW}, 2000: {0: SLOW, 1: SLOW, 2: FAST}})
    slow = [f for f in derive_findings(s) if f.kind == "slow-pick"]
    assert [f.severity for f in slow] == ["info"] and "all 2 measured shapes" in slow[0].message


def test_the_workload_weighs_the_loss_by_the_recorded_calls():
    s = linear_with({100: {0: SLOW, 1: FAST, 2: SLOW}, 1000: {0: SLOW, 1: FAST, 2: FAST}})
    site = s.sites[0]
    b100, b1000, b16 = (s.runtime_key(site, SymbolShape({"B": b})) for b in (100, 1000, 16))
    s.events = [  # B=100 picks v0 (5 us lost a call), B=1000 picks v1 (none), B=16 is not measured
        DispatchEvent(0, site.name, b100, 0, 0, False),  # the compile's run: no workload step
        *(DispatchEvent(1 + i, site.name, b100, 0, 0, i > 0, step=i) for i in range(3)),
        DispatchEvent(4, site.name, b1000, 1, 1, False, step=3),
        DispatchEvent(5, site.name, b1000, 1, 1, True),  # a measurement's run
        *(DispatchEvent(6 + i, site.name, b16, 0, 0, i > 0, step=4 + i) for i in range(2)),
    ]
    q = site_quality(s, site)
    # 3 calls at B=100 lose 5 us each, against 3 x 10 + 1 x 10 us at best
    assert (q.workload_source, q.workload_calls, q.workload_lost) == ("recorded calls", 4, 15 / 40)
    s.events = []
    q = site_quality(s, site)  # the model's workload: B=100 and B=1000 once each
    assert (q.workload_source, q.workload_calls, q.workload_lost) == ("model workload", 2, 5 / 20)


def test_the_model_summary_covers_every_site_and_both_methods_agree_on_one_rule():
    s = load(SAMPLES / "mlp.session.json")  # swept on the H200: every site at every swept size
    q = model_quality(s)
    swept = len(s.sweeps[0].points)
    assert [x.shapes for x in q.sites] == [swept, swept] and q.shapes == 2 * swept
    worst_site, worst = q.worst
    assert worst.regret == max(p.regret for x in q.sites for p in x.points)
    assert worst in next(x for x in q.sites if x.site == worst_site).points
    cupti_only = replace(s, measurements=[m for m in s.measurements if m.method == "cupti"])
    assert model_quality(cupti_only).shapes == q.shapes


def test_what_if_names_the_best_rule_and_hint_subset():
    s = linear_with({
        100: {0: SLOW, 1: FAST, 2: SLOW},
        1000: {0: SLOW, 1: SLOW, 2: FAST},
        4000: {0: SLOW, 1: SLOW, 2: FAST},
    })
    results = what_ifs(s)
    assert len(results) == 5 * 7  # heuristics x non-empty subsets of 3 hints
    now = current(results, [64, 256, 4096])
    assert now is not None and abs(now.geomean_regret - 1.5 ** (2 / 3)) < 1e-9
    best = results[0]
    assert best.geomean_regret == 1.0 and best.worst_regret == 1.0
    only_4096 = next(w for w in results if w.heuristic == "inductor" and w.hints == (4096,))
    assert abs(only_4096.geomean_regret - 1.5 ** (1 / 3)) < 1e-9


def test_what_if_weighs_the_loss_by_the_recorded_calls_as_the_quality_does():
    s = linear_with({100: {0: SLOW, 1: FAST, 2: SLOW}, 1000: {0: SLOW, 1: FAST, 2: FAST}})
    site = s.sites[0]
    b100, b1000 = (s.runtime_key(site, SymbolShape({"B": b})) for b in (100, 1000))
    s.events = [*(DispatchEvent(i, site.name, b100, 0, 0, i > 0, step=i) for i in range(3)),
                DispatchEvent(3, site.name, b1000, 1, 1, False, step=3)]
    results = what_ifs(s)
    now = current(results, [64, 256, 4096])
    assert now.workload_lost == site_quality(s, site).workload_lost == 15 / 40  # 3 calls lose 5 us of 10
    only_256 = next(w for w in results if w.heuristic == "inductor" and w.hints == (256,))
    assert only_256.workload_lost == 0.0 and only_256.geomean_regret == 1.0
    assert now.to_json() == {"heuristic": "inductor", "hints": [64, 256, 4096], "shapes": 2,
                             "geomean_regret": round(1.5 ** 0.5, 4), "worst_regret": 1.5, "workload_lost": 0.375}


def test_what_if_covers_every_fully_measured_key():
    s = linear_with({b: {0: SLOW, 1: FAST, 2: SLOW} for b in range(10, 510)})
    results = what_ifs(s)
    assert {w.shapes for w in results} == {500}


def test_a_decision_map_needs_two_measured_sizes_and_two_are_enough():
    from kinspect.core.quality.decision_map import decision_map

    one = linear_with({100: {0: SLOW, 1: FAST, 2: SLOW}})
    two = linear_with({100: {0: SLOW, 1: FAST, 2: SLOW}, 1000: {0: SLOW, 1: FAST, 2: FAST}})
    assert decision_map(one, one.sites[0]) is None
    drawn = decision_map(two, two.sites[0])
    assert [p.x for p in drawn.points] == [100, 1000]


def test_a_sessions_own_hints_are_its_models_else_its_variants():
    s = linear_with({100: {0: SLOW, 1: FAST, 2: SLOW}})
    s.model = replace(s.model, hints=(4096, 64, 512))  # the model file's, though this compile differs
    assert s.compiled_hints == (64, 512, 4096)
    s.model = replace(s.model, hints=())
    assert s.compiled_hints == (64, 256, 4096)  # read off the variants
