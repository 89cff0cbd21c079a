"""The benchmark-tensor misfits a graph's compile saw, to and from JSON side by side.

Their layout expressions come from a file anyone can write: they are kept as text and only
ever displayed (renamed token by token by the finding), never parsed or evaluated."""

from __future__ import annotations

from typing import Any

from kinspect.core.session.format.checks import (
    MAX_RANK,
    MAX_TENSORS,
    MAX_TEXT,
    a_bool,
    a_list,
    a_string,
    a_string_or_null,
    an_int,
    an_int_or_null,
    an_object,
    failure,
)
from kinspect.core.session.benchmark_tensors import PATHS, Concrete, Layout, Misfit, Replaced, TemplateMisfit


def misfit_to_json(t: TemplateMisfit) -> dict[str, Any]:
    m = t.misfit
    return {
        "site": t.site, "op": t.op, "inputs": list(t.inputs), "index": t.index, "fitted": t.fitted,
        "tensor": m.tensor, "hint": m.hint, "path": m.path,
        "layout": {"size": list(m.layout.size), "stride": list(m.layout.stride), "offset": m.layout.offset},
        "given": _concrete_to_json(m.given), "needed": _concrete_to_json(m.needed),
        "replaced": [{"where": r.where, "expr": r.expr, "given": r.given, "at_hint": r.at_hint} for r in m.replaced],
    }


def misfit_from_json(d: Any, path: str) -> TemplateMisfit:
    d = an_object(d, path)
    where = a_string(d.get("path"), f"{path}.path")
    if where not in PATHS:
        raise failure(f"{path}.path", f"must be one of {', '.join(PATHS)}")
    lay = an_object(d.get("layout"), f"{path}.layout")
    inputs = tuple(a_string(v, f"{path}.inputs[{i}]")
                   for i, v in enumerate(a_list(d.get("inputs"), f"{path}.inputs", MAX_TENSORS)))
    index = an_int_or_null(d.get("index"), f"{path}.index", hi=MAX_TENSORS)
    if index is not None and index >= len(inputs):
        raise failure(f"{path}.index", f"names input {index} of a template with {len(inputs)}")
    replaced = []
    for i, r in enumerate(a_list(d.get("replaced", []), f"{path}.replaced", 3 * MAX_RANK + 1)):
        r = an_object(r, f"{path}.replaced[{i}]")
        replaced.append(Replaced(a_string(r.get("where"), f"{path}.replaced[{i}].where"),
                                 a_string(r.get("expr"), f"{path}.replaced[{i}].expr", MAX_TEXT),
                                 an_int(r.get("given"), f"{path}.replaced[{i}].given"),
                                 an_int(r.get("at_hint"), f"{path}.replaced[{i}].at_hint")))
    misfit = Misfit(
        tensor=a_string(d.get("tensor"), f"{path}.tensor"),
        hint=an_int(d.get("hint"), f"{path}.hint"),
        path=where,
        layout=Layout(_exprs(lay.get("size"), f"{path}.layout.size"), _exprs(lay.get("stride"), f"{path}.layout.stride"),
                      a_string(lay.get("offset", "0"), f"{path}.layout.offset", MAX_TEXT)),
        given=_concrete_from_json(d.get("given"), f"{path}.given"),
        needed=_concrete_from_json(d.get("needed"), f"{path}.needed"),
        replaced=tuple(replaced),
    )
    return TemplateMisfit(misfit, a_string(d.get("op"), f"{path}.op"), inputs, index,
                          a_bool(d.get("fitted"), f"{path}.fitted"),
                          a_string_or_null(d.get("site"), f"{path}.site"))


def _concrete_to_json(c: Concrete) -> dict[str, Any]:
    return {"size": list(c.size), "stride": list(c.stride), "offset": c.offset, "storage": c.storage}


def _concrete_from_json(d: Any, path: str) -> Concrete:
    d = an_object(d, path)
    return Concrete(_ints(d.get("size"), f"{path}.size"), _ints(d.get("stride"), f"{path}.stride"),
                    an_int(d.get("offset"), f"{path}.offset"), an_int(d.get("storage"), f"{path}.storage"))


def _ints(value: Any, path: str) -> tuple[int, ...]:
    return tuple(an_int(v, f"{path}[{i}]") for i, v in enumerate(a_list(value, path, MAX_RANK)))


def _exprs(value: Any, path: str) -> tuple[str, ...]:
    return tuple(a_string(v, f"{path}[{i}]", MAX_TEXT) for i, v in enumerate(a_list(value, path, MAX_RANK)))
