"""What a graph allows its size symbols at a hint, read from the graph as Inductor lowers
it: each symbol's range and example value (its shape environment), whether the graph could
run at some sizes (its guards, and the 32-bit indexing Inductor chooses for every tensor
that fits it at the example sizes), and its GEMMs with their operands' sizes (for the
memory each would need). `--one-size-per-symbol` decides its sizes from these
(`kinspect.core.dispatch.hint_sizes.assign`), as docs/upstream/hint-per-symbol.patch has
Inductor decide them; a graph read here is never changed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kinspect.core.dispatch.hint_sizes import INT32_ELEMENTS, Operand, Problem, Refusal, Runs
from kinspect.core.dispatch.operands import gemm_op
from kinspect.core.dispatch.symbolic import SizeExpr
from kinspect.inductor.hooks.origins import describe


def ranges(env: Any) -> tuple[dict[str, tuple[int, int | None]], dict[str, Any]]:
    """Each backed size symbol of a graph's shape env with its known range."""
    import sympy
    from torch.utils._sympy.symbol import SymT, symbol_is_type

    values = _example_values(env)
    bounds: dict[str, tuple[int, int | None]] = {}
    symbols: dict[str, Any] = {}
    for sym in values:
        if not isinstance(sym, sympy.Symbol) or not symbol_is_type(sym, SymT.SIZE):
            continue  # a float or other symbol the shape env also tracks is no size
        vr = getattr(env, "var_to_range", {}).get(sym)
        low, high = 2, None
        with contextlib.suppress(Exception):  # infinite or symbolic bounds are no bounds
            low = int(vr.lower)
        with contextlib.suppress(Exception):
            high = int(vr.upper)
        bounds[sym.name] = (low, high)
        symbols[sym.name] = sym
    return bounds, symbols


def _example_values(env: Any) -> Any:
    """The shape env's symbol -> example value (`backed_var_to_val` where torch has it)."""
    return getattr(env, "backed_var_to_val", None) or getattr(env, "var_to_val", {})


def examples(env: Any, symbols: dict[str, Any]) -> dict[str, int] | None:
    """Each symbol's example size, the one the graph was traced at; None where one is unknown."""
    values = _example_values(env)
    try:
        return {name: int(values[sym]) for name, sym in symbols.items()}
    except (KeyError, TypeError, ValueError):
        return None


def runs(graph: Any, symbols: dict[str, Any]) -> Runs:
    """Why the graph could not run at some sizes (by name), or None where it could: a guard
    of its shape environment fails there (the guards present now, at the first size asked
    for at a hint), or a tensor of it that Inductor can index in 32 bits at the example
    sizes passes 2**31 elements, where the 32-bit indexing Inductor chose and guards on
    would not hold; the first such reason, with the symbols of every guard and tensor that
    failed (the ones holding at their examples may mend). What kinspect cannot read says
    nothing against the sizes."""
    import sympy

    env = graph.sizevars.shape_env
    known = set(symbols.values())
    at_example = {symbols[n]: sympy.Integer(v) for n, v in (examples(env, symbols) or {}).items()}
    guards = [g.expr for g in getattr(env, "guards", ()) if g.expr.free_symbols and g.expr.free_symbols <= known]
    numels: dict[Any, str] = {}  # each element count once, by the first tensor of it
    with contextlib.suppress(Exception):  # FX metadata kinspect cannot read
        for name, numel in _tensor_numels(graph):
            free = numel.free_symbols
            if free and free <= known and free <= at_example.keys() and int(numel.xreplace(at_example)) <= INT32_ELEMENTS:
                numels.setdefault(numel, name)

    def why_not(values: Mapping[str, int]) -> Refusal | None:
        subs = {symbols[n]: sympy.Integer(v) for n, v in values.items() if n in symbols}
        whys, names = [], set()
        for g in guards:
            if g.free_symbols <= subs.keys() and not _holds(lambda: g.xreplace(subs) != sympy.false):
                text = str(g)
                whys.append(f"a guard of the graph ({text if len(text) <= 200 else text[:199] + '…'}) fails")
                names |= {s.name for s in g.free_symbols}
        for numel, name in numels.items():
            if numel.free_symbols <= subs.keys() and not _holds(lambda: int(numel.xreplace(subs)) <= INT32_ELEMENTS):
                whys.append(f"{name} of the graph passes 2**31 elements (32-bit indexing)")
                names |= {s.name for s in numel.free_symbols}
        return Refusal(whys[0], frozenset(names)) if whys else None

    return why_not


def _holds(check: Callable[[], bool]) -> bool:
    """A guard or a bound that divides by zero at some sizes does not hold there (GPT-2's loss
    graph guards `Ne(Mod(s88, ((s3*s85*s88)//s8)), 0)`, and s3*s85*s88 may be below s8)."""
    try:
        return bool(check())
    except ZeroDivisionError:
        return False


def _nodes(graph: Any) -> Iterator[Any]:
    """The FX nodes of the graph's module, nested compile regions' bodies included."""
    module = getattr(graph, "module", None)
    modules = module.modules() if hasattr(module, "modules") else [module] if module is not None else []
    for m in modules:
        yield from getattr(getattr(m, "graph", None), "nodes", ())


def _tensor_numels(graph: Any) -> Iterator[tuple[str, Any]]:
    """Each tensor the graph's FX nodes compute or take, by node name, with its element count
    as a sympy expression."""
    import sympy
    import torch
    import torch.utils._pytree as pytree

    for node in _nodes(graph):
        for t in pytree.tree_leaves(node.meta.get("val")):
            if isinstance(t, torch.Tensor):
                n = t.numel()
                yield node.name, (n.node.expr if isinstance(n, torch.SymInt) else sympy.Integer(n))


def gemms(graph: Any) -> list[Problem]:
    """Every GEMM of the graph's FX module (nested compile regions' bodies included), with
    its operands' and output's sizes, from the fake tensors Dynamo traced."""
    out = []
    for node in _nodes(graph):
        op = gemm_op(str(getattr(node, "target", ""))) if node.op == "call_function" else None
        if op is None:
            continue
        tensors = [a.meta.get("val") for a in node.all_input_nodes] + [node.meta.get("val")]
        operands = tuple(o for o in map(_operand, tensors) if o is not None)
        if operands:
            where = None
            with contextlib.suppress(Exception):  # Dynamo's module stack is optional metadata
                where = describe(node).module
            out.append(Problem(f"{op} at {where}" if where else f"{op} ({node.name})", operands))
    return out


def _operand(t: Any) -> Operand | None:
    shape, dtype = getattr(t, "shape", None), getattr(t, "dtype", None)
    if shape is None or dtype is None:
        return None
    try:
        sizes = tuple(SizeExpr.from_sympy(getattr(getattr(s, "node", None), "expr", s)) for s in shape)
    except ValueError:
        return None
    return Operand(sizes, int(getattr(dtype, "itemsize", 2)))
