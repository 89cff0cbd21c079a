"""One size per symbol at each hint: the value each size symbol of a graph takes while its
GEMMs are tuned at a hint, under `--one-size-per-symbol`.

Stock Inductor tunes a size-hint variant on two problems at once: the kernel's size
arguments get the hint for each symbol (`M = B*S` is hint²), while the launch grid, the
variant's key and the benchmark tensors get the hint for each whole expression (`B*S` is
the hint, and so is a stride `768*S`). `kinspect.inductor.hooks.fixes.hint_sizes` makes every
one of them read a single assignment per hint instead, chosen here so that each tuned
problem is one the program could run:

- every symbol takes the hint, within the range Dynamo knows for it (a `mark_dynamic`
  minimum or maximum, a `torch._check`): each dynamic size is the hint, as the PR that
  introduced the hints tuned `matmul([s0, s1], [s1, s2])` on `([64, 64], [64, 64])`;
- where the graph could not run at those sizes, the nearest multiples of 2, 4, 8, ... of
  the hint are tried first (a guard that a size be a multiple of 8, as GPT-2's backward
  graph holds for its sequence length, fails at hint 23 and holds at 24), then the hint is
  halved (and so rounded) and every symbol takes it again within its range, until it
  could: no GEMM of the graph over the budget for its operands and its output (a quarter
  of the GPU's memory; GPT-2 with B and S dynamic at hint 4096 would need 1.6 TB for its
  attention scores at B = S = 4096), no tensor of it past 32-bit indexing where its
  example fits, and every guard of the graph holding (the last two checked by the caller,
  which holds the graph: `runs`);
- where no such value is found, the fewest symbols of the guards that fail are held at
  their example sizes (those the hint moves least first) while the rest take the hint,
  rounded or halved as above: GPT-2's loss graph guards its vocabulary above 4096 and equal
  to the logits' width, and its rows at most 4096, which no one value per symbol holds,
  where the vocabulary and the width at their example and the rest at the hint do;
- where that leaves every symbol at its example, the example sizes, which the graph always
  runs at.

A symbol held at its maximum stays there while the hint is above it (BERT's 512 positions
with the batch halved), so the sizes are those docs/upstream/hint-per-symbol.patch makes
Inductor itself choose. The result is plain data the session keeps per graph, so every
reader shows the sizes a variant was really tuned at.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from kinspect.core.dispatch.symbolic import SizeExpr, SizeOverflow
from kinspect.core.errors import ShapeError

MAX_TUNED_BYTES = 4 << 30
"""The most one tuned GEMM's operands and output may take together at a hint's sizes
where the GPU's memory is not known (the mode's budget is a quarter of it)."""

LOWEST = 2
"""No symbol goes below this where its range allows: Dynamo gives sizes 0 and 1 graphs of
their own."""

INT32_ELEMENTS = 2**31 - 1
"""The most elements a tensor may have where Inductor indexes it in 32 bits: it chooses that
at the example sizes and guards on it, so the compiled graph never runs past it, and a
kernel tuned past it reads out of bounds (seen on the H200: an illegal memory access
autotuning a 2,097,152 x 1536 output)."""


EXAMPLES = "the example sizes"
"""How an assignment that fell back to the sizes Dynamo traced begins its reason."""

MOST_TRIED = 8
"""The most symbols whose subsets are tried for the fewest to hold at their examples where
the graph refuses a scale (255 trials); more are held all together."""


@dataclass(frozen=True)
class Refusal:
    """Why the graph could not run at some sizes (the first thing that refused them), and
    the size symbols of everything that did (each failing guard's, each tensor's past
    32-bit indexing): the ones that, held at their example sizes, may let it run."""

    why: str
    symbols: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Operand:
    """One tensor a GEMM reads or writes: its sizes over the graph's symbols, and the bytes
    of one element."""

    sizes: tuple[SizeExpr, ...]
    itemsize: int


@dataclass(frozen=True)
class Problem:
    """One GEMM of the graph, named as the user reads it (its op, or its module path)."""

    name: str
    operands: tuple[Operand, ...]

    def nbytes(self, env: Mapping[str, int]) -> int | None:
        """Its operands' and output's bytes at these sizes; None where a size cannot be
        evaluated (an expression kinspect does not model) or passes 2**62."""
        counts = self.elements(env)
        return None if counts is None else sum(n * op.itemsize for n, op in zip(counts, self.operands))

    def elements(self, env: Mapping[str, int]) -> list[int] | None:
        """Each operand's element count at these sizes (None as for `nbytes`)."""
        out = []
        for op in self.operands:
            n = 1
            try:
                for s in op.sizes:
                    n *= max(s.evaluate(env), 0)
            except (ShapeError, SizeOverflow):
                return None
            out.append(n)
        return out

    def fits(self, env: Mapping[str, int], budget: int) -> bool:
        """Whether the program could run it: its tensors within `budget` bytes, and none of
        more elements than 32-bit indexing reaches."""
        counts = self.elements(env)
        return (counts is not None and max(counts, default=0) <= INT32_ELEMENTS
                and sum(n * op.itemsize for n, op in zip(counts, self.operands)) <= budget)


@dataclass(frozen=True)
class Assignment:
    """The sizes one hint's variants are tuned at, and why any symbol is below the hint."""

    hint: int
    values: Mapping[str, int]
    lowered_for: str | None = None
    """Why the sizes are not the hint, where they are not: what the graph could not run at
    the hint (a GEMM past the budget, a guard, 32-bit indexing) and what was done instead."""
    held: tuple[str, ...] = ()
    """The symbols kept at their example sizes while the rest took the hint (or its
    rounding or halving), where the graph could run at no one size for all of them."""

    @property
    def at_examples(self) -> bool:
        """Whether the graph could run near the hint at no size, and was tuned at the sizes
        Dynamo traced instead."""
        return bool(self.lowered_for and self.lowered_for.startswith(EXAMPLES + ": "))

    @property
    def why_at_examples(self) -> str | None:
        """What kept the graph from running near the hint, where it fell back to the examples."""
        return self.lowered_for[len(EXAMPLES) + 2:] if self.at_examples and self.lowered_for else None

    def sizes_text(self, names: Mapping[str, str] | None = None) -> str:
        """`B=512 S=512`, in the user's names."""
        names = names or {}
        return " ".join(f"{names.get(s, s)}={v}" for s, v in sorted(self.values.items(),
                                                                     key=lambda kv: names.get(kv[0], kv[0])))

    def text(self, names: Mapping[str, str] | None = None) -> str:
        """`hint 4096: B=512 S=512 (lowered from 4096: attention scores needed 1.6 TB)`, or
        `hint 16: B=16 S=16 V=8192 (V held at the example sizes, the rest at the hint: ...)`."""
        names = names or {}
        held = f"{', '.join(names.get(s, s) for s in self.held)} held at {EXAMPLES}, " if self.held else ""
        return (f"hint {self.hint}: {self.sizes_text(names) or 'no size symbols'}"
                + (f" ({held}{self.lowered_for})" if self.lowered_for else ""))


def read_back(hint: int, values: Mapping[str, int], ranges: Mapping[str, tuple[int, int | None]] | None = None,
              examples: Mapping[str, int] | None = None) -> Assignment:
    """The assignment an Inductor that evaluates a hint per symbol on its own (one with
    docs/upstream/hint-per-symbol.patch) gave a graph, read from the value it gave each
    symbol: lowered where one is below the hint (or below its range's maximum, where the
    range is known), and holding at its example any symbol there above the hint, its range's
    floor and every rounding of them (where the examples are known)."""
    ranges, examples = ranges or {}, examples or {}

    def top(n: str) -> int:  # the hint within the symbol's maximum
        return min(hint, ranges.get(n, (0, None))[1] or hint)

    lowered = any(v < top(n) for n, v in values.items())
    held = tuple(sorted(n for n, v in values.items()
                        if v == examples.get(n) and v > max(aligned(max(top(n), ranges.get(n, (0, None))[0])))))
    why = (f"lowered from {hint} by this Inductor's own rule" if lowered else
           "the rest at the hint by this Inductor's own rule" if held else None)
    return Assignment(hint, values, why, held)


def same_sizes(by_hint: Mapping[int, Mapping[str, int]]) -> list[tuple[int, ...]]:
    """The hints grouped by the sizes they were tuned at, in hint order. Hints of one group
    key alike, and Inductor keeps one kernel per key, the group's last hint's: one variant."""
    groups: dict[tuple[tuple[str, int], ...], list[int]] = {}
    for hint, values in by_hint.items():
        groups.setdefault(tuple(sorted(values.items())), []).append(hint)
    return [tuple(g) for g in groups.values()]


def _within(hint: int, low: int, high: int | None) -> int:
    return max(low, hint if high is None else min(hint, high))


def _worst(problems: Sequence[Problem], env: Mapping[str, int]) -> tuple[Problem | None, int]:
    worst: tuple[Problem | None, int] = (None, 0)
    for p in problems:
        n = p.nbytes(env)
        if n is None:
            n = 1 << 62  # larger than anything that fits: an unmodelled size is lowered too
        if n > worst[1]:
            worst = (p, n)
    return worst


def _misfit(problems: Sequence[Problem], env: Mapping[str, int], budget: int) -> Problem | None:
    """The first GEMM the program could not run at these sizes, if any."""
    return next((p for p in problems if not p.fits(env, budget)), None)


Runs = Callable[[Mapping[str, int]], Refusal | None]
"""Why the graph could not run at some sizes (by name), or None where it could: the caller's
knowledge of the graph (its guards, its tensors' 32-bit indexing), which this module lacks."""


def assign(hint: int, ranges: Mapping[str, tuple[int, int | None]], problems: Sequence[Problem],
           budget: int = MAX_TUNED_BYTES, runs: Runs | None = None,
           examples: Mapping[str, int] | None = None) -> Assignment:
    """The sizes every symbol of `ranges` (symbol -> (lowest, highest or None)) takes at
    `hint`: every GEMM in `problems` within `budget` bytes and 32-bit indexing, and `runs`
    satisfied, at the highest scale that gets there; else with the fewest symbols `runs`
    names held at their `examples`; else the `examples`, else the lowest sizes."""
    # No lower than LOWEST, unless the symbol's own range ends below it (an int such as an
    # ignore index of -100, or a count that is always 0, which Dynamo made a size symbol too).
    lows = {s: max(LOWEST, lo) if hi is None else min(max(LOWEST, lo), hi) for s, (lo, hi) in ranges.items()}

    def at(scale: int) -> dict[str, int]:
        return {s: _within(scale, lows[s], hi) for s, (_, hi) in ranges.items()}

    def why_not(env: Mapping[str, int]) -> str | None:
        p = _misfit(problems, env, budget)
        if p is not None:
            return f"{p.name} needed {_needs(p, env)}"
        refused = runs(env) if runs is not None else None
        return refused.why if refused is not None else None

    env = at(hint)
    first = why_not(env)
    if first is None:
        return Assignment(hint, env)
    for scale, size in _fallbacks(hint):
        env = at(size)
        if why_not(env) is None:
            break
    else:
        if examples is not None and set(examples) >= set(ranges):
            kept = _partly_held(hint, at, runs, why_not, examples) if runs is not None else None
            if kept is not None:
                env, held, size = kept
                rest = ("the rest at the hint" if size == hint else
                        f"the rest {'rounded' if size in aligned(hint) else 'lowered'} from {hint}")
                return Assignment(hint, env, f"{rest}: {first} at the hint", tuple(held))
            return Assignment(hint, {s: examples[s] for s in ranges},
                              f"{EXAMPLES}: {first} at the hint, and no size near or below it makes the graph's sizes fit")
        return Assignment(hint, env, f"lowered from {hint}: {first} at the hint, and is as low as the sizes go")
    if scale == hint:
        return Assignment(hint, env, f"rounded from {hint}: {first} at the hint")
    need = _worst(problems, env)[1]
    fits = f", and fits at {_bytes_text(need)} (budget {_bytes_text(budget)})" if problems else ""
    return Assignment(hint, env, f"lowered from {hint}: {first} at the hint{fits}")


def _partly_held(hint: int, at: Callable[[int], dict[str, int]], runs: Runs,
                 why_not: Callable[[Mapping[str, int]], str | None],
                 examples: Mapping[str, int]) -> tuple[dict[str, int], list[str], int] | None:
    """(sizes, the symbols held at their examples, the size the rest took) at the highest
    scale where holding the fewest symbols of what refuses it at their examples (those the
    scale moves least first, then by name) lets the graph run and leaves some symbol off
    its example; None where none does. More than `MOST_TRIED` such symbols are tried all
    held together only."""
    for _, size in itertools.chain([(hint, hint)], _fallbacks(hint)):
        env = at(size)
        refused = runs(env)
        if refused is None:
            continue  # a GEMM too large, which holding sizes at their examples does not mend
        free = sorted(s for s in refused.symbols if s in env and env[s] != examples[s])

        def moved(subset: tuple[str, ...]) -> float:
            return sum(abs(math.log2(max(env[s], 1)) - math.log2(max(examples[s], 1))) for s in subset)

        counts = range(1, len(free) + 1) if len(free) <= MOST_TRIED else [len(free)]
        for n in counts:
            for subset in sorted(itertools.combinations(free, n), key=lambda c: (moved(c), c)):
                trial = {**env, **{s: examples[s] for s in subset}}
                if any(v != examples[s] for s, v in trial.items()) and why_not(trial) is None:
                    return trial, list(subset), size
    return None


def _fallbacks(hint: int) -> Iterator[tuple[int, int]]:
    """(scale, size) to try, in order, where the hint's own sizes do not run: the hint's
    other aligned sizes, then each halving's, down to LOWEST."""
    scale, sizes = hint, aligned(hint)[1:]
    while True:
        yield from ((scale, size) for size in sizes)
        if scale <= LOWEST:
            return
        scale //= 2
        sizes = aligned(scale)


def aligned(size: int) -> list[int]:
    """`size`, then its nearest multiples of 2, 4, 8, ... below and above it, nearest in log2
    first: the sizes a guard of alignment (`Eq(Mod(s70, 8), 0)`) lets a symbol take next to
    a hint, where halving the hint would go past the hints below it (23 halves to 11, 5 and
    2, none a multiple of 8, where 24 is one)."""
    out, step = {size}, 2
    while step <= size:
        out |= {size // step * step, -(-size // step) * step}
        step *= 2
    return sorted(out, key=lambda v: (max(v, size) / min(v, size), v))


def _needs(p: Problem, env: Mapping[str, int]) -> str:
    """What a GEMM that does not fit needs at these sizes, in words."""
    counts, nbytes = p.elements(env), p.nbytes(env)
    if counts is None or nbytes is None:
        return "sizes kinspect cannot evaluate"
    over = " and a tensor of more than 2**31 elements (32-bit indexing)" if max(counts, default=0) > INT32_ELEMENTS else ""
    return _bytes_text(nbytes) + over


def _bytes_text(n: int) -> str:
    for unit, size in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"
