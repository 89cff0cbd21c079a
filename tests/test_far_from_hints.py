"""`runs-far-from-hints`: the sizes a program ran, held against the problem of the variant
Inductor runs for each, on a recorded MoE stack and on made-up sites."""

from __future__ import annotations

import random
from pathlib import Path

from synthetic import linear_site, product_rows_site

from kinspect.core.quality.finding_groups import group_findings
from kinspect.core.quality.findings import derive_findings
from kinspect.core.session.model import Environment, Graph, Session, Site
from kinspect.core.session.runtime import DispatchEvent
from kinspect.core.store import load

SESSIONS = Path(__file__).parent / "fixtures" / "sessions"
KIND = "runs-far-from-hints"


def _found(site: Site, envs: list[dict[str, int]]) -> list:
    keys = [site.runtime_key(env) for env in envs]
    events = [DispatchEvent(i, site.name, k, site.decide(k).chosen, site.decide(k).chosen, False)
              for i, k in enumerate(keys)]
    s = Session(environment=Environment("2026-12-07T00:00:00Z", gpu="synthetic"),
                graphs=[Graph("graph_0", sites=(site.name,))], sites=[site], events=events)
    return [f for f in derive_findings(s) if f.kind == KIND]


def _linear() -> Site:
    return linear_site(0, [64, 256, 4096], random.Random(0))


def test_a_moe_stack_at_one_size_per_symbol_ran_far_below_hint_64s_problem():
    """The MoE layer stack with both switches (H100): batch 3..8 and tokens 64..256, where hint
    64 tuned every symbol at 64, so its rows (a product of two) at 4096."""
    s = load(SESSIONS / "moe_layers_fixed_h100_2026-12-06.session.json")
    found = {f.site: f for f in s.findings if f.kind == KIND}
    assert len(found) == len(s.sites) == 6
    f = found["multi_kernel_1"]
    assert f.severity == "warning" and f.variants == (0,)
    assert f.message == (
        "keys the program ran lie far from the problem of the variant Inductor runs for them: 4 of 4 keys ×8–×64 "
        "below every variant's, in a's size args_0*args_1; 64..256 on v0 (hint 64), tuned at 4096; one size per "
        "symbol: hint 64: args_0=64 args_1=64 s69=384; each runs a config chosen for a problem it never has, and no "
        "pick among these variants changes that; hint 8 would tune it at 64; kinspect advise --run, with such hints "
        "among --candidates, measures them at the sizes the program runs")
    assert "; hint 4 would tune it at 4; " in found["multi_kernel_0"].message  # the batch alone: B=3..8


def test_the_sites_of_a_kind_share_their_sentence_and_show_what_differs():
    """Twenty sites of one loop read as the sentence and clauses they share, then each site's
    sizes and hint (the Findings tab, explain and the export group them so)."""
    s = load(SESSIONS / "moe_layers_fixed_h100_2026-12-06.session.json")
    (group,) = [g for g in group_findings(s.findings) if g.kind == KIND]
    assert group.shared == (
        "keys the program ran lie far from the problem of the variant Inductor runs for them: one size per symbol: "
        "hint 64: args_0=64 args_1=64 s69=384; each runs a config chosen for a problem it never has, and no pick "
        "among these variants changes that; kinspect advise --run, with such hints among --candidates, measures "
        "them at the sizes the program runs")
    assert group.own(group.members[1]) == ("4 of 4 keys ×8–×64 below every variant's, in a's size args_0*args_1; "
                                           "64..256 on v0 (hint 64), tuned at 4096; hint 8 would tune it at 64")


def test_sizes_below_every_hint_name_the_pick_and_a_smaller_hint():
    (f,) = _found(_linear(), [{"s0": b} for b in (2, 4, 8)])
    assert ("them: 3 of 3 keys ×8–×32 below every variant's, in x's size s0; 2..8 on v0 (hint 64), tuned at 64; "
            "each runs") in f.message
    assert "; hint 4 would tune it at 4; kinspect advise --run" in f.message and f.variants == (0,)


def test_sizes_above_every_hint_and_in_a_wide_gap_between_two():
    (above,) = _found(_linear(), [{"s0": b} for b in (16384, 65536)])
    assert "above every variant's, in x's size s0; 16384..65536 on v2 (hint 4096), tuned at 4096" in above.message
    assert "; hint 32768 would tune it at 32768; " in above.message
    wide = linear_site(0, [16, 4096], random.Random(0))  # hints ×256 apart: their midpoint ×16 from both
    (gap,) = _found(wide, [{"s0": b} for b in (200, 256, 300)])
    assert ("them: 3 of 3 keys ×12–×16, in x's size s0; 200..256 on v0 (hint 16), tuned at 16; 300 on v1 "
            "(hint 4096), tuned at 4096; ") in gap.message
    assert "; hint 256 would tune it at 256; " in gap.message


def test_keys_near_a_hint_or_only_a_few_far_say_nothing():
    assert _found(_linear(), [{"s0": b} for b in (40, 64, 100, 256, 600, 4096, 9000)]) == []  # each within ×4
    assert _found(_linear(), [{"s0": b} for b in (2, 64, 256)]) == []  # one of three far: less than half
    assert _found(_linear(), [{"s0": b} for b in (2, 64)])  # one of two: half


def test_a_product_keyed_by_the_hint_while_its_kernel_computed_more_tells_nothing():
    """Stock Inductor keys `B*S` rows by the hint (64) while its kernel tuned hint² rows: that
    size is no tuned problem to measure from (`hint-size-in-kernel` speaks of it)."""
    site = product_rows_site()
    assert _found(site, [{"s27": b, "s52": 1} for b in (2, 3, 4)]) == []


def test_a_variant_keyed_on_fewer_tensors_is_compared_as_inductor_zips_them():
    """ResNet-18's convolutions (stock, H100): each variant's key has 3 tensors, each runtime
    key 7 (the batch-norm parameters fused in); Inductor compares the first 3, and so does the
    rule: batch 4 and 16 ran on hint 64's variant, 37 and 128 near enough to theirs."""
    s = load(SESSIONS / "resnet18_stock_h100_2026-12-06.session.json")
    (f,) = [f for f in s.findings if f.kind == KIND and f.site == "multi_kernel_0"]
    assert ("them: 2 of 4 keys ×4–×16 below every variant's, in arg2_1's size x_0; 4..16 on v0 (hint 64), "
            "tuned at 64; each runs") in f.message
    assert "; hint 8 would tune it at 8; " in f.message
