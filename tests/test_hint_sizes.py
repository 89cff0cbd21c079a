"""`--one-size-per-symbol` on the CPU: the assignment rule, and Inductor's own
`SizeVarAllocator`, `SIMDScheduling._make_shape_cache_key`, `AlgorithmSelectorCache.get_inputs`
and `TensorMeta` driven on a real `GraphLowering` whose FX graph holds a GEMM with rows
`B*S`: every size evaluated at a hint agrees with one size per symbol, and outside the mode
Inductor's own rule (the hint for any whole expression) is untouched."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kinspect.core.dispatch.hint_sizes import Operand, Problem, Refusal, aligned, assign
from kinspect.core.dispatch.symbolic import SizeExpr

ROWS = (SizeExpr(("mul", "s0", "s1")), SizeExpr(768))
"""x of `x @ w` as (B*S, 768) rows."""


def _gemm(rows_wide: int = 768, out_wide: int = 2304) -> Problem:
    bs = SizeExpr(("mul", "s0", "s1"))
    return Problem("mm (c_attn)", (Operand((bs, SizeExpr(rows_wide)), 2), Operand((SizeExpr(rows_wide), SizeExpr(out_wide)), 2),
                                   Operand((bs, SizeExpr(out_wide)), 2)))


def test_each_symbol_takes_the_hint_within_its_range():
    ranges = {"s0": (2, None), "s1": (2, 1024)}
    assert dict(assign(64, ranges, [_gemm()]).values) == {"s0": 64, "s1": 64}
    assert dict(assign(4096, {"s0": (2, None)}, []).values) == {"s0": 4096}
    capped = assign(4096, ranges, [])
    assert dict(capped.values) == {"s0": 4096, "s1": 1024} and capped.lowered_for is None  # S's own maximum
    assert dict(assign(1, {"s0": (1, None)}, []).values) == {"s0": 2}  # Dynamo specialises 0 and 1
    # An int Dynamo made a symbol with a range of one value below 2 (GPT-2's loss: an ignore
    # index of -100, a logits_to_keep of 0) keeps it at every hint.
    assert dict(assign(4096, {"s42": (-100, -100), "s55": (0, 0), "s0": (2, None)}, []).values) == {
        "s42": -100, "s55": 0, "s0": 4096}


def test_a_gemm_that_would_not_fit_lowers_every_symbol_together():
    a = assign(4096, {"s0": (2, None), "s1": (2, None)}, [_gemm()])
    # B = S = 4096: 16.7M rows need 103 GB; halving both until x, w and out fit 4 GiB gives 512.
    assert dict(a.values) == {"s0": 512, "s1": 512}
    assert a.lowered_for == ("lowered from 4096: mm (c_attn) needed 103.1 GB and a tensor of more than 2**31 elements "
                             "(32-bit indexing) at the hint, and fits at 1.6 GB (budget 4.3 GB)")
    assert a.text({"s0": "B", "s1": "S"}).startswith("hint 4096: B=512 S=512 (lowered from 4096")
    # A symbol's lower bound holds however much the rest must shrink.
    tight = assign(4096, {"s0": (2, None), "s1": (300, None)}, [_gemm()], budget=1 << 20)
    assert tight.values["s1"] == 300 and tight.values["s0"] == 2 and "is as low as the sizes go" in tight.lowered_for


def test_no_tensor_of_a_tuned_gemm_passes_32_bit_indexing():
    """Inductor indexes in 32 bits where the example sizes allow, and guards on it: a problem
    past 2**31 elements is none the compiled graph could run (and its kernel reads out of
    bounds: the H200 faulted on a 2,097,152 x 1536 output), however much memory there is."""
    wide = _gemm(384, 1536)
    a = assign(4096, {"s0": (2, None), "s1": (2, 512)}, [wide], budget=1 << 50)
    # The hint halved, S held at its 512 positions while the hint is above them: the BERT
    # loop's sizes at hint 4096, as the upstream patch has Inductor choose them.
    assert dict(a.values) == {"s0": 2048, "s1": 512} and "32-bit indexing" in a.lowered_for
    assert 2048 * 512 * 1536 <= 2**31 - 1 < 4096 * 512 * 1536


def test_a_graph_that_could_not_run_at_a_hints_sizes_is_tuned_where_it_could_else_at_its_examples():
    """What only the graph knows (its guards, its other tensors' 32-bit indexing) comes in
    as `runs`: the hint is halved until it holds, and where no scale does (guards that tie
    symbols at different scales), the example sizes, a problem the graph always runs."""
    ranges = {"s0": (2, None), "s1": (2, None)}

    def scores(env):  # an attention-score tensor (B, 12, S, S) past 32-bit indexing
        if env["s0"] * 12 * env["s1"] ** 2 > 2**31 - 1:
            return Refusal("a tensor of the graph passes 2**31 elements", frozenset(env))
        return None

    a = assign(4096, ranges, [], runs=scores)
    assert dict(a.values) == {"s0": 512, "s1": 512}
    assert a.lowered_for == "lowered from 4096: a tensor of the graph passes 2**31 elements at the hint"

    def product(env):  # B * S = 32768 only: no one size, and no size with either held at its example
        return None if env["s0"] * env["s1"] == 32768 else Refusal("a guard of the graph (Eq(s0*s1, 32768)) fails",
                                                                    frozenset(env))

    never = assign(64, ranges, [], runs=product, examples={"s0": 4, "s1": 8192})
    assert dict(never.values) == {"s0": 4, "s1": 8192} and never.held == ()
    assert never.lowered_for.startswith("the example sizes: a guard") and never.at_examples


def test_where_no_one_size_runs_the_fewest_symbols_are_held_at_their_examples_and_the_rest_take_the_hint():
    """A causal-LM loss's backward graph (GPT-2's training loop, CPU) guards its vocabulary
    above 4096 and equal to the logits' width, and its rows at most 4096: no one size per
    symbol holds, so it fell back to its example sizes at every hint. Holding the vocabulary
    and the width at their example, 8192, lets the batch and the sequence take the hint."""
    sizes = ("B", "S", "V", "W")
    ranges = {"B": (2, None), "S": (2, None), "V": (4097, None), "W": (2, None)}
    examples = {"B": 4, "S": 64, "V": 8192, "W": 8192}

    def loss_backward(env):
        b, s, v, w = (env[n] for n in sizes)
        failing = [(f"a guard of the graph ({text}) fails", names) for ok, text, names in (
            ((b * s * w) % v == 0, "Eq(Mod(B*S*W, V), 0)", "BSVW"), (v == w, "Eq(V, W)", "VW"),
            (b * s <= 4096, "B*S <= 4096", "BS")) if not ok]
        return Refusal(failing[0][0], frozenset(n for _, names in failing for n in names)) if failing else None

    at = {h: assign(h, ranges, [], runs=loss_backward, examples=examples) for h in (16, 23, 4096)}
    assert {h: dict(a.values) for h, a in at.items()} == {
        16: {"B": 16, "S": 16, "V": 8192, "W": 8192}, 23: {"B": 23, "S": 23, "V": 8192, "W": 8192},
        # At 4096 the rows may not pass 4096: the highest scale where holding lets the graph
        # run is 1024, with the batch held at its example too (the probe's sizes for GPT-2's).
        4096: {"B": 4, "S": 1024, "V": 8192, "W": 8192}}
    assert at[16].held == ("V", "W") and at[4096].held == ("B", "V", "W") and not at[16].at_examples
    assert at[16].text({"V": "vocab_size"}) == (
        "hint 16: B=16 S=16 W=8192 vocab_size=8192 (vocab_size, W held at the example sizes, the rest at the hint: "
        "a guard of the graph (Eq(Mod(B*S*W, V), 0)) fails at the hint)")
    assert at[4096].lowered_for.startswith("the rest lowered from 4096: a guard")


def test_a_guard_of_alignment_rounds_the_hint_to_its_nearest_multiple_rather_than_halving_it():
    """GPT-2's backward graph guards `Eq(Mod(s70, 8), 0)` on its sequence length. At hint 23
    halving gives 11, 5 and 2, none a multiple of 8, and the graph fell back to its example
    sizes (4 x 64, the 256 rows hint 16 tunes too): its hint-23 variant duplicated hint 16's,
    keyed where it drew 1,024-row batches from hint 32's (H100, one compile). 24 holds."""
    ranges = {"s72": (2, None), "s70": (2, None)}

    def multiple_of_8(env):
        return None if env["s70"] % 8 == 0 else Refusal("a guard of the graph (Eq(Mod(s70, 8), 0)) fails",
                                                         frozenset({"s70"}))

    a = assign(23, ranges, [], runs=multiple_of_8, examples={"s72": 4, "s70": 64})
    assert dict(a.values) == {"s72": 24, "s70": 24}
    assert a.text({"s72": "B", "s70": "S"}) == (
        "hint 23: B=24 S=24 (rounded from 23: a guard of the graph (Eq(Mod(s70, 8), 0)) fails at the hint)")
    # A hint the guard holds at is left alone, and a halved one is rounded as the hint is.
    assert dict(assign(64, ranges, [], runs=multiple_of_8).values) == {"s72": 64, "s70": 64}
    tuned = assign(3000, {"s0": (2, None), "s1": (2, None)}, [_gemm()],
                   runs=lambda env: None if env["s1"] % 8 == 0 else Refusal("a guard of the graph fails"))
    assert dict(tuned.values) == {"s0": 752, "s1": 752} and tuned.lowered_for.startswith("lowered from 3000: mm (c_attn)")
    assert aligned(23) == [23, 24, 22, 20, 32, 16] and aligned(2) == [2] and aligned(96) == [96, 128, 64]


def test_a_size_kinspect_cannot_evaluate_counts_as_too_large():
    opaque = Problem("mm", (Operand((SizeExpr(("opaque", "f(s0)")),), 2),))
    assert dict(assign(64, {"s0": (2, None)}, [opaque], budget=1 << 40).values) == {"s0": 2}


# ---------------------------------------------------------------- Inductor's own code

torch = pytest.importorskip("torch")


def _fx_with_gemm(env, b, s, scores=False):
    """An FX module `x @ w` with x (B*S, 768), w (768, 2304), as Dynamo leaves it for Inductor
    (with `scores`, an attention-score input (B, 48, S, S) beside them)."""
    import torch.fx
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode(shape_env=env)
    bi, si = env.create_symintnode(b, hint=8), env.create_symintnode(s, hint=128)
    with mode:
        x = torch.empty(bi * si, 768, dtype=torch.bfloat16)
        w = torch.empty(768, 2304, dtype=torch.bfloat16)
        y = torch.mm(x, w)
        attention = torch.empty(bi, 48, si, si, dtype=torch.bfloat16)
    g = torch.fx.Graph()
    px, pw = g.placeholder("x"), g.placeholder("w")
    px.meta["val"], pw.meta["val"] = x, w
    if scores:
        g.placeholder("scores").meta["val"] = attention
    mm = g.call_function(torch.ops.aten.mm.default, (px, pw))
    mm.meta["val"] = y
    g.output(mm)
    return torch.fx.GraphModule({}, g)


@pytest.fixture()
def lowered():
    """A real GraphLowering, made while the mode is on (or off), installed as V.graph."""
    from contextlib import ExitStack

    from torch._dynamo.source import ConstantSource
    from torch._inductor.graph import GraphLowering
    from torch._inductor.virtualized import V
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    from kinspect.inductor.hooks.fixes import hint_sizes

    def make(mode: bool, scores: bool = False):
        env = ShapeEnv()
        b = env.create_symbol(8, ConstantSource("B"))
        s = env.create_symbol(128, ConstantSource("S"))
        stack = ExitStack()
        if mode:
            stack.enter_context(hint_sizes.one_size_per_symbol())
        graph = GraphLowering(_fx_with_gemm(env, b, s, scores), shape_env=env)
        stack.enter_context(V.set_graph_handler(graph))
        stacks.append(stack)
        return SimpleNamespace(graph=graph, b=b, s=s, sv=graph.sizevars)

    stacks = []
    yield make
    for stack in reversed(stacks):
        stack.close()


def test_every_size_at_a_hint_is_one_size_per_symbol(lowered):
    g = lowered(True)
    b, s, sv = g.b, g.s, g.sv
    assert sv.optimization_hint_with_override(b * s, 64) == 4096  # rows: 64 * 64, not 64
    assert sv.optimization_hint_with_override(768 * s, 64) == 49152  # a stride, as the kernel indexes
    assert sv.optimization_hints_with_override([b * s, 768], 256) == (65536, 768)
    assert sv.optimization_hint_with_override(b * s, 4096) == 512 * 512  # lowered to fit (x, w, out > 4 GiB)
    assert sv.optimization_hint_with_override(5, 4096) == 5
    assert sv.optimization_hint_with_override(b * s, None) == 8 * 128  # no hint: the example sizes
    from kinspect.inductor.hooks.fixes import hint_sizes

    bn, sn = str(b), str(s)
    assert [(a.hint, dict(a.values)) for a in hint_sizes.assignments(g.graph)] == [
        (64, {bn: 64, sn: 64}), (256, {bn: 256, sn: 256}), (4096, {bn: 512, sn: 512})]
    assert hint_sizes.assignments(g.graph)[2].lowered_for.startswith("lowered from 4096: mm (mm_default) needed 103.1 GB")


def test_the_graphs_guards_and_its_other_tensors_bound_the_sizes(lowered):
    """What the assignment asks of the graph: a guard present at the first ask (S <= 200,
    a model's positions) holds S there while B halves; a guard no single scale holds
    (B != S, tying them apart) holds S at its example while B takes the hint; and guards
    that only the example sizes hold (S a multiple of 16 B, and no more) leave a hint
    there."""
    import sympy

    from kinspect.inductor.hooks.fixes import hint_sizes

    g = lowered(True)
    g.sv.check(sympy.Ne(g.b, g.s))  # true at the examples, B = 8 and S = 128
    assert g.sv.optimization_hint_with_override(g.b * g.s, 64) == 64 * 128
    (a,) = hint_sizes.assignments(g.graph)
    assert a.held == (str(g.s),) and a.lowered_for == f"the rest at the hint: a guard of the graph (Ne({g.b}, {g.s})) fails at the hint"
    pinned = lowered(True)
    pinned.sv.check(sympy.Eq(sympy.Mod(pinned.s, 16 * pinned.b), 0))
    pinned.sv.check(sympy.Le(pinned.s, 16 * pinned.b))
    assert pinned.sv.optimization_hint_with_override(pinned.b * pinned.s, 64) == 8 * 128
    (a,) = hint_sizes.assignments(pinned.graph)
    assert a.at_examples and a.why_at_examples.startswith(f"a guard of the graph (Eq(Mod({pinned.s}, 16*{pinned.b}), 0))")
    bounded = lowered(True)
    bounded.sv.check_leq(bounded.s, 200)
    assert bounded.sv.optimization_hint_with_override(bounded.s, 4096) == 200
    # B = 4096 would need 5.0 GB for x and out, past the 4 GiB budget without a GPU; B = 2048 fits.
    assert bounded.sv.optimization_hint_with_override(bounded.b, 4096) == 2048


def test_a_tensor_of_the_graph_past_32_bit_indexing_lowers_the_hint_though_no_gemm_needs_it(lowered):
    """Attention scores (B, 48, S, S) take no part in the GEMM, but Inductor indexes them in
    32 bits at the example sizes and guards on it: the graph never runs where they pass
    2**31 elements, so no hint is tuned there (kinspect's rule looked at the GEMMs alone
    and tuned B = S = 512 at hint 4096, 6.4e9 scores)."""
    g = lowered(True, scores=True)
    assert g.sv.optimization_hint_with_override(g.b, 4096) == 256  # 256 * 48 * 256**2 < 2**31 < 512 * 48 * 512**2
    from kinspect.inductor.hooks.fixes import hint_sizes

    assert hint_sizes.assignments(g.graph)[0].lowered_for.startswith(
        "lowered from 4096: mm (mm_default) needed 103.1 GB")  # the first reason at the hint is the GEMM's
    assert g.sv.optimization_hint_with_override(g.b, 256) == 256


def test_a_precomputed_size_is_expanded_before_it_is_evaluated(lowered):
    import sympy

    g = lowered(True)
    ks0 = sympy.Symbol("ks0", integer=True, positive=True)
    g.sv.inv_precomputed_replacements[ks0] = g.b * g.s
    assert g.sv.optimization_hint_with_override(2 * ks0, 64) == 8192


def test_outside_the_mode_inductors_rule_stands(lowered):
    g = lowered(False)
    assert g.sv.optimization_hint_with_override(g.b * g.s, 64) == 64
    assert g.sv.optimization_hint_with_override(768 * g.s, 64) == 64
    from kinspect.inductor.hooks.fixes import hint_sizes

    assert hint_sizes.assignments(g.graph) == ()


def _key(graph, hint):
    """Inductor's own `_make_shape_cache_key` for the GEMM `(B*S, 768) @ (768, 2304)`."""
    from torch._inductor.codegen.simd import SIMDScheduling

    shapes = ((graph.b * graph.s, 768), (768, 2304), (graph.b * graph.s, 2304))
    sched = SimpleNamespace(_get_multikernel_shapes=lambda node: shapes)
    return SIMDScheduling._make_shape_cache_key(sched, object(), hint)


def test_the_key_is_the_problem_each_variant_was_tuned_on(lowered):
    assert _key(lowered(False), 64) == ((64, 768), (768, 2304), (64, 2304))  # Inductor: the hint per expression
    assert _key(lowered(True), 64) == ((4096, 768), (768, 2304), (4096, 2304))
    assert _key(lowered(True), 4096) == ((262144, 768), (768, 2304), (262144, 2304))


def test_the_runtime_choice_measures_distance_to_the_tuned_problems(lowered, monkeypatch):
    """Inductor's own SizeHintMultiKernelCall, keyed by the mode's keys, runs for 800 rows
    (B=4, S=200) the variant tuned on 4,096 rows, and for 200,000 rows the one tuned on 262,144
    (stock keys would take the hint-4096 variant for both: 800 rows is nearer 4,096 than 256)."""
    monkeypatch.setenv("TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE", "1")
    from torch._inductor.codegen import multi_kernel

    from standins import StandIn

    g = lowered(True)
    keys = [_key(g, h) for h in (64, 256, 4096)]
    ran: list[str] = []
    call = multi_kernel.SizeHintMultiKernelCall(
        "multi_kernel_0", {k: StandIn(f"v{i}", ran) for i, k in enumerate(keys)}, {i: [slice(0, 3)] for i in range(3)})
    for rows in (800, 200_000):
        call.run(*(torch.empty(shape, device="meta") for shape in ((rows, 768), (768, 2304), (rows, 2304))))
    assert ran == ["v0", "v2"]


def _gemm_nodes(g):
    from torch._inductor import ir

    cpu, bf = torch.device("cpu"), torch.bfloat16
    x = ir.Buffer(name="x", layout=ir.FixedLayout(cpu, bf, [g.b, g.s, 768], [768 * g.s, 768, 1]))
    xv = ir.ReinterpretView(data=x, layout=ir.FixedLayout(cpu, bf, [g.b * g.s, 768], [768, 1]))
    w = ir.Buffer(name="w", layout=ir.FixedLayout(cpu, bf, [768, 64], [64, 1]))
    out = ir.FixedLayout(cpu, bf, [g.b * g.s, 64], [64, 1])
    return [xv, w], out


def test_inductors_benchmark_tensors_are_the_tuned_problem_and_fit_what_the_kernel_reads(lowered):
    from torch._inductor.select_algorithm import AlgorithmSelectorCache

    from kinspect.inductor.hooks import benchmark_tensors

    g = lowered(True)
    inputs, out = _gemm_nodes(g)
    seen = []
    with benchmark_tensors.watching(seen.append):
        args = AlgorithmSelectorCache.get_inputs([], inputs, out, None, hint_override=64)
        lowered_args = AlgorithmSelectorCache.get_inputs([], inputs, out, None, hint_override=4096)
    tensors = [*args.triton.input_tensors, args.triton.output_tensor]
    assert [tuple(t.shape) for t in tensors] == [(64, 64, 768), (768, 64), (4096, 64)]  # x as its base (B, S, 768)
    assert tensors[0].stride() == (49152, 768, 1)
    assert tuple(lowered_args.triton.output_tensor.shape) == (512 * 512, 64)  # B = S = 512 at hint 4096
    assert seen == []  # kinspect's own check finds every tensor holding what its kernel reads, lowered sizes too


def test_the_autotune_subprocess_is_described_at_the_hints_sizes(lowered):
    from torch._inductor.autotune_process import TensorMeta

    from kinspect.inductor.hooks.fixes import hint_sizes

    g = lowered(True)
    (xv, w), out = _gemm_nodes(g)
    g.graph.graph_inputs["x"] = xv.data
    bmreq = SimpleNamespace(input_tensor_meta=TensorMeta.from_irnodes([xv.data, w]),
                            output_tensor_meta=TensorMeta.from_irnodes(out))
    assert tuple(bmreq.input_tensor_meta[0].sizes) == (8, 128, 768)  # Inductor's: the example size, whatever the hint
    hint_sizes._describe_at_hint(bmreq, out, 64)
    assert [tuple(m.sizes) for m in bmreq.input_tensor_meta] == [(64, 64, 768), (768, 64)]
    assert tuple(bmreq.input_tensor_meta[0].strides) == (49152, 768, 1)
    assert tuple(bmreq.output_tensor_meta.sizes) == (4096, 64)
