"""Whether the sizes a program runs are near any problem its hints were tuned on.

A multi-kernel runs, at each key, the variant whose hint key is nearest; nothing checks
that the nearest is near. A program whose sizes all lie beyond the hints (or in a wide gap
between two of them) runs at each of its keys a config chosen for a problem several times
larger or smaller, and no pick among the variants can fix that: the hints must move.
Under `--one-size-per-symbol` this is easy to miss: a hint gives every symbol its value, so
a GEMM with `B*S` rows is tuned at hint² rows (GPT-2's training loop ran its measured keys,
256 to 1024 rows, on hint 64's variant tuned at 4096 rows; at `mlp.c_fc` ×1.55 geomean slower
than hint 4096's, H200, one compile).

Held at ×4 in one size: hints four times apart leave no key more than ×2 from the nearer.
The sizes held are the GEMM kernel's own, as the tensors at its op's rank give them (mm's
`out` is `(M, N)`): a view of more dims is flattened by the kernel, so its single sizes are
no problem the kernel was tuned at. GPT-2's weight-gradient GEMMs read `a` as `(B, S, 384)`:
at hints 16 and 32 the loop's batch of 2 to 8 lies ×2 to ×16 from B = 16 and 32, while its
`B*S` rows, 256 to 1024, are the rows the two variants were tuned at.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from kinspect.core.dispatch.batch import keys_to_array, score_array
from kinspect.core.dispatch.hint_sizes import Assignment
from kinspect.core.dispatch.operands import GEMM_RANK, operand_names
from kinspect.core.dispatch.shapes import MAX_SIZE
from kinspect.core.dispatch.symbolic import SizeExpr
from kinspect.core.errors import KinspectError
from kinspect.core.numbers import size_factor
from kinspect.core.quality.rules import Facts, site_rule
from kinspect.core.session.model import Finding, Site

KIND = "runs-far-from-hints"
FAR = 4.0
"""The factor in one size from the picked variant's key beyond which a key counts as far."""

GemmDim = tuple[tuple[int, ...], str, SizeExpr]
"""A size the kernel tiles: the runtime key's columns it spans, its operand, its expression."""


@site_rule(KIND)
def far_from_hints(site: Site, facts: Facts) -> list[Finding]:
    """One finding per site where at least half the keys the program ran are ×4 or more, in
    some size, from the problem of the variant Inductor runs for them."""
    keys = sorted(k for k in facts.site_keys.get(site.name, ()) if site.lines_up(k))
    if not keys or not site.variants:
        return []
    runtime, _ = keys_to_array(keys)
    chosen = score_array(runtime, site.runtime_ranks, site.keys).chosen
    columns = np.stack([_problem(site, i) for i in range(len(site.variants))])
    dims = _gemm_dims(site, columns.any(axis=0))
    sizes = _merged(runtime, dims)
    problems = _merged(columns, dims)
    tuned = problems[chosen]
    logs = np.abs(_log2(sizes) - _log2(tuned))
    logs[(sizes <= 0) | (tuned <= 0)] = 0.0
    column = logs.argmax(axis=1)
    factor = 2.0 ** logs[np.arange(len(keys)), column]
    far = factor >= FAR
    if 2 * int(far.sum()) < len(keys):
        return []
    col = int(np.bincount(column[far]).argmax())  # the size most keys are far in
    at = far & (column == col)
    ran, on = sizes[at, col], tuned[at, col]
    every = problems[:, col][problems[:, col] > 0]
    if (ran < on).all() and ran.max() < every.min():
        where, remedy = " below every variant's", "a smaller hint"
    elif (ran > on).all() and ran.min() > every.max():
        where, remedy = " above every variant's", "a larger hint"
    else:
        where, remedy = "", "hints nearer these sizes"
    picked = sorted(set(chosen[at].tolist()))
    name, expr = dims[col][1:]
    apart = size_factor(float(factor[far].min()), float(factor[far].max()))
    assigned = facts.session.hint_assignments(site)
    nearer = _nearer(expr, ran, site.variants[picked[0]].hint, assigned)
    # One sentence, then clauses (`; `): a kind's findings share the sentence and their like clauses
    # (finding_groups), so twenty sites read as one line and what differs.
    clauses = [f"{int(far.sum())} of {len(keys)} keys {apart}{where}, in {name}'s size "
               f"{expr.text_with(facts.session.aliases)}"]
    clauses += [f"{_range(ran[chosen[at] == i])} on {site.variants[i].label}, tuned at {problems[i, col]}"
                for i in picked]
    clauses += _assigned(site, facts.session.aliases, picked, assigned)
    clauses += ["each runs a config chosen for a problem it never has, and no pick among these variants changes that",
                nearer or f"{remedy} would tune nearer", ADVISE]
    text = "keys the program ran lie far from the problem of the variant Inductor runs for them: " + "; ".join(clauses)
    return [Finding(KIND, text, "warning", site=site.name, graph=site.graph, variants=tuple(picked))]


def _problem(site: Site, index: int) -> np.ndarray:
    """The variant's key laid over the runtime key's columns as Inductor zips them (a variant
    keyed on fewer tensors or dims leaves the rest unset, 0), with 0 too for each size its
    kernel was not tuned at: stock Inductor keys a product of sizes (`B*S`) by the hint while
    its kernel computes the product at the hint (`hint-size-in-kernel` says so)."""
    v = site.variants[index]
    layout = site.runtime_ranks
    out = np.zeros(sum(layout), np.int64)
    if v.key is None:
        return out
    specs = None
    if v.hint is not None and site.keyed_by_hint(v):
        specs = site.specs_of(v.key)
        if specs is None:
            return out  # no sizes to tell a product from: nothing said
    start = 0
    for i, (rank, shape) in enumerate(zip(layout, v.key)):
        for j, size in enumerate(shape[:rank]):
            out[start + j] = size if specs is None or specs[i].sizes[j].true_value(v.hint or 0) == size else 0
        start += rank
    return out


def _gemm_dims(site: Site, known: np.ndarray) -> list[GemmDim]:
    """The sizes the kernel tiles: those of the tensors at the op's rank where one of them is
    dynamic and `known` (a variant's problem has it); else every tensor's, a view's leading
    sizes taken together as its kernel flattens them (GPT-2's attention-weight gradient reads
    `(B, 6, S, 64)` and `(B, S, 384)` and writes `(384, 384)`; a stock key holds `B*S` rows as
    the hint, not the hint² its kernel computed, while its `(B, S, 768)` view holds both at the
    hint). Any other op's sizes each count alone."""
    specs = site.runtime_specs
    rank = GEMM_RANK.get(site.op)
    flattened: list[GemmDim] = []
    own: list[GemmDim] = []
    start = 0
    for spec, name in zip(specs, operand_names(site.op, specs)):
        n = len(spec.sizes)
        cut = 1 if rank is None or n <= rank else n - rank + 1  # the leading sizes the kernel takes as one
        lead = spec.sizes[:cut]
        flattened.append((tuple(range(start, start + cut)), name,
                          lead[0] if cut == 1 else SizeExpr(("mul", *(e.tree for e in lead)))))
        flattened += [((start + j,), name, spec.sizes[j]) for j in range(cut, n)]
        if rank is not None and n <= rank:
            own += [((start + j,), name, e) for j, e in enumerate(spec.sizes)]
        start += n
    return own if any(not e.is_constant and known[cols[0]] for cols, _, e in own) else flattened


def _merged(keys: np.ndarray, dims: Sequence[GemmDim]) -> np.ndarray:
    """Each row's value of each GEMM size: the product of its columns (in floats, held at
    `MAX_SIZE` as a session's sizes are), 0 where one is unset."""
    out = np.empty((keys.shape[0], len(dims)), np.int64)
    for i, (cols, _, _) in enumerate(dims):
        part = keys[:, list(cols)]
        product = np.minimum(np.prod(part.astype(np.float64), axis=1), float(MAX_SIZE))
        out[:, i] = np.where((part > 0).all(axis=1), product, 0).astype(np.int64)
    return out


def _log2(a: np.ndarray) -> np.ndarray:
    return np.log2(np.maximum(a, 1).astype(np.float64))


def _range(values: np.ndarray) -> str:
    lo, hi = int(values.min()), int(values.max())
    return str(lo) if lo == hi else f"{lo}..{hi}"


ADVISE = "kinspect advise --run, with such hints among --candidates, measures them at the sizes the program runs"


def _nearer(expr: SizeExpr, ran: np.ndarray, hint: int | None, assigned: Sequence[Assignment]) -> str | None:
    """`hint 16 would tune it at 256`: the power of two that puts this size nearest the middle
    of what ran (in log2), given to each symbol of it that took the picked variant's hint (a
    symbol held at a bound keeps its size); None where no hint comes within ×2 of it."""
    base = next((dict(a.values) for a in assigned if a.hint == hint), {})
    took = {sym for sym in expr.symbols if base.get(sym) == hint} or set(expr.symbols)
    middle = (math.log2(int(ran.min())) + math.log2(int(ran.max()))) / 2
    best: tuple[float, int, int] | None = None
    for h in (2**e for e in range(21)):
        try:
            value = expr.evaluate({**base, **{sym: h for sym in took}})
        except KinspectError:
            continue
        if value > 0 and (best is None or abs(math.log2(value) - middle) < best[0]):
            best = (abs(math.log2(value) - middle), h, value)
    if best is None or best[0] > 1.0 or best[1] == hint:
        return None
    return f"hint {best[1]} would tune it at {best[2]}"


def _assigned(site: Site, aliases: Mapping[str, str], picked: Sequence[int],
              assigned: Sequence[Assignment]) -> list[str]:
    """The sizes each picked hint was tuned at, where the session records one per symbol."""
    hints = {site.variants[i].hint for i in picked}
    said = [a.text(aliases) for a in assigned if a.hint in hints]
    return [f"one size per symbol: {', '.join(said)}"] if said else []
