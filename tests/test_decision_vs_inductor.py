"""kinspect's decisions against Inductor's own SizeHintMultiKernelCall, case by case.

The reference is the real class from the installed torch, driven through its `run` with
stand-in kernels and meta tensors, so these tests fail the day Inductor changes its rule
(or kinspect drifts from it). Seeded draws make the cases, the same on every run: 4,000
of one to three runtime keys each, weighted towards
where dispatch is delicate: ties at geometric midpoints, near ties that only the order
of additions decides, sizes 0 and 1, keys whose lengths or ranks do not line up, and
variants without a key.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from kinspect.core.dispatch.decision import decide
from kinspect.core.dispatch.shapes import MAX_SIZE, Key

torch = pytest.importorskip("torch")
multi_kernel = pytest.importorskip("torch._inductor.codegen.multi_kernel")

NO_KEY = 2**62


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


# ---------------------------------------------------------------- generators

INTERESTING = [0, 1, 2, 3, 7, 8, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 1023, 1024, 1025, 4095, 4096, 8192, 2**31, MAX_SIZE]


class Cases(random.Random):
    """Seeded draws of the cases (the same ones on every run): a quarter of sizes from
    INTERESTING, half up to 2**16, a quarter up to MAX_SIZE. Plain draws, not Hypothesis
    strategies: drawing a case through Hypothesis took twice as long as checking it."""

    def size(self) -> int:
        r = self.random()
        return self.choice(INTERESTING) if r < 0.25 else self.randint(0, 1 << 16) if r < 0.75 else self.randint(0, MAX_SIZE)

    def tiny(self) -> int:
        return self.choice((0, 1, 2))

    def layout(self) -> list[int]:
        return [self.randint(0, 4) for _ in range(self.randint(1, 4))]

    def key(self, layout: Sequence[int], size=None) -> Key:
        size = size or self.size
        return tuple(tuple(size() for _ in range(rank)) for rank in layout)

    def keys(self, draw, least: int, most: int) -> list:
        """Distinct draws (a repeat is dropped: Inductor keys its variants by a dict)."""
        return list(dict.fromkeys(draw() for _ in range(self.randint(least, most))))

    def same_layout_site(self, size=None, with_none: bool = True) -> tuple[list[Key | None], list[Key]]:
        """A site whose variants and runtime keys share one layout, maybe one keyless variant."""
        layout = self.layout()
        keys: list[Key | None] = list(self.keys(lambda: self.key(layout, size), 1, 8))
        if with_none and self.randint(0, 3) == 0:
            keys.insert(self.randint(0, len(keys)), None)
        return keys, [self.key(layout, size) for _ in range(self.randint(1, 3))]

    def mixed_layout_site(self) -> tuple[list[Key], list[Key]]:
        """Variants of differing tensor counts and ranks, runtime keys of yet others."""
        keys = self.keys(lambda: self.key(self.layout()), 1, 6)
        return keys, [self.key(self.layout()) for _ in range(self.randint(1, 3))]

    def template(self) -> list[list[int | None]]:
        """A key template: per tensor, dims that are constants or the dynamic symbol."""
        template = [[SYMBOLIC if self.random() < 0.5 else self.choice((1, 64, 1024, 4096))
                     for _ in range(self.randint(1, 3))] for _ in range(self.randint(1, 4))]
        if all(d is not SYMBOLIC for t in template for d in t):
            template[0][0] = SYMBOLIC
        return template

    def midpoint_site(self) -> tuple[list[Key], list[Key], int, int]:
        """Two hints c*2**i and c*2**j, runtime at their geometric midpoint c*2**((i+j)/2).

        With c = 1 every log is exact and the two distances tie bit for bit; with odd c > 1
        the logs round, and whether they still tie is for Inductor's arithmetic to say.
        """
        template = self.template()
        c = self.choice((1, 1, 1, 3, 5, 7, 11, 13, 125))
        i, half = self.randint(0, 24), self.randint(1, 8)
        lo, mid, hi = c << i, c << (i + half), c << (i + 2 * half)
        hints = [lo, hi] if self.random() < 0.5 else [hi, lo]
        farther = [h for h in (c << (i + 4 * half + 1), c << (i + 6 * half)) if h <= MAX_SIZE]
        others = self.sample(farther, self.randint(0, len(farther)))
        hints = hints + others if self.random() < 0.5 else others + hints
        keys = [substitute(template, h) for h in hints]
        return keys, [substitute(template, mid)], c, min(hints.index(lo), hints.index(hi))

    def near_tie_site(self) -> tuple[list[Key], list[Key]]:
        """Variants that permute the runtime sizes by some σ and by σ⁻¹.

        Both distances are sums of the same terms |log2 v_i - log2 v_σ(i)| in a different
        order, equal in real arithmetic, so only the order of floating-point additions
        (per tensor first, then across tensors) decides the winner: this is where a model
        that sums differently from Inductor picks differently.
        """
        n = self.randint(3, 9)
        values: list[int] = []
        while len(values) < n:  # small values and powers of two, as a shrinker would find them, then any
            r = self.random()
            v = self.randint(1, 64) if r < 0.5 else (1 << self.randint(0, 20)) + self.randint(-1, 1) if r < 0.75 \
                else self.randint(1, 1 << 20)
            if 1 <= v <= 1 << 20 and v not in values:
                values.append(v)
        bounds = [0, *sorted(set(self.randint(1, n - 1) for _ in range(self.randint(0, 3)))), n]

        def split(seq):
            return tuple(tuple(seq[a:b]) for a, b in zip(bounds, bounds[1:]))

        keys = []
        for _ in range(self.randint(1, 3)):
            perm = self.sample(range(n), n)
            inverse = sorted(range(n), key=perm.__getitem__)
            for p in (perm, inverse):
                key = split([values[i] for i in p])
                if key not in keys:
                    keys.append(key)
        return keys, [split(values)]


SYMBOLIC = None  # a template entry that takes the hint (or the runtime size)


def substitute(template, value: int) -> Key:
    return tuple(tuple(value if d is SYMBOLIC else d for d in t) for t in template)


# ---------------------------------------------------------------- the cases


def test_random_sites_match_inductor():
    cases = Cases(1)
    for _ in range(800):
        check_against_inductor(*cases.same_layout_site())


def test_zero_and_one_sized_dims_match_inductor():
    # log2 maps 0 to -1 and 1 to 0: at this scale nearly every pair of variants ties.
    cases = Cases(2)
    for _ in range(400):
        check_against_inductor(*cases.same_layout_site(size=cases.tiny))


def test_mismatched_layouts_match_inductor_and_are_flagged():
    cases = Cases(3)
    for _ in range(550):
        check_against_inductor(*cases.mixed_layout_site())


def test_geometric_midpoints_match_inductor():
    cases = Cases(4)
    ties = 0
    for _ in range(750):
        keys, runtimes, c, first_of_pair = cases.midpoint_site()
        check_against_inductor(keys, runtimes)
        if c == 1:
            decision = decide(keys, runtimes[0])
            assert decision.is_tie and decision.chosen == first_of_pair, (keys, runtimes)
            ties += 1
    assert ties > 200  # a third of the cases are exact ties


def test_hint_substituted_sites_match_inductor():
    # Keys built as Inductor builds them: every dynamic dim takes the hint.
    cases = Cases(5)
    for _ in range(650):
        template = cases.template()
        hints = cases.sample((16, 64, 128, 256, 1024, 4096, 8192), cases.randint(1, 6))
        values = [cases.size() for _ in range(cases.randint(1, 3))]
        check_against_inductor([substitute(template, h) for h in hints], [substitute(template, v) for v in values])


def test_keyless_variant_matches_inductor():
    cases = Cases(6)
    for _ in range(250):
        keys, runtimes = cases.same_layout_site(with_none=False)
        keys.insert(min(cases.randint(0, 7), len(keys)), None)
        check_against_inductor(keys, runtimes)


def test_near_ties_decided_by_addition_order_match_inductor():
    cases = Cases(7)
    for _ in range(600):
        check_against_inductor(*cases.near_tie_site())


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
