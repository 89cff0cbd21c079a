"""`runs-far-from-hints`: the sizes a program ran, held against the problem of the variant
Inductor runs for each, on a recorded MoE stack and on made-up sites."""

from __future__ import annotations

import random
from pathlib import Path

from synthetic import linear_site, product_rows_site

from kinspect.core.dispatch.symbolic import SizeExpr, TensorSpec

from kinspect.core.quality.finding_groups import group_findings
from kinspect.core.quality.findings import derive_findings
from kinspect.core.session.model import Environment, Graph, Session, Site, Variant
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
        "keys the program ran lie far from the problem of the variant Inductor runs for them: 4 of 4 keys ×5–×64 "
        "below every variant's, in out's size 8*FloorDiv(10*args_0*args_1 + 31, 32); 160..2000 on v0 (hint 64), "
        "tuned at 10240; one size per symbol: hint 64: args_0=64 args_1=64 s69=384; each runs a config chosen for a "
        "problem it never has, and no pick among these variants changes that; hint 16 would tune it at 640; kinspect "
        "advise --run, with such hints among --candidates, measures them at the sizes the program runs")
    # The router reads the tokens as (B, T, 384): its rows, B*T, are what ran far, not B alone (B=3..8, which
    # would have asked for hint 4: 16 rows).
    assert ("in out's size args_0*args_1; 64..800 on v0 (hint 64), tuned at 4096; "
            in found["multi_kernel_0"].message)
    assert "; hint 16 would tune it at 256; " in found["multi_kernel_0"].message


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
    assert group.own(group.members[0]) == ("4 of 4 keys ×5–×64 below every variant's, in out's size args_0*args_1; "
                                           "64..800 on v0 (hint 64), tuned at 4096; hint 16 would tune it at 256")


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


def _per_symbol(op: str, tensors: tuple[TensorSpec, ...], hints: tuple[int, ...]) -> Site:
    """A site whose variants were keyed at one size per symbol: every symbol at the hint."""
    variants = tuple(Variant(i, h, tuple(tuple(e.evaluate({"s0": h, "s1": h}) for e in t.sizes) for t in tensors),
                             f"k{i}") for i, h in enumerate(hints))
    return Site("multi_kernel_0", "graph_0", op, tensors, variants)


def _weight_gradient() -> Site:
    """GPT-2's weight-gradient GEMM: `a` read as (B, S, 384), which the kernel sees as B*S rows."""
    b, s, rows = SizeExpr("s0"), SizeExpr("s1"), SizeExpr(("mul", "s0", "s1"))
    return _per_symbol("mm", (TensorSpec("a", "input", (b, s, SizeExpr(384))),
                              TensorSpec("b", "input", (SizeExpr(384), SizeExpr(1536))),
                              TensorSpec("out", "output", (rows, SizeExpr(1536)))), (16, 32))


def test_the_gpt2_loop_at_the_hints_advise_proposed_runs_near_them():
    """GPT-2's training loop at hints 16 and 32 (advise's proposal, H100, one compile): batch 2
    to 8 lies ×2 to ×16 from B = 16 and 32 in eleven of its GEMMs' views, while every GEMM's
    rows, 256 to 1024, are those the two variants were tuned at."""
    s = load(SESSIONS / "gpt_train_hints_16_32_h100_2026-12-07.session.json")
    assert len(s.sites) == 20 and [f for f in s.findings if f.kind == KIND] == []


def test_a_stock_key_is_read_through_the_view_that_holds_each_symbol_at_the_hint():
    """Stock GPT-2 (H200): `out` keys `B*S` rows as the hint while the kernel computed hint²;
    the `(B, S, 768)` view keys B and S at the hint, so its product is the kernel's rows."""
    s = load(SESSIONS / "gpt2_small_h200_2026-11-30.session.json")
    f = next(f for f in s.findings if f.kind == KIND and f.site == "multi_kernel_0")
    assert ("them: 6 of 6 keys ×4–×64, in x's size B*S; 64..1024 on v0 (hint 64), tuned at 4096; 2000..4096 on "
            "v1 (hint 256), tuned at 65536; each runs") in f.message


def test_a_gemm_is_held_at_the_sizes_its_kernel_tiles_not_a_views_single_sizes():
    """As in GPT-2's weight-gradient GEMMs: keys whose rows are near the variants' say nothing,
    however far their batch alone lies; rows far from them do."""
    ran = [{"s0": 4, "s1": 64}, {"s0": 8, "s1": 128}, {"s0": 2, "s1": 200}, {"s0": 8, "s1": 64}]
    assert _found(_weight_gradient(), ran) == []
    (f,) = _found(_weight_gradient(), [{"s0": 2, "s1": 8}, {"s0": 4, "s1": 8}])  # 16 and 32 rows
    assert "2 of 2 keys ×8–×16 below every variant's, in out's size s0*s1; 16..32 on v0 (hint 16)" in f.message
    assert "; hint 4 would tune it at 16; " in f.message


def test_a_view_is_taken_whole_where_no_tensor_at_the_ops_rank_holds_a_dynamic_size():
    """The attention-weight gradient reads (B, 6, S, 64) and (B, S, 384) into a (384, 384): its
    kernel's K is B*S, which only the views hold, their leading sizes together."""
    b, s = SizeExpr("s0"), SizeExpr("s1")
    site = _per_symbol("mm", (TensorSpec("a", "input", (b, SizeExpr(6), s, SizeExpr(64))),
                              TensorSpec("b", "input", (b, s, SizeExpr(384))),
                              TensorSpec("out", "output", (SizeExpr(384), SizeExpr(384)))), (64, 256))
    (f,) = _found(site, [{"s0": 2, "s1": 64}, {"s0": 4, "s1": 64}])
    assert "2 of 2 keys ×16–×32 below every variant's, in a's size 6*s0*s1; 768..1536 on v0 (hint 64)" in f.message
    (huge,) = _found(site, [{"s0": 2**31, "s1": 2**31}])  # 6 * 2**62 and 2**62 together: held at 2**62
    assert f"above every variant's, in b's size s0*s1; {2**62} on v1 (hint 256), tuned at 65536" in huge.message


def test_a_batched_gemms_batch_is_a_size_of_its_own():
    """bmm tiles (M, N) in each of its batch: a batch far from the tuned one counts alone."""
    b, s = SizeExpr("s0"), SizeExpr("s1")
    site = _per_symbol("bmm", (TensorSpec("a", "input", (b, s, SizeExpr(64))),
                               TensorSpec("b", "input", (b, SizeExpr(64), s)),
                               TensorSpec("out", "output", (b, s, s))), (64, 256))
    (f,) = _found(site, [{"s0": 2, "s1": 64}, {"s0": 4, "s1": 64}])
    assert "2 of 2 keys ×16–×32 below every variant's, in a's size s0; 2..4 on v0 (hint 64)" in f.message
