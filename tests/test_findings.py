"""Each finding, on a session built to have exactly that problem, and none on a clean one.

The sessions are written out here (no synthetic generator), so each test shows the facts
a finding is drawn from and the sentence a user reads.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kinspect.core.dispatch.decision import decide
from kinspect.core.quality.findings import derive_findings, earlier_hints_choices
from kinspect.core.quality.rules import rank_rule, session_rule, site_rule
from kinspect.core.session.model import AutotuneRow, Environment, Finding, Graph, Session, Site, Variant
from kinspect.core.session.runtime import DispatchEvent
from kinspect.core.store import load, save
from kinspect.core.dispatch.symbolic import SizeExpr, TensorSpec

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
MLP_1129 = Path(__file__).resolve().parent / "fixtures" / "sessions" / "mlp_h200_2026-11-29.session.json"

HINTS = (64, 256, 4096)
B = SizeExpr("s0")


def linear_tensors() -> tuple[TensorSpec, ...]:
    return (
        TensorSpec("bias", "input", (SizeExpr(4096),)),
        TensorSpec("x", "input", (B, SizeExpr(1024))),
        TensorSpec("weight", "input", (SizeExpr(4096), SizeExpr(1024))),
        TensorSpec("out", "output", (B, SizeExpr(4096))),
    )


def variants(tensors: tuple[TensorSpec, ...]) -> tuple[Variant, ...]:
    """One distinct kernel per hint, each the winner of its own autotune table."""
    out = []
    for i, hint in enumerate(HINTS):
        rows = (AutotuneRow(f"triton_mm_{i}", 10.0 + i), AutotuneRow("mm", 11.5 + i, "extern"),
                AutotuneRow(f"triton_mm_{i + 3}", 14.0 + i))
        out.append(Variant(
            index=i, hint=hint, key=tuple(t.key_at_hint(hint) for t in tensors),
            kernel_name=f"triton_tem_fused_addmm_{i}", source=f"# kernel {i}\n", source_hash=f"hash{i}",
            autotune=rows, winner=f"triton_mm_{i}", emitted=f"triton_mm_{i}",
        ))
    return tuple(out)


def site_of(tensors: tuple[TensorSpec, ...], name: str = "multi_kernel_0", op: str = "addmm") -> Site:
    return Site(name, "graph_0", op, tensors, variants(tensors))


def events_for(site: Site, sizes: list[int]) -> list[DispatchEvent]:
    """What Inductor does: decide each size once, then hit the cache."""
    out, seen = [], set()
    for seq, b in enumerate(sizes):
        key = site.runtime_key({"s0": b, "s1": b})
        pick = decide(site.keys, key).chosen
        out.append(DispatchEvent(seq, site.name, key, pick, pick, b in seen, 0, seq * 1000))
        seen.add(b)
    return out


def clean() -> Session:
    site = site_of(linear_tensors())
    return Session(
        environment=Environment(created="2026-11-29T00:00:00Z", gpu="synthetic"),  # made-up times, held to no data sheet
        graphs=[Graph("graph_0", "/tmp/wrapper.py", (site.name,))],
        sites=[site],
        events=events_for(site, [1, 64, 100, 128, 129, 1000, 1025, 8192, 100, 8192]),
    )


def with_site(session: Session, site: Site) -> Session:
    return replace(session, sites=[site], graphs=[Graph("graph_0", None, (site.name,))])


def test_a_clean_session_has_no_finding():
    assert derive_findings(clean()) == []


def test_variants_with_the_same_source_are_one_kernel():
    s = clean()
    site = s.sites[0]
    v = list(site.variants)
    v[1] = replace(v[1], source_hash=v[0].source_hash, kernel_name=v[0].kernel_name)
    assert derive_findings(with_site(s, replace(site, variants=tuple(v)))) == [Finding(
        "identical-variants",
        "variants v0, v1 (hints 64, 256) are the same kernel triton_tem_fused_addmm_0: those hints buy nothing at this site",
        "warning", "multi_kernel_0", "graph_0", (0, 1),
    )]


def test_variants_whose_hints_are_unknown_are_named_without_them():
    """A site loaded from a wrapper alone (no compile seen) may not know its variants' hints."""
    s = clean()
    site = s.sites[0]
    v = [replace(x, hint=None) for x in site.variants]
    v[1] = replace(v[1], source_hash=v[0].source_hash, kernel_name=v[0].kernel_name)
    found = [f.message for f in derive_findings(with_site(s, replace(site, variants=tuple(v))))
             if f.kind == "identical-variants"]
    assert found == ["variants v0, v1 are the same kernel triton_tem_fused_addmm_0: those hints buy nothing at this site"]


def test_without_a_source_hash_the_kernel_name_decides_identity():
    s = clean()
    site = s.sites[0]
    v = [replace(x, source_hash="") for x in site.variants]
    v[2] = replace(v[2], kernel_name=v[1].kernel_name)
    (f,) = derive_findings(with_site(s, replace(site, variants=tuple(v))))
    assert (f.kind, f.variants) == ("identical-variants", (1, 2))
    assert f.message.startswith("variants v1, v2 (hints 256, 4096) are the same kernel triton_tem_fused_addmm_1")


def test_a_variant_that_is_not_its_autotune_winner_says_by_how_much_and_why():
    """A losing choice of the variant's own hint is what Inductor's fusion benchmark picked
    (finalizing without fusion takes the winner): information, not a warning."""
    s = clean()
    site = s.sites[0]
    v = list(site.variants)
    v[2] = replace(v[2], emitted="triton_mm_5")
    assert derive_findings(with_site(s, replace(site, variants=tuple(v)))) == [Finding(
        "not-autotune-winner",
        "v2 (hint 4096) runs triton_mm_5, not triton_mm_2, the fastest Triton choice autotuned at its hint "
        "(16.0 µs against 12.0 µs when autotuned at hint 4096: Inductor's benchmark at the hint's sizes, not a time "
        "at any runtime shape): Inductor's fusion benchmark picked it, timing the hint's choices with the ops fused "
        "into the kernel, where the table timed the GEMM alone",
        "info", "multi_kernel_0", "graph_0", (2,),
    )]


def test_where_the_session_holds_the_fusion_benchmarks_times_the_finding_gives_them():
    s = clean()
    site = s.sites[0]
    v = list(site.variants)
    said = ": Inductor's fusion benchmark picked it, timing the hint's choices with the ops fused into the kernel"
    v[2] = replace(v[2], emitted="triton_mm_5", fused=(AutotuneRow("triton_mm_5", 20.0), AutotuneRow("triton_mm_2", 25.5)))
    (f,) = derive_findings(with_site(s, replace(site, variants=tuple(v))))
    assert f.message.endswith(said + " (20.0 µs fused, against 25.5 µs for triton_mm_2)")
    v[2] = replace(v[2], fused=(AutotuneRow("triton_mm_5", 20.0),))
    (f,) = derive_findings(with_site(s, replace(site, variants=tuple(v))))
    assert f.message.endswith(said + " (20.0 µs fused; triton_mm_2 was not timed fused)")


def test_an_emitted_choice_missing_from_the_table_is_still_reported_without_times():
    s = clean()
    site = s.sites[0]
    v = list(site.variants)
    v[0] = replace(v[0], emitted="triton_mm_fused_epilogue")
    (f,) = derive_findings(with_site(s, replace(site, variants=tuple(v))))
    assert f.message == ("v0 (hint 64) runs triton_mm_fused_epilogue, not triton_mm_0, "
                         "the fastest Triton choice autotuned at its hint")


def with_configs(site: Site) -> Site:
    """Each table's rows described by their config, as Inductor describes its choices."""
    return replace(site, variants=tuple(
        replace(v, autotune=tuple(replace(r, description=f"BLOCK_M={64 * (int(r.name[10:]) % 3 + 1)}")
                                  if r.name.startswith("triton_mm_") else r for r in v.autotune))
        for v in site.variants))


def test_a_variant_running_its_winners_config_under_another_name_is_no_finding():
    """Each hint's table numbers its choices afresh: v2 runs triton_mm_4 from hint 256's
    table, the very config (BLOCK_M=128) that won at hint 4096 as triton_mm_2."""
    s = clean()
    site = with_configs(s.sites[0])
    v = list(site.variants)
    v[2] = replace(v[2], emitted="triton_mm_4", autotune=(AutotuneRow("triton_mm_2", 12.0, "BLOCK_M=128"),))
    v[1] = replace(v[1], autotune=(*v[1].autotune, AutotuneRow("triton_mm_4", 30.0, "BLOCK_M=128")))
    assert derive_findings(with_site(s, replace(site, variants=tuple(v)))) == []


def test_a_larger_hint_running_a_smaller_hints_other_config_is_reported():
    s = clean()
    site = with_configs(s.sites[0])
    v = list(site.variants)
    v[2] = replace(v[2], emitted="triton_mm_0")  # hint 64's winner, BLOCK_M=64; hint 4096's is BLOCK_M=192
    (f,) = derive_findings(with_site(s, replace(site, variants=tuple(v))))
    assert (f.kind, f.variants) == ("not-autotune-winner", (2,))
    assert f.message == ("v2 (hint 4096) runs triton_mm_0, a choice autotuned at hint 64, not triton_mm_2, "
                         "the fastest Triton choice autotuned at its own hint, whose config differs: Inductor's "
                         "epilogue-fusion benchmark at hint 4096 also compares the choices of the hints before it, "
                         "each timed fused on its own hint's problem (docs/upstream/fusion-per-hint.md); "
                         "--fusion-per-hint has each hint pick among its own")
    fixed = with_site(s, replace(site, variants=tuple(v)))
    fixed = replace(fixed, environment=replace(fixed.environment, config={**fixed.environment.config,
                                                                          "fusion_per_hint": True}))
    (f,) = derive_findings(fixed)
    assert f.message.endswith("whose config differs: recorded with --fusion-per-hint, so none of hint 4096's own "
                              "choices compiled with its epilogue and Inductor fell back to an earlier hint's, as it "
                              "does stock")


def test_a_smaller_hint_running_a_larger_hints_config_is_reported_without_the_fusion_cause():
    """The fusion benchmark's list only grows along the hints, so a choice from a later hint
    has some other cause, and the finding names none."""
    s = clean()
    site = with_configs(s.sites[0])
    v = list(site.variants)
    v[0] = replace(v[0], emitted="triton_mm_2")
    (f,) = derive_findings(with_site(s, replace(site, variants=tuple(v))))
    assert f.message == ("v0 (hint 64) runs triton_mm_2, a choice autotuned at hint 4096, not triton_mm_0, "
                         "the fastest Triton choice autotuned at its own hint, whose config differs")


def test_the_mlp_sample_reports_only_the_variants_whose_config_is_not_the_winners():
    """Recorded on the H200 (the mlp sample of 2026-11-29, kept as a fixture in the format
    of then): v2 runs triton_mm_209 (hint 256's table), the config of its winner
    triton_mm_229; v0 and v1 run configs that lost at their hints."""
    session = load(MLP_1129)
    found = [f.message for f in derive_findings(session) if f.kind == "not-autotune-winner"]
    cause = (": Inductor's fusion benchmark picked it, timing the hint's choices with the ops fused into the kernel, "
             "where the table timed the GEMM alone")
    assert found == [
        "v0 (hint 64) runs triton_mm_185, not triton_mm_178, the fastest Triton choice autotuned at its hint "
        "(17.9 µs against 14.1 µs when autotuned at hint 64: Inductor's benchmark at the hint's sizes, not a time at "
        "any runtime shape)" + cause,
        "v1 (hint 256) runs triton_mm_209, not triton_mm_210, the fastest Triton choice autotuned at its hint "
        "(39.2 µs against 14.2 µs when autotuned at hint 256: Inductor's benchmark at the hint's sizes, not a time at "
        "any runtime shape)" + cause,
    ]
    assert [f for f in session.findings if f.kind == "not-autotune-winner"] == \
        [f for f in derive_findings(session) if f.kind == "not-autotune-winner"]  # load derives them afresh


def test_a_dim_twice_a_symbol_is_keyed_as_the_hint_not_its_true_size():
    """a @ b with N = 2*s1: at hint 64 the dim is 128, but Inductor keys 64."""
    n2 = SizeExpr(("mul", 2, "s1"))
    tensors = (TensorSpec("a", "input", (B, SizeExpr(4096))), TensorSpec("b", "input", (SizeExpr(4096), n2)),
               TensorSpec("out", "output", (B, n2)))
    site = site_of(tensors, op="mm")
    s = replace(with_site(clean(), site), events=events_for(site, [100, 3000]))
    found = derive_findings(s)
    assert {f.kind for f in found} == {"key-not-true-size"}
    (one,) = found  # one finding for the site: each dim once, with its size at every hint
    assert one.message == (
        "Inductor keys each hint's variant with the hint itself as these sizes: "
        "b dim 1 is 2*s1 (128 at hint 64, 512 at hint 256, 8192 at hint 4096), "
        "out dim 1 is 2*s1 (128 at hint 64, 512 at hint 256, 8192 at hint 4096)")
    assert one.variants == (0, 1, 2) and one.severity == "info" and one.site == "multi_kernel_0"


def test_a_runtime_key_with_an_extra_tensor_does_not_line_up():
    """An epilogue input adds a tensor at run time; Inductor's zip silently drops it."""
    s = clean()
    site = s.sites[0]
    key = (*site.runtime_key({"s0": 100}), (100, 4096))
    s.events.append(DispatchEvent(len(s.events), site.name, key, 0, 0, False, 1, 10**6))
    assert derive_findings(s) == [Finding(
        "key-structure",
        "runtime key ((4096,), (100, 1024), (4096, 1024), (100, 4096), (100, 4096)) does not line up with "
        "the hint keys ((4096,), (64, 1024), (4096, 1024), (64, 4096)): Inductor's zip compares only the common prefix",
        "warning", "multi_kernel_0", "graph_0",
    )]


def test_an_event_where_inductor_and_kinspect_disagree_is_an_error_once_per_key():
    s = clean()
    e = s.events[5]  # B=1000: v1 by the heuristic (256 is nearer than 4096 in log2)
    assert e.predicted == 1
    s.events[5] = replace(e, picked=0)
    s.events.append(replace(e, seq=len(s.events), picked=0, cache_hit=True))
    forced = s.events[7]  # B=8192, forced to v0 by the user: not a disagreement
    s.events.append(replace(forced, seq=len(s.events), picked=0, override=0, cache_hit=True))
    assert derive_findings(s) == [Finding(
        "model-disagrees",
        "event 5: Inductor ran v0 for ((4096,), (1000, 1024), (4096, 1024), (1000, 4096)) but kinspect's "
        "model of its heuristic predicts v1",
        "error", "multi_kernel_0", None, (0, 1),
    )]


def test_a_graph_without_a_site_says_why():
    s = clean()
    s.graphs.append(Graph("graph_1 (backward)", None, (), "no GEMM Inductor could render as a Triton template"))
    assert derive_findings(s) == [Finding(
        "no-site",
        "graph_1 (backward) has no size-hint multi-kernel: no GEMM Inductor could render as a Triton template",
        "info", None, "graph_1 (backward)",
    )]


@pytest.fixture
def declared(monkeypatch):
    """The rule registries as they are, restored after the test declares a rule of its own."""
    for rules in (site_rule, session_rule, rank_rule):
        monkeypatch.setattr(rules, "rules", list(rules.rules))


def test_a_rule_declared_alone_is_derived_and_replaces_its_stale_findings(tmp_path, declared):
    @session_rule("many-calls")
    def many_calls(session: Session) -> list[Finding]:
        return [Finding("many-calls", f"{len(session.events)} calls", "info")]

    s = clean()
    s.findings = [Finding("many-calls", "3 calls, in an older recording", "info")]
    save(s, tmp_path / "s.json")
    assert load(tmp_path / "s.json").findings == [Finding("many-calls", "10 calls", "info")]


def test_a_site_rule_declared_alone_runs_once_per_site(declared):
    @site_rule("site-named")
    def named(site: Site, facts) -> list[Finding]:
        return [Finding("site-named", f"{site.name}: {len(facts.site_keys[site.name])} keys", "info", site=site.name)]

    assert derive_findings(clean()) == [Finding("site-named", "multi_kernel_0: 8 keys", "info", site="multi_kernel_0")]


def test_one_kind_has_one_rule(declared):
    with pytest.raises(ValueError, match="'slow-pick' is declared twice"):
        session_rule("slow-pick")(lambda session: [])


RESNET_STOCK = Path(__file__).parent / "fixtures" / "sessions" / "resnet18_stock_h100_2026-12-06.session.json"


def test_a_recorded_resnet_names_the_fusion_benchmark_where_a_later_hint_runs_an_earlier_hints_choice():
    """ResNet-18 under kinspect run, stock Inductor (H100, the program set's device run):
    18 variants at hints 256 and 4096 run a convolution config from an earlier hint's table,
    and no variant one from a later hint's."""
    session = load(RESNET_STOCK)
    found = [f for f in derive_findings(session) if f.kind == "not-autotune-winner"]
    caused = [f for f in found if "epilogue-fusion benchmark" in f.message]
    assert len(caused) == 18
    assert {f.variants for f in caused} == {(1,), (2,)}
    first = next(f for f in caused if f.site == "multi_kernel_0")
    assert first.message.startswith("v1 (hint 256) runs triton_convolution2d_10, a choice autotuned at hint 64, "
                                    "not triton_convolution2d_19")
    assert not [f for f in found if "a choice autotuned at hint" in f.message and f not in caused]
    borrowed = [(site.name, v.index, c.tuned_at) for site in session.sites for v, c in earlier_hints_choices(site)]
    assert sorted((name, (index,)) for name, index, _ in borrowed) == sorted((f.site, f.variants) for f in caused)
    assert ("multi_kernel_0", 1, 64) in borrowed
