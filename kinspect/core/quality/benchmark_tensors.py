"""Whether a tensor Inductor builds to autotune a template at a size hint holds what the
kernel reads there.

At a hint, Inductor's kernel gets the hint for each size symbol, so it indexes with every
stride and offset expression evaluated at that value (`128*S` is 524,288 at S=4096). The
example tensor Inductor times the kernel on is built differently: in its own process every
non-constant expression becomes the hint itself (stride 4096, not 524,288), and in the
autotune subprocess no hint is applied at all (the example size). Either way a tensor can
be smaller than what the kernel reads: the config is then timed on memory outside the
tensor, or faults; in the subprocess it is also timed at another size. This module holds that rule on the IR's sympy expressions (as text),
with the values Inductor gave passed in, so it runs without torch.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from kinspect.core.dispatch.operands import OPERANDS
from kinspect.core.quality.rules import session_rule
from kinspect.core.session.benchmark_tensors import Concrete, Layout, Misfit, Replaced, TemplateMisfit
from kinspect.core.session.model import Finding, Session

KIND = "hint-benchmark-tensor"
"""The finding a misfit gives, derived from the misfits each graph of the session holds."""


Sizes = tuple[tuple[str, int], ...]
"""Each size symbol's value at a hint where the compile tuned at one size per symbol
(`--one-size-per-symbol`), as (name, value) pairs; empty: the hint for every symbol."""


@functools.lru_cache(maxsize=4096)
def _value_at(expr: str, hint: int, sizes: Sizes = ()) -> int:
    from sympy import Integer, sympify

    e = sympify(expr)
    if e.free_symbols:
        given = dict(sizes)
        e = e.subs({s: Integer(given.get(s.name, hint)) for s in e.free_symbols})
    return int(e)


def at_hint(exprs: Sequence[str], hint: int, sizes: Sizes = ()) -> tuple[int, ...]:
    """Each expression with the hint (or the symbol's size in `sizes`) substituted for every symbol in it."""
    return tuple(_value_at(str(e), hint, sizes) for e in exprs)


def required_storage(size: Sequence[int], stride: Sequence[int], offset: int = 0) -> int:
    """Elements a view of this shape, stride and offset reaches (0 when it is empty), as
    `torch._prims_common.compute_required_storage_length` counts them."""
    if any(s == 0 for s in size):
        return 0
    return 1 + offset + sum((s - 1) * st for s, st in zip(size, stride))


SWIZZLE_ROWS = 2048
"""Rows a GEMM template's tiles can reach past an extent that is a product of symbols.

At a hint Inductor gives the kernel the hint for each symbol as its size arguments, so
inside the kernel `M = ks0*ks1` is hint² (4,096 at B=S=64), while the launch grid, the key
and the benchmark tensors take the hint for the whole product (M = 64). The templates
reorder program ids in groups of GROUP_M=8 row tiles computed from the kernel's own M, so
a tile can land up to 8 × BLOCK_M (BLOCK_M at most 256) rows into the group, past the
grid's rows: samples/generate.py's GEMMs faulted so on the H200 at hints 64 and 256."""


def _reached(expr: str, extent: int, hint: int, sizes: Sizes = ()) -> int:
    """The rows the kernel can touch along a size: the grid's extent, or, where the
    kernel's own value of the size (the hint for each symbol) is larger, the extent
    rounded up to whole tile groups, never past the kernel's value."""
    inside = _value_at(str(expr), hint, sizes)
    if inside <= extent:
        return extent
    return min(inside, -(-extent // SWIZZLE_ROWS) * SWIZZLE_ROWS)


def reach(layout: Layout, hint: int, extent: Sequence[int], sizes: Sizes = ()) -> Concrete:
    """What the kernel reads at this hint: `extent` rows and columns (the sizes its launch
    grid covers there, which Inductor computes; along a size that is a product of symbols,
    as far as its tiles reach: `SWIZZLE_ROWS`), each stride and the offset with the hint
    (or the symbol's size in `sizes`) substituted for every symbol, and the storage that spans."""
    stride, offset = at_hint(layout.stride, hint, sizes), _value_at(layout.offset, hint, sizes)
    size = tuple(_reached(e, int(s), hint, sizes) for e, s in zip(layout.size, extent))
    return Concrete(size, stride, offset, required_storage(size, stride, offset))


def check(tensor: str, layout: Layout, hint: int, extent: Sequence[int], given: Concrete,
          inductor: Concrete, path: str = "in-process", sizes: Sizes = ()) -> Misfit | None:
    """A misfit where the tensor Inductor built (`given`) holds less storage than the kernel
    reads at the hint, or where Inductor sized the kernel's view (`inductor`: the view's
    sizes, strides and offset as Inductor evaluated them) at other sizes than the hint's
    (the subprocess path); else None. `sizes`: the symbols' sizes at the hint where the
    compile tuned at one size per symbol (the kernel reads at those)."""
    needed = reach(layout, hint, extent, sizes)
    grid = tuple(int(s) for s in extent)
    if needed.storage <= given.storage and tuple(inductor.size) == grid:
        return None
    replaced = []
    for where, exprs, got, want in (("size", layout.size, inductor.size, needed.size),
                                    ("stride", layout.stride, inductor.stride, needed.stride)):
        for i, (e, g, w) in enumerate(zip(exprs, got, want)):
            if g != w:
                replaced.append(Replaced(f"{where}[{i}]", str(e), g, w))
    if inductor.offset != needed.offset:
        replaced.append(Replaced("offset", layout.offset, inductor.offset, needed.offset))
    return Misfit(tensor, hint, path, layout, given, needed, tuple(replaced))


def enlarged(given_storage: int, needed_storage: int) -> int:
    """Elements to add at the end of a benchmark tensor's storage so the kernel reads inside it."""
    return max(0, needed_storage - given_storage)


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def renamed(expr: str, names: Mapping[str, str]) -> str:
    """An expression with Inductor's symbols (`s63`) in the user's names (`S`), token by
    token: the text comes from a session, so it is never parsed."""
    if not names:
        return expr
    return _NAME.sub(lambda m: names.get(m.group(0), m.group(0)), expr)


def _symbols(expr: str, names: Mapping[str, str]) -> list[str]:
    """The size symbols in an expression: the session's, else Inductor's own (`s0`, `u3`)."""
    return [t for t in dict.fromkeys(_NAME.findall(expr)) if t in names or re.fullmatch(r"[a-z]{1,2}[0-9]+", t)]


def _tuple(values: Sequence[Any]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ("," if len(values) == 1 else "") + ")"


def _replaced_text(r: Replaced, hint: int, names: Mapping[str, str]) -> str:
    expr = renamed(r.expr, names)
    if r.where.startswith("size"):  # the kernel's extent: Inductor's own value at the hint (its grid, its key)
        return f"{r.where} {expr}: built {r.given:,}, the kernel covers {r.at_hint:,} at hint {hint}"
    syms = sorted({names.get(s, s) for s in _symbols(r.expr, names)})
    at = ", ".join(f"{s}={hint}" for s in syms) or f"hint {hint}"
    return f"{r.where} {expr}: given {r.given:,}, {r.at_hint:,} at {at}"


def message(m: Misfit, op: str, tensor: str, names: Mapping[str, str]) -> str:
    """One sentence: which tensor, what Inductor built, what the kernel reads, and the
    expression Inductor replaced, in the user's names."""
    how = ("in kinspect's process Inductor put the hint in for every expression" if m.path == "in-process"
           else "in the autotune subprocess Inductor built it at the example size, ignoring the hint")
    exprs = "; ".join(_replaced_text(r, m.hint, names) for r in m.replaced[:3])
    outcome = ("the kernel reads past the tensor, so a config faulted or was timed on memory outside it"
               if m.short else "the configs were timed at another size than the hint's")
    return (f"at hint {m.hint}, {op}'s {tensor} was autotuned on a tensor of shape {_tuple(m.given.size)}, "
            f"stride {_tuple(m.given.stride)} ({m.given.storage:,} elements of storage) where the kernel reads "
            f"shape {_tuple(m.needed.size)}, stride {_tuple(m.needed.stride)} ({m.needed.storage:,} elements): "
            f"{how} ({exprs or 'no expression replaced'}); {outcome}")


def fitted_message(op: str, hints: Sequence[int], tensors: int, templates: int, paths: Sequence[str]) -> str:
    """The one finding a site gets where kinspect fitted every misfit it had."""
    where = " and ".join(sorted(set(paths)))
    layers = f" in {templates} templates (one per layer)" if templates > 1 else ""
    return (f"{op}: {tensors} benchmark tensors{layers} did not hold what the kernel reads at hints "
            f"{', '.join(map(str, sorted(set(hints))))} ({where} autotuning); kinspect gave each the storage its "
            "kernel reads, so no config read or wrote outside its tensors (--fit-benchmark-tensors)")


def part(op: str, index: int | None, inputs: Sequence[str], inductor_name: bool = True) -> str:
    """The tensor's part in the op (`a`, `x`, `out`), with Inductor's name beside it."""
    if index is None:
        return "out"
    parts = OPERANDS.get(op)
    if parts is not None and len(parts) == len(inputs):
        return f"{parts[index]} ({inputs[index]})" if inductor_name else parts[index]
    return inputs[index]


@session_rule(KIND)
def benchmark_tensors(session: Session) -> list[Finding]:
    """Per site (or template, where no site was made), one finding per hint, tensor and path
    that was left misfit, and one for all that kinspect fitted: a site a dozen layers share
    speaks once, with the count."""
    names = {s.name: s.alias for s in session.symbols if s.alias}
    out = []
    for g in session.graphs:
        left: dict[tuple[Any, ...], list[TemplateMisfit]] = defaultdict(list)
        fitted: dict[tuple[Any, ...], list[TemplateMisfit]] = defaultdict(list)
        ops: dict[tuple[Any, ...], str] = {}
        for seen in g.misfits:
            where = (seen.site, seen.op) if seen.site is not None else (None, seen.inputs)
            ops[where] = seen.op
            if seen.fitted:  # one finding per op where no site was made: it counts the templates
                fitted[(seen.site, seen.op)].append(seen)
                ops[(seen.site, seen.op)] = seen.op
            else:
                tensor = part(seen.op, seen.index, seen.inputs, inductor_name=False)
                left[(where, seen.misfit.hint, tensor, seen.misfit.path)].append(seen)
        for (where, _, tensor, _), group in left.items():
            first = group[0]
            named = tensor if where[0] is not None else part(first.op, first.index, first.inputs)
            text = message(first.misfit, ops[where], named, names)
            templates = len({s.inputs for s in group})
            if templates > 1:
                text += f" (the same in {templates} templates that share this site, one per layer)"
            out.append(Finding(KIND, text, "error" if first.misfit.short else "warning", site=where[0], graph=g.name))
        for where, group in fitted.items():
            text = fitted_message(ops[where], [s.misfit.hint for s in group], len(group),
                                  len({s.inputs for s in group}), [s.misfit.path for s in group])
            out.append(Finding(KIND, text, "info", site=where[0], graph=g.name))
    return out
