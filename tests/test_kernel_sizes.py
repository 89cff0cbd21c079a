"""The hint-size-in-kernel finding: what a hint's GEMM kernel computes where its rows are
B*S, read from the kernel source Inductor emitted (shaped as samples/generate.py's)."""

from __future__ import annotations

from dataclasses import replace

from synthetic import product_rows_site

from kinspect.core.quality.findings import derive_findings
from kinspect.core.session.model import Environment, Session, Site

def _found(site: Site) -> list:
    s = Session(environment=Environment("2026-12-01T00:00:00Z", torch="2.11.0", gpu="NVIDIA H200"), sites=[site])
    return [f for f in derive_findings(s) if f.kind == "hint-size-in-kernel"]


def test_at_hint_4096_the_int32_early_exit_makes_the_pick_one_among_configs_that_compute_nothing():
    (f,) = _found(product_rows_site())
    assert f.severity == "error" and f.site == "multi_kernel_0"
    assert ("at hint 4096 M * N = 16,777,216 × 2,304 wraps to 0 in int32 and `if M * N == 0` returns at once, "
            "so v2 was picked among configs that compute nothing (its autotune time, 3.2 µs, timed no GEMM)") in f.message
    assert "at hints 64, 256 (M = 4,096, 65,536 inside the kernel) tiles can land on rows past the grid's" in f.message
    assert f.message.startswith("Inductor gives this GEMM's kernel the hint for each size symbol (M = ks0*ks1)")


def test_a_product_that_does_not_wrap_to_zero_only_warns_of_the_tiles():
    (f,) = _found(product_rows_site(n=50257))  # GPT-2's lm_head: 16,777,216 x 50,257 is not 0 mod 2**32
    assert f.severity == "warning" and "compute nothing" not in f.message
    assert "at hints 64, 256 (M" in f.message and "4096 (M" not in f.message


def test_one_symbol_of_rows_is_the_grids_own_and_no_finding():
    assert _found(product_rows_site(m="ks0")) == []
    assert _found(product_rows_site(m="2048")) == []


def test_a_variant_without_source_says_nothing():
    site = product_rows_site()
    bare = replace(site, variants=tuple(replace(v, source="") for v in site.variants))
    assert _found(bare) == []


def test_sizes_are_read_as_integer_arithmetic_only():
    from kinspect.core.quality.kernel_sizes import _value

    assert _value("197*ks0", 64) == 12_608 and _value("(ks0 + 1)*ks1", 4) == 20
    assert _value("__import__('os').system('x')", 64) is None and _value("ks0**ks1", 64) is None


def test_a_site_tuned_at_one_size_per_symbol_has_no_disagreeing_sizes_to_report():
    """With `--one-size-per-symbol` the graph records the sizes each hint was tuned at: the
    keys hold B*S at them, the kernel got the same, and neither the kernel-size finding nor
    the key-not-true-size one speaks; without them (Inductor's own rule) both do."""
    from kinspect.core.dispatch.hint_sizes import Assignment
    from kinspect.core.session.model import Graph

    tuned = (Assignment(64, {"s27": 64, "s52": 64}), Assignment(256, {"s27": 256, "s52": 256}),
             Assignment(4096, {"s27": 512, "s52": 512}, "lowered from 4096: mm needed 103 GB"))
    stock = product_rows_site()
    site = replace(stock, variants=tuple(replace(v, key=tuple(t.key_at_hint(v.hint, tuned[v.index].values)
                                                                for t in stock.tensors)) for v in stock.variants))
    assert site.variants[2].key[2] == (262_144, 2304)
    env = Environment("2026-12-01T00:00:00Z", torch="2.11.0", gpu="NVIDIA H200")
    for site, graphs, speaks in ((site, [Graph("graph_0", sites=("multi_kernel_0",), hint_sizes=tuned)], False),
                                 (stock, [Graph("graph_0", sites=("multi_kernel_0",))], True)):
        kinds = {f.kind for f in derive_findings(Session(environment=env, graphs=graphs, sites=[site]))}
        assert ({"hint-size-in-kernel", "key-not-true-size"} <= kinds) is speaks
        assert bool({"hint-size-in-kernel", "key-not-true-size"} & kinds) is speaks


def test_keys_made_per_symbol_and_lowered_at_a_hint_say_the_sizes_agree_without_recorded_sizes():
    """A session from an Inductor that evaluates each hint per symbol and lowered hint 4096
    to B=S=512 (docs/upstream/hint-per-symbol.patch), read without the sizes kinspect now
    records for it (a production trace, an older recording): the keys hold the rows the
    kernels computed, so neither sizes finding speaks (both did, reading the kernels' M as
    4096² against a key of 262,144 rows)."""
    per_symbol = {64: {"s27": 64, "s52": 64}, 256: {"s27": 256, "s52": 256}, 4096: {"s27": 512, "s52": 512}}
    site = product_rows_site()
    site = replace(site, variants=tuple(replace(v, key=tuple(t.key_at_hint(v.hint, per_symbol[v.hint])
                                                               for t in site.tensors)) for v in site.variants))
    s = Session(environment=Environment("2026-12-01T00:00:00Z", torch="2.11.0", gpu="NVIDIA H200"), sites=[site])
    assert not {"hint-size-in-kernel", "key-not-true-size"} & {f.kind for f in derive_findings(s)}
    assert {"hint-size-in-kernel", "key-not-true-size"} <= {f.kind for f in derive_findings(
        replace(s, sites=[product_rows_site()]))}


def test_an_inductor_that_keys_each_hint_per_symbol_leaves_nothing_to_report():
    """docs/upstream/hint-per-symbol.patch: the key (and grid) at hint 64 hold B*S = 4,096
    rows, as the kernel computes them, with no recorded sizes in the session."""
    site = product_rows_site()
    per_symbol = {v.hint: {"s27": v.hint, "s52": v.hint} for v in site.variants}
    site = replace(site, variants=tuple(replace(v, key=tuple(t.key_at_hint(v.hint, per_symbol[v.hint])
                                                               for t in site.tensors)) for v in site.variants))
    assert _found(site) == []


def _times(site: Site, peaks=None, measurements=(), gpu="synthetic") -> list:
    from kinspect.core.session.model import Graph

    s = Session(environment=Environment("2026-12-01T00:00:00Z", gpu=gpu, peaks=peaks or {}),
                graphs=[Graph("graph_0", sites=(site.name,))], sites=[site], measurements=list(measurements))
    return [f for f in derive_findings(s) if f.kind == "autotune-time-disagrees"]


def test_an_autotune_time_faster_than_the_gpu_can_compute_the_problem_is_named():
    """Stock Inductor's c_attn at hint 4096 (samples/generate.py on the H200): timed at 3.2 µs,
    where 4096 x 768 x 2304 needs 14.7 µs at the H200's data-sheet 989 TFLOP/s (18.3 at the
    790 kinspect measured)."""
    (f,) = _times(product_rows_site(), gpu="NVIDIA H200", peaks={"tflops_bf16": 790.0})
    assert f.variants == (2,) and f.site == "multi_kernel_0"
    assert ("v2 (hint 4096) was autotuned at 3.2 µs, but its key's problem (14.5 GFLOP) takes at least 14.7 µs at "
            "this GPU's bf16 peak (989 TFLOP/s, the NVIDIA H200 data sheet)") in f.message
    (f,) = _times(product_rows_site(), gpu="a GPU kinspect has no data sheet of", peaks={"tflops_bf16": 790.0})
    assert "takes at least 18.3 µs at this GPU's bf16 peak (790 TFLOP/s, measured)" in f.message
    assert _times(product_rows_site()) == []  # a GPU of no data sheet and no measured peak: nothing to hold it to


def test_a_peak_measured_on_a_busy_gpu_does_not_make_a_right_autotune_time_look_too_fast():
    """vit_classify with --one-size-per-symbol, recorded beside seven other programs on one
    H100: the peak read 264 TFLOP/s (792 when the GPU was less busy), and hint 4096's
    197*4096 x 1536 x 384 GEMM, autotuned at 1748.5 µs, needs 3605 µs at 264 but 962 µs at
    the data sheet's 989: a time of its own problem, which the bound must let stand."""
    site = product_rows_site()
    v2 = site.variants[2]
    fits = replace(site, variants=(*site.variants[:2], replace(v2, autotune=tuple(
        replace(r, time_us=20.0) for r in v2.autotune))))
    assert 14.5e9 / 264e12 * 1e6 > 2 * 20.0  # the busy peak alone would call 20 µs too fast
    assert _times(fits, gpu="NVIDIA H100 80GB HBM3", peaks={"tflops_bf16": 264.0}) == []
    assert _times(fits, gpu="unnamed", peaks={"tflops_bf16": 264.0})  # without a data sheet it would speak


def test_an_autotune_time_is_held_to_kinspects_timing_of_the_kernel_at_its_key():
    from kinspect.core.session.runtime import Measurement

    site = product_rows_site()
    v1 = site.variants[1]  # autotuned at 8.0 µs at hint 256
    # Autotuned slower than it runs is no sign of another problem (clocks, the benchmark's overhead).
    for median, speaks in ((30.0, True), (12.0, False), (2.0, False)):
        timed = [Measurement(site.name, v1.key, 1, "cuda_events", median, samples=9)]
        found = _times(site, measurements=timed)
        assert bool(found) is speaks
    (f,) = _times(site, measurements=[Measurement(site.name, v1.key, 1, "cuda_events", 30.0, samples=9)])
    assert "v1 (hint 256) was autotuned at 8.0 µs; kinspect timed the same kernel at its own key at 30.0 µs" in f.message


def test_a_kernel_slowed_by_another_process_on_the_gpu_is_held_by_its_faster_runs():
    """Several programs recorded at once on one GPU: a kernel autotuned at 8 µs whose median
    reads 30 µs, but a fifth of whose runs took 12 µs or less, ran as autotuned when it had
    the GPU; one that never ran under 30 µs did not."""
    from kinspect.core.session.runtime import Measurement

    site = product_rows_site()
    v1 = site.variants[1]
    busy = [Measurement(site.name, v1.key, 1, "cupti", 30.0, p20_us=12.0, p80_us=55.0, samples=50)]
    assert _times(site, measurements=busy) == []
    (f,) = _times(site, measurements=[replace(busy[0], p20_us=30.0)])
    assert ("v1 (hint 256) was autotuned at 8.0 µs; kinspect timed the same kernel at its own key at 30.0 µs or more "
            "in four runs of five") in f.message


def test_a_variant_the_fusion_benchmark_chose_is_held_to_the_fused_time():
    """The kernel kinspect times is the fused one, so where the fusion benchmark chose it, its
    fused time is what it is held to: 25 µs fused against 30 µs timed is one problem, though
    the table's winner took 8 µs alone; 8 µs fused (a choice timed on a smaller problem) is not."""
    from kinspect.core.session.model import AutotuneRow
    from kinspect.core.session.runtime import Measurement

    site = product_rows_site()
    v1 = site.variants[1]
    timed = [Measurement(site.name, v1.key, 1, "cuda_events", 30.0, samples=9)]
    for fused_us, speaks in ((25.0, False), (8.0, True)):
        fused = replace(v1, emitted="triton_mm_7", fused=(AutotuneRow("triton_mm_7", fused_us),))
        found = _times(replace(site, variants=(site.variants[0], fused, *site.variants[2:])), measurements=timed)
        assert bool(found) is speaks
    assert "v1 (hint 256) was fusion-benchmarked at 8.0 µs; kinspect timed the same kernel at its own key at 30.0 µs" \
        in found[0].message


def test_a_fused_time_faster_than_any_choice_alone_at_the_hint_says_the_fusion_benchmark_timed_a_smaller_problem():
    """The MLP training loop with both switches (H100, torch 2.11, one compile): at hint 4096
    the backward GEMM's fusion benchmark timed every choice at 7 to 9 µs, as at hints 64 and
    256, where its autotune table's fastest took 20.6 µs alone; the variant runs triton_mm_212,
    which took 73.8 µs alone there. Hints 64 and 256, fused within reach of their tables, say
    nothing."""
    from pathlib import Path

    from kinspect.core.store import load

    s = load(Path(__file__).parent / "fixtures" / "sessions" / "mlp_train_fixed_h100_2026-12-07.session.json")
    found = {f.site: f for f in derive_findings(s) if f.kind == "autotune-time-disagrees"}
    assert set(found) == {"multi_kernel_0", "multi_kernel_0@graph_1"}
    f = found["multi_kernel_0@graph_1"]
    assert f.variants == (2,)
    assert ("v2 (hint 4096) was fusion-benchmarked at 7.0 µs, where the fastest choice autotuned alone at this hint "
            "took 20.6 µs (triton_mm_225): the fused kernel does that GEMM and its epilogue, so the fusion benchmark "
            "timed a smaller problem") in f.message
    # Against the picked choice's own time alone one slow table entry would speak: a table
    # whose fastest choice is within reach of the fused time says nothing.
    site = s.site("multi_kernel_0@graph_1")
    v2 = site.variants[2]
    near = replace(v2, autotune=(*v2.autotune, replace(v2.autotune[0], name="triton_mm_999", time_us=9.0)))
    s.sites = [replace(site, variants=(*site.variants[:2], near)) if x is site else x for x in s.sites]
    assert "multi_kernel_0@graph_1" not in {f.site for f in derive_findings(s) if f.kind == "autotune-time-disagrees"}


def test_a_table_timed_on_a_busy_gpu_is_held_to_a_larger_hints_and_says_nothing():
    """The MLP training loop with both switches, verified by `advise --run` beside two more
    compiles on one H100: hint 64's whole autotune table read 21.4 to 23.7 µs, slower than hint
    256's (7.0 to 9.3 µs) at four times the rows, so its variant fused at 8.4 µs is no sign of a
    smaller problem; without hint 256's table to hold it to, the busy table would speak."""
    from pathlib import Path

    from kinspect.core.store import load

    s = load(Path(__file__).parent / "fixtures" / "sessions" / "mlp_train_busy_gpu_h100_2026-12-07.session.json")
    site = s.site("multi_kernel_0")
    v0 = site.variants[0]
    assert min(r.time_us for r in v0.autotune if r.time_us) > 2 * 8.4 + 1
    assert not [f for f in derive_findings(s) if f.kind == "autotune-time-disagrees"]
    alone = replace(site, variants=(v0,))
    (f,) = _times(alone)
    assert ("v0 (hint 64) was fusion-benchmarked at 8.4 µs, where the fastest choice autotuned alone at this hint "
            "took 21.4 µs") in f.message
    # Where the larger hint's table is the faster one, the finding says which it was held to.
    fast = replace(v0, fused=tuple(replace(r, time_us=1.0) for r in v0.fused))
    v1 = site.variants[1]
    slower = replace(v1, autotune=tuple(replace(r, time_us=r.time_us and 2 * r.time_us) for r in v1.autotune))
    (f,) = _times(replace(site, variants=(fast, slower, *site.variants[2:])))
    assert "v0 (hint 64) was fusion-benchmarked at 1.0 µs, where the fastest choice autotuned alone at hint 256's " \
        "larger problem took 14.1 µs (triton_mm_44)" in f.message
