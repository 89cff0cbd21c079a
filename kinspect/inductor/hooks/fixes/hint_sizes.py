"""`--one-size-per-symbol`: each hint's variant tuned, keyed and launched on one problem.

Stock Inductor (2.11 to 2.15) evaluates a size at a hint in
`SizeVarAllocator.optimization_hint_with_override(expr, hint)`, which returns the hint
for any expression that is not constant: `B*S` becomes the hint, and so does a stride
`768*S`. That value sizes the launch grid, the benchmark tensors and the configs' scaling,
while the kernel's size arguments are single symbols and each gets the hint, so inside the
kernel `M = ks0*ks1` is hint². The variant's key (`SIMDScheduling._make_shape_cache_key`)
takes the hint for each whole expression too. A GEMM whose rows are a product of sizes is
thus tuned on a kernel that disagrees with its grid and its tensors: configs timed on an
empty launch, strides that read past their storage, CUDA faults, `NoValidChoicesError`.

In this mode each graph gets one assignment per hint (`kinspect.core.dispatch.hint_sizes`:
every symbol the hint within its range, rounded to a multiple of 2, 4, 8, ... or halved
where the graph could not run there, and the fewest held at their example sizes where no
one size runs, as docs/upstream/hint-per-symbol.patch has Inductor decide), and every place
Inductor evaluates a size at that hint reads it:

- `SizeVarAllocator.optimization_hint_with_override`: the expression, with Inductor's
  precomputed sizes (`ks0`) expanded, evaluated at the assignment, so the kernel's size
  arguments, the grid, the config scaling and every benchmark tensor (sizes, strides,
  offsets, storage) agree;
- `SIMDScheduling._make_shape_cache_key`: the variant's key at the same sizes, so the
  runtime choice measures its distance to the problem each variant was tuned on;
- the autotune subprocess's tensor descriptions (`TensorMeta.from_irnodes`, built with no
  hint at all), described again at the assignment.

Only graphs lowered while the mode is on are touched (the assignment hangs on the graph's
own `SizeVarAllocator`); an expression the assignment cannot evaluate (an unbacked size)
keeps Inductor's value. The patches are installed once and call Inductor's own methods
first; `assignments(graph)` is what the session records.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
from collections.abc import Iterator
from typing import Any

from kinspect.core.dispatch.hint_sizes import MAX_TUNED_BYTES, Assignment, Problem, assign, read_back
from kinspect.inductor.hooks.fixes import graph_bounds
from kinspect.inductor.hooks.fixes.modes import Mode

_budget: int | None = None
_ATTR = "_kinspect_hint_sizes"


@contextlib.contextmanager
def one_size_per_symbol(budget: int | None = None) -> Iterator[None]:
    """Every graph lowered inside is tuned, keyed and launched at one size per symbol, no
    GEMM of it over `budget` bytes at a hint's sizes (default: a quarter of the GPU's
    memory, or `MAX_TUNED_BYTES` without one)."""
    global _budget
    with MODE.on():
        _budget = budget
        yield


class GraphSizes:
    """One graph's assignments, made when a hint is first asked for: the symbols' ranges
    and the graph's GEMMs are read from the graph as Inductor lowers it."""

    def __init__(self, graph: Any, budget: int | None) -> None:
        self.graph = graph
        self.budget = budget if budget is not None else _device_budget()
        self.by_hint: dict[int, Assignment] = {}
        self._values: dict[int, dict[Any, Any]] = {}
        self._ranges: dict[str, tuple[int, int | None]] | None = None
        self._symbols: dict[str, Any] = {}
        self._problems: list[Problem] | None = None
        self._runs: Any = None

    def values(self, hint: int) -> dict[Any, Any]:
        """The assignment at `hint`, as sympy symbol -> sympy Integer."""
        got = self._values.get(hint)
        if got is None:
            import sympy

            if self._ranges is None:
                self._ranges, self._symbols = graph_bounds.ranges(self.graph.sizevars.shape_env)
                try:
                    self._problems = graph_bounds.gemms(self.graph)
                except Exception:  # FX metadata kinspect cannot read: no GEMM is known to need lowering
                    self._problems = []
                self._runs = graph_bounds.runs(self.graph, self._symbols)
            a = assign(hint, self._ranges, self._problems or [], self.budget, self._runs,
                       graph_bounds.examples(self.graph.sizevars.shape_env, self._symbols))
            self.by_hint[hint] = a
            got = self._values[hint] = {self._symbols[s]: sympy.Integer(v) for s, v in a.values.items()}
        return got

    def value(self, sizevars: Any, expr: Any, hint: int) -> int | None:
        """`expr` at the hint's assignment, or None where it holds a symbol the assignment
        has no value for (an unbacked size)."""
        import sympy
        from torch._inductor.utils import sympy_subs

        e = sympy.sympify(expr)
        if e.free_symbols:
            e = sizevars.simplify(e)
        if e.free_symbols and sizevars.inv_precomputed_replacements:
            e = sympy_subs(e, sizevars.inv_precomputed_replacements)
        values = self.values(hint)
        if not e.free_symbols <= values.keys():
            return None
        got = e.xreplace(values) if e.free_symbols else e
        return int(got) if got.is_number else None


def assignments(graph: Any) -> tuple[Assignment, ...]:
    """The assignments a graph lowered in this mode was tuned at, in hint order (none
    outside the mode, or where no size was evaluated at a hint)."""
    sizes = getattr(getattr(graph, "sizevars", None), _ATTR, None)
    if sizes is None:
        return ()
    return tuple(sizes.by_hint[h] for h in sorted(sizes.by_hint))


def inductors_own(graph: Any, hints: Any) -> tuple[Assignment, ...]:
    """The value this Inductor gave each size symbol at each hint, where it evaluates a size
    at a hint per symbol on its own (an Inductor with docs/upstream/hint-per-symbol.patch
    or its like), so the session says what its kernels, grids, keys and tensors saw; none
    under Inductor's stock rule. Asked of the graph's own allocator once its code is
    generated: the answer it gave its kernels."""
    sv = getattr(graph, "sizevars", None)
    if sv is None or not hints:
        return ()
    try:
        ranges, symbols = graph_bounds.ranges(sv.shape_env)
        examples = graph_bounds.examples(sv.shape_env, symbols) or {}
        out = []
        for hint in hints:
            values = _per_symbol(sv, hint)
            if not values:
                return ()
            out.append(read_back(int(hint), values, ranges, examples))
        return tuple(out)
    except Exception:  # an allocator kinspect cannot ask: say nothing rather than something wrong
        return ()


def named(sizevars: Any, hint: int) -> tuple[tuple[str, int], ...]:
    """The hint's size of each symbol, by name, where this graph is tuned at one size per
    symbol, by kinspect or by an Inductor that evaluates a hint per symbol on its own (only
    the symbols not at the hint, then); empty under Inductor's stock rule: what kinspect's
    benchmark-tensor check holds a kernel's reads to."""
    sizes = _sizes_of(sizevars)
    if sizes is not None:
        return tuple(sorted((s.name, int(v)) for s, v in sizes.values(hint).items()))
    return tuple(sorted((name, v) for name, v in (_per_symbol(sizevars, hint) or {}).items() if v != hint))


def _per_symbol(sizevars: Any, hint: int) -> dict[str, int] | None:
    """Each size symbol's value at the hint where this allocator evaluates a hint per symbol
    (`s + 1` is one more than `s`); None under Inductor's stock rule, which returns the hint
    for any expression, or where the graph has no size symbol."""
    symbols = graph_bounds.ranges(sizevars.shape_env)[1]
    if not symbols:
        return None
    at = sizevars.optimization_hint_with_override
    probe = next(iter(symbols.values()))
    if at(probe + 1, hint) != at(probe, hint) + 1:
        return None
    return {name: int(at(sym, hint)) for name, sym in symbols.items()}


def _device_budget() -> int:
    """A quarter of the GPU's memory: each tuned GEMM's tensors with room for the model."""
    import torch

    with contextlib.suppress(Exception):
        if torch.cuda.is_available():
            return torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory // 4
    return MAX_TUNED_BYTES


def _sizes_of(sizevars: Any) -> GraphSizes | None:
    return getattr(sizevars, _ATTR, None) if MODE.active else None


# ---------------------------------------------------------------- the patches

def _graph_init(orig: Any) -> Any:
    @functools.wraps(orig)
    def wrapped(graph: Any, *a: Any, **k: Any) -> None:
        orig(graph, *a, **k)
        if not MODE.active:
            return
        parent = getattr(graph, "parent", None)  # a nested compile region tunes at its graph's sizes
        sizes = getattr(getattr(parent, "sizevars", None), _ATTR, None) if parent is not None else None
        setattr(graph.sizevars, _ATTR, sizes if sizes is not None else GraphSizes(graph, _budget))
    return wrapped


def _hint_with_override(orig: Any) -> Any:
    @functools.wraps(orig)
    def wrapped(sizevars: Any, expr: Any, hint_override: int | None = None) -> int:
        sizes = _sizes_of(sizevars) if hint_override is not None else None
        if sizes is not None:
            got = sizes.value(sizevars, expr, hint_override)
            if got is not None:
                return got
        return orig(sizevars, expr, hint_override)
    return wrapped


def _shape_key(orig: Any) -> Any:
    @functools.wraps(orig)
    def wrapped(sched: Any, node: Any, hint: int) -> Any:
        key = orig(sched, node, hint)
        from torch._inductor.virtualized import V

        sizevars = V.graph.sizevars
        sizes = _sizes_of(sizevars)
        if sizes is None:
            return key
        import sympy

        def at(s: Any) -> Any:
            if isinstance(s, sympy.Expr) and not isinstance(s, sympy.Integer):
                got = sizes.value(sizevars, s, hint)
                return hint if got is None else got
            return s

        shapes = sched._get_multikernel_shapes(node)
        return tuple(was if shape is None else tuple(at(s) for s in shape) for was, shape in zip(key, shapes))
    return wrapped


def _generate(orig: Any) -> Any:
    @functools.wraps(orig)
    def wrapped(template: Any, *a: Any, **k: Any) -> Any:
        caller = orig(template, *a, **k)
        bmreq = getattr(caller, "bmreq", None)
        if bmreq is None or not MODE.active or not _in_subproc():
            return caller
        from torch._inductor.virtualized import V

        sizevars = V.graph.sizevars
        args = inspect.signature(orig).bind_partial(template, *a, **k).arguments
        hint = args.get("hint_override")
        if hint is not None and _sizes_of(sizevars) is not None:
            with contextlib.suppress(Exception):  # a description that cannot be redone stays Inductor's
                _describe_at_hint(bmreq, args.get("layout"), hint)
        return caller
    return wrapped


def _in_subproc() -> bool:
    import torch._inductor.config as cfg

    return bool(getattr(cfg, "autotune_in_subproc", False))


def _describe_at_hint(bmreq: Any, layout: Any, hint: int) -> None:
    """The subprocess's tensors described as this process builds them at the hint."""
    from torch._inductor import ir
    from torch._inductor import select_algorithm as sa
    from torch._inductor.virtualized import V

    sv = V.graph.sizevars
    strides_of = getattr(sa, "get_strides_with_layout_constraints", lambda n: n.get_stride())

    def described(meta: Any, node: Any) -> Any:
        if node is None:
            return meta
        if isinstance(node, ir.Layout):
            node = ir.Buffer(name="fake", layout=node)
        return dataclasses.replace(
            meta, sizes=tuple(sv.optimization_hints_with_override(node.get_size(), hint_override=hint)),
            strides=tuple(sv.optimization_hints_with_override(strides_of(node), hint_override=hint)),
            offset=sv.optimization_hint_with_override(node.get_layout().offset, hint_override=hint))

    metas = bmreq.input_tensor_meta
    if isinstance(metas, list):
        bmreq.input_tensor_meta = [described(m, V.graph.try_get_buffer(m.name) if m.name else None) for m in metas]
    out = bmreq.output_tensor_meta
    if not isinstance(out, list) and layout is not None:
        bmreq.output_tensor_meta = described(out, layout)


def _install() -> None:
    """The methods patched; each acts only on a graph lowered in this mode. Installed before
    the compile capture's hooks (`capture` asks first), so that the capture records the keys
    this mode gives."""
    from torch._inductor import select_algorithm as sa
    from torch._inductor import sizevars
    from torch._inductor.codegen import simd
    from torch._inductor.graph import GraphLowering

    GraphLowering.__init__ = _graph_init(GraphLowering.__init__)
    sva = sizevars.SizeVarAllocator
    sva.optimization_hint_with_override = _hint_with_override(sva.optimization_hint_with_override)
    simd.SIMDScheduling._make_shape_cache_key = _shape_key(simd.SIMDScheduling._make_shape_cache_key)
    if hasattr(sa, "TritonTemplate") and hasattr(sa.TritonTemplate, "generate"):
        sa.TritonTemplate.generate = _generate(sa.TritonTemplate.generate)


def _missing() -> list[str]:
    from torch._inductor import sizevars
    from torch._inductor.codegen import simd
    from torch._inductor.graph import GraphLowering

    needed = [(sizevars.SizeVarAllocator, "optimization_hint_with_override"),
              (sizevars.SizeVarAllocator, "optimization_hints_with_override"),
              (simd.SIMDScheduling, "_make_shape_cache_key"), (simd.SIMDScheduling, "_get_multikernel_shapes"),
              (GraphLowering, "__init__")]
    return [f"{o.__name__}.{n}" for o, n in needed if not hasattr(o, n)]


MODE = Mode("--one-size-per-symbol", _install, _missing)
