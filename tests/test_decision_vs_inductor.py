"""kinspect's decisions against Inductor's own SizeHintMultiKernelCall, case by case.

The reference is the real class from the installed torch, driven through its `run` with
stand-in kernels and meta tensors, so these tests fail the day Inductor changes its rule
(or kinspect drifts from it). Hypothesis generates the cases, derandomized so CI is
deterministic: 4,000 examples of one to three runtime keys each, weighted towards
where dispatch is delicate: ties at geometric midpoints, near ties that only the order
of additions decides, sizes 0 and 1, keys whose lengths or ranks do not line up, and
variants without a key.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kinspect.core.dispatch.decision import decide
from kinspect.core.dispatch.shapes import MAX_SIZE, Key

torch = pytest.importorskip("torch")
multi_kernel = pytest.importorskip("torch._inductor.codegen.multi_kernel")

NO_KEY = 2**62
SETTINGS = dict(
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(autouse=True, scope="module")
def _no_multi_kernel_cache():
    """Without it, SizeHintMultiKernelCall.__init__ reads a disk cache keyed by real kernels."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE", "1")
        yield


class StandIn:
    """What SizeHintMultiKernelCall needs of a compiled kernel: a name and `run`."""

    def __init__(self, index: int) -> None:
        self.inductor_meta = {"kernel_name": f"stand_in_{index}"}
        self.calls = 0

    def run(self, *args, **kwargs) -> None:
        self.calls += 1


class Shaped:
    """An argument with only a `.shape`, for keys whose element count torch cannot hold
    (a meta tensor of 2**62 x 2**62 overflows); `run` reads nothing else."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape


def _arg(shape: tuple[int, ...]):
    try:
        return torch.empty(shape, dtype=torch.uint8, device="meta")
    except RuntimeError:
        return Shaped(shape)


def _real_call(hint_keys: Sequence[Key | None], n_tensors: int):
    kernels = {k: StandIn(i) for i, k in enumerate(hint_keys)}
    assert len(kernels) == len(hint_keys), "Inductor keys variants by a dict: keys must differ"
    arg_index = {i: [slice(0, n_tensors)] for i in range(len(hint_keys))}
    return multi_kernel.SizeHintMultiKernelCall("multi_kernel_0", kernels, arg_index)


def _expected_mismatch(runtime: Key, hint: Key | None) -> bool:
    if hint is None or len(runtime) != len(hint):
        return True
    return any(len(a) != len(b) for a, b in zip(runtime, hint))


def check_against_inductor(hint_keys: Sequence[Key | None], runtimes: Sequence[Key]) -> None:
    """Each runtime key: same distances (1e-9), same pick, mismatches flagged."""
    call = _real_call(hint_keys, max(len(r) for r in runtimes))
    for runtime in runtimes:
        call._shape_cache.clear()
        before = [k.calls for k in call.kernels]
        call.run(*(_arg(shape) for shape in runtime), stream=None)
        picked = call.picked_kernel
        ran = [i for i, k in enumerate(call.kernels) if k.calls != before[i]]
        assert ran == [picked], "Inductor's run must launch exactly the kernel it picked"

        decision = decide(hint_keys, runtime)
        want = [NO_KEY if k is None else call._dist_heuristic(runtime, k) for k in hint_keys]
        got = [s.distance for s in decision.scores]
        assert got == pytest.approx(want, abs=1e-9, rel=0), (hint_keys, runtime)
        assert decision.chosen == picked, (hint_keys, runtime, got)
        assert picked in decision.tied and decision.tied[0] == picked
        flagged = [s.mismatch is not None for s in decision.scores]
        assert flagged == [_expected_mismatch(runtime, k) for k in hint_keys]


# ---------------------------------------------------------------- strategies

INTERESTING = [0, 1, 2, 3, 7, 8, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 1023, 1024, 1025, 4095, 4096, 8192, 2**31, MAX_SIZE]
SIZE = st.one_of(
    st.sampled_from(INTERESTING),
    st.integers(0, 1 << 16),
    st.integers(0, 1 << 16),
    st.integers(0, MAX_SIZE),
)
TINY = st.sampled_from([0, 1, 2])
LAYOUT = st.lists(st.integers(0, 4), min_size=1, max_size=4)


def key_of(layout: Sequence[int], size=SIZE):
    return st.tuples(*(st.tuples(*([size] * rank)) for rank in layout))


@st.composite
def same_layout_sites(draw, size=SIZE, with_none: bool = True):
    """A site whose variants and runtime keys share one layout, maybe one keyless variant."""
    layout = draw(LAYOUT)
    keys: list[Key | None] = list(draw(st.lists(key_of(layout, size), min_size=1, max_size=8, unique=True)))
    if with_none and draw(st.integers(0, 3)) == 0:
        keys.insert(draw(st.integers(0, len(keys))), None)
    runtimes = draw(st.lists(key_of(layout, size), min_size=1, max_size=3))
    return keys, runtimes


@st.composite
def mixed_layout_sites(draw):
    """Variants of differing tensor counts and ranks, runtime keys of yet others."""
    keys = draw(st.lists(LAYOUT.flatmap(key_of), min_size=1, max_size=6, unique=True))
    runtimes = draw(st.lists(LAYOUT.flatmap(key_of), min_size=1, max_size=3))
    return keys, runtimes


SYMBOLIC = None  # a template entry that takes the hint (or the runtime size)


@st.composite
def templates(draw):
    """A key template: per tensor, dims that are constants or the dynamic symbol."""
    dims = st.one_of(st.just(SYMBOLIC), st.sampled_from([1, 64, 1024, 4096]))
    template = draw(st.lists(st.lists(dims, min_size=1, max_size=3), min_size=1, max_size=4))
    if all(d is not SYMBOLIC for t in template for d in t):
        template[0][0] = SYMBOLIC
    return template


def substitute(template, value: int) -> Key:
    return tuple(tuple(value if d is SYMBOLIC else d for d in t) for t in template)


@st.composite
def midpoint_sites(draw):
    """Two hints c*2**i and c*2**j, runtime at their geometric midpoint c*2**((i+j)/2).

    With c = 1 every log is exact and the two distances tie bit for bit; with odd c > 1
    the logs round, and whether they still tie is for Inductor's arithmetic to say.
    """
    template = draw(templates())
    c = draw(st.sampled_from([1, 1, 1, 3, 5, 7, 11, 13, 125]))
    i = draw(st.integers(0, 24))
    half = draw(st.integers(1, 8))
    lo, mid, hi = c << i, c << (i + half), c << (i + 2 * half)
    hints = [lo, hi] if draw(st.booleans()) else [hi, lo]
    farther = [h for h in (c << (i + 4 * half + 1), c << (i + 6 * half)) if h <= MAX_SIZE]
    others = draw(st.lists(st.sampled_from(farther), max_size=2, unique=True)) if farther else []
    hints = hints + others if draw(st.booleans()) else others + hints
    keys = [substitute(template, h) for h in hints]
    return keys, [substitute(template, mid)], c, min(hints.index(lo), hints.index(hi))


@st.composite
def near_tie_sites(draw):
    """Variants that permute the runtime sizes by some σ and by σ⁻¹.

    Both distances are sums of the same terms |log2 v_i - log2 v_σ(i)| in a different
    order, equal in real arithmetic, so only the order of floating-point additions
    (per tensor first, then across tensors) decides the winner: this is where a model
    that sums differently from Inductor picks differently.
    """
    values = draw(st.lists(st.integers(1, 1 << 20), min_size=3, max_size=9, unique=True))
    n = len(values)
    cuts = sorted(draw(st.sets(st.integers(1, n - 1), max_size=3)))
    bounds = [0, *cuts, n]

    def split(seq):
        return tuple(tuple(seq[a:b]) for a, b in zip(bounds, bounds[1:]))

    keys = []
    for perm in draw(st.lists(st.permutations(range(n)), min_size=1, max_size=3)):
        inverse = sorted(range(n), key=perm.__getitem__)
        for p in (perm, inverse):
            key = split([values[i] for i in p])
            if key not in keys:
                keys.append(key)
    return keys, [split(values)]


# ---------------------------------------------------------------- the cases


@settings(max_examples=800, **SETTINGS)
@given(same_layout_sites())
def test_random_sites_match_inductor(site):
    check_against_inductor(*site)


@settings(max_examples=400, **SETTINGS)
@given(same_layout_sites(size=TINY))
def test_zero_and_one_sized_dims_match_inductor(site):
    # log2 maps 0 to -1 and 1 to 0: at this scale nearly every pair of variants ties.
    check_against_inductor(*site)


@settings(max_examples=550, **SETTINGS)
@given(mixed_layout_sites())
def test_mismatched_layouts_match_inductor_and_are_flagged(site):
    check_against_inductor(*site)


@settings(max_examples=750, **SETTINGS)
@given(midpoint_sites())
def test_geometric_midpoints_match_inductor(site):
    keys, runtimes, c, first_of_pair = site
    check_against_inductor(keys, runtimes)
    if c == 1:
        decision = decide(keys, runtimes[0])
        assert decision.is_tie and decision.chosen == first_of_pair


@settings(max_examples=650, **SETTINGS)
@given(templates(), st.lists(st.sampled_from([16, 64, 128, 256, 1024, 4096, 8192]), min_size=1, max_size=6, unique=True), st.lists(SIZE, min_size=1, max_size=3))
def test_hint_substituted_sites_match_inductor(template, hints, values):
    # Keys built as Inductor builds them: every dynamic dim takes the hint.
    keys = [substitute(template, h) for h in hints]
    check_against_inductor(keys, [substitute(template, v) for v in values])


@settings(max_examples=250, **SETTINGS)
@given(st.integers(0, 7), same_layout_sites(with_none=False))
def test_keyless_variant_matches_inductor(position, site):
    keys, runtimes = site
    keys = list(keys)
    keys.insert(min(position, len(keys)), None)
    check_against_inductor(keys, runtimes)


@settings(max_examples=600, **SETTINGS)
@given(near_tie_sites())
def test_near_ties_decided_by_addition_order_match_inductor(site):
    check_against_inductor(*site)


# ---------------------------------------------------------------- named cases


def test_tie_at_128_between_hints_64_and_256_goes_to_the_first():
    keys = [((64, 1024), (64, 4096)), ((256, 1024), (256, 4096))]
    check_against_inductor(keys, [((128, 1024), (128, 4096))])
    decision = decide(keys, ((128, 1024), (128, 4096)))
    assert decision.tied == (0, 1) and decision.chosen == 0
    assert decide(keys[::-1], ((128, 1024), (128, 4096))).chosen == 0


def test_multi_dim_tie_where_each_variant_wins_one_dim():
    keys = [((64, 256),), ((256, 64),)]
    check_against_inductor(keys, [((128, 128),)])
    assert decide(keys, ((128, 128),)).tied == (0, 1)


def test_only_a_keyless_variant_is_picked_at_two_to_the_62():
    check_against_inductor([None], [((5,),)])
    decision = decide([None], ((5,),))
    assert decision.chosen == 0 and decision.scores[0].distance == NO_KEY


def test_a_shorter_runtime_key_is_compared_on_its_prefix_and_flagged():
    keys = [((64, 1024), (1024, 4096), (64, 4096)), ((4096, 1024), (1024, 4096), (4096, 4096))]
    runtime = ((4000, 1024), (1024, 4096))
    check_against_inductor(keys, [runtime])
    decision = decide(keys, runtime)
    assert decision.chosen == 1
    assert "Inductor compares only the first 2" in decision.scores[0].mismatch


def test_sizes_are_summed_per_tensor_first_as_inductor_does():
    # Equal in real arithmetic; Inductor's per-tensor sums make variant 0 nearer by one
    # ulp, where one flat left-to-right sum over all dims would pick variant 1.
    runtime = ((66,), (11, 1173))
    keys = [((1173,), (66, 11)), ((11,), (1173, 66))]
    check_against_inductor(keys, [runtime])
    decision = decide(keys, runtime)
    assert decision.chosen == 0 and not decision.is_tie
    assert decision.scores[0].distance < decision.scores[1].distance
