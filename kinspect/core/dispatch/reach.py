"""Whether a shape can reach a site at all, before it is decided there.

Inductor decides whatever key a site's call hands it, but a user who types a whole key
(the four tensors of one Linear) and lets another site decide it gets a distance out of
sizes that site can never see: its static dims count as mismatches (13.93 at samples/mlp.py's
second Linear). A key reaches a site when it has the site's tensors and ranks, every static
dim has its size, and the symbolic dims agree with one value per symbol.

Dynamo specialises sizes 0 and 1: a call where a dynamic dim is 0 or 1 compiles a graph of
its own, so the graph under inspection never sees it; such shapes are refused too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kinspect.core.dispatch.shapes import Key, format_key
from kinspect.core.dispatch.symbolic import TensorSpec
from kinspect.core.errors import ShapeError

SPECIALISED = (0, 1)
"""Sizes Dynamo never passes for a dynamic dim."""


def never_sent(values: Mapping[str, int], label: Mapping[str, str] | None = None) -> str | None:
    """Why the graph never sees these symbol values, or None when it may."""
    label = label or {}
    for name, v in values.items():
        if v in SPECIALISED:
            shown = label.get(name, name)
            return (f"{shown}={v}: Dynamo specialises sizes 0 and 1, so this graph never sees "
                    f"{shown}={v} (such a call compiles a graph of its own)")
    return None


def unreachable(specs: Sequence[TensorSpec], key: Key, names: Sequence[str],
           label: Mapping[str, str] | None = None) -> str | None:
    """Why `key` cannot be the runtime key of a site keyed on `specs` (the user's tensor
    names in `names`), or None when it can."""
    if len(key) != len(specs):
        return f"the key has {len(key)} tensors; this site is keyed on {len(specs)} ({', '.join(names)})"
    values: dict[str, int] = {}
    for spec, name, shape in zip(specs, names, key):
        if len(shape) != len(spec.sizes):
            return f"{name} has {len(spec.sizes)} dims here, the key gives it {len(shape)}: {format_key((shape,))}"
        for d, (expr, size) in enumerate(zip(spec.sizes, shape)):
            if expr.is_constant and expr.tree != size:
                return f"{name} dim {d} is always {expr.tree} here, the key gives {size}"
            if isinstance(expr.tree, str):
                if values.setdefault(expr.tree, size) != size:
                    shown = (label or {}).get(expr.tree, expr.tree)
                    return f"{shown} is {values[expr.tree]} in one dim and {size} in another"
    for spec, name, shape in zip(specs, names, key):
        for d, (expr, size) in enumerate(zip(spec.sizes, shape)):
            if expr.is_constant or isinstance(expr.tree, str) or not expr.symbols <= values.keys():
                continue
            try:
                want = expr.evaluate(values)
            except ShapeError:
                continue
            if want != size:
                text = expr.text_with(dict(label or {}))
                return f"{name} dim {d} is {text} = {want} for the other dims, the key gives {size}"
    return never_sent(values, label)
