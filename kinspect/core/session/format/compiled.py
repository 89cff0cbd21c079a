"""What a compile made: symbols, graphs and sites with their variants and call sites.

Each record's JSON form and its reading sit side by side, so a field added to one is in
sight of the other; the recording log writes these same records as the compile makes them.
"""

from __future__ import annotations

import math
from typing import Any

from kinspect.core.errors import echo
from kinspect.core.session.model import AutotuneRow, CallSite, Graph, Site, SymbolInfo, Variant
from kinspect.core.session.format.checks import (
    MAX_RANK,
    MAX_SOURCE,
    MAX_TENSORS,
    MAX_TEXT,
    MAX_WRAPPER,
    SOURCE_CONTROLS,
    a_key,
    a_list,
    a_number,
    a_scalar_map,
    a_string,
    a_string_or_null,
    an_int,
    an_int_or_null,
    an_object,
    failure,
    key_to_json,
)
from kinspect.core.session.format.benchmark_tensors import misfit_from_json, misfit_to_json
from kinspect.core.dispatch.hint_sizes import Assignment
from kinspect.core.dispatch.shapes import MAX_SIZE
from kinspect.core.dispatch.symbolic import SYMBOL_NAME, ExprError, SizeExpr, TensorSpec

MAX_HINTS = 1_000
"""Hints one graph may record sizes for: far more than any compile tunes."""
MAX_SYMBOLS = 10_000
"""Symbols one hint's sizes may name."""


def symbol_to_json(s: SymbolInfo) -> dict[str, Any]:
    return {"name": s.name, "alias": s.alias, "sources": list(s.sources), "input": s.input, "dim": s.dim, "example": s.example}


def symbol_from_json(d: Any, path: str) -> SymbolInfo:
    d = an_object(d, path)
    return SymbolInfo(
        name=a_string(d.get("name"), f"{path}.name", 64),
        alias=_alias(d.get("alias"), f"{path}.alias"),
        sources=tuple(a_string(s, f"{path}.sources[{i}]") for i, s in enumerate(a_list(d.get("sources", []), f"{path}.sources", 64))),
        input=a_string_or_null(d.get("input"), f"{path}.input"),
        dim=an_int_or_null(d.get("dim"), f"{path}.dim", 0, MAX_RANK),
        example=an_int_or_null(d.get("example"), f"{path}.example"),
    )


def _alias(value: Any, path: str) -> str | None:
    """The user's name for a size, which they type in shapes and conditions: an identifier."""
    alias = a_string_or_null(value, path, 64)
    if alias is not None and not SYMBOL_NAME.match(alias):
        raise failure(path, f"{echo(alias)} is not a size name (an identifier, not starting with __)")
    return alias


def tensor_to_json(t: TensorSpec) -> dict[str, Any]:
    return {"name": t.name, "role": t.role, "sizes": [s.to_json() for s in t.sizes]}


def tensor_from_json(value: Any, path: str) -> TensorSpec:
    d = an_object(value, path)
    sizes = []
    for j, s in enumerate(a_list(d.get("sizes"), f"{path}.sizes", MAX_RANK)):
        try:
            sizes.append(SizeExpr.from_json(s))
        except ExprError as e:
            raise failure(f"{path}.sizes[{j}]", str(e)) from None
    return TensorSpec(
        name=a_string(d.get("name"), f"{path}.name"),
        role=a_string(d.get("role", "input"), f"{path}.role"),
        sizes=tuple(sizes),
    )


def variant_to_json(v: Variant) -> dict[str, Any]:
    return {
        "hint": v.hint, "key": key_to_json(v.key), "kernel_name": v.kernel_name,
        "source": v.source, "source_hash": v.source_hash, "source_path": v.source_path,
        "config": dict(v.config),
        "autotune": [{"name": r.name, "time_us": r.time_us, "description": r.description} for r in v.autotune],
        "winner": v.winner,
        "emitted": v.emitted,
    } | ({"fused": [{"name": r.name, "time_us": r.time_us} for r in v.fused]} if v.fused else {})


def variant_from_json(d: Any, path: str, index: int) -> Variant:
    d = an_object(d, path)
    rows = []
    for i, r in enumerate(a_list(d.get("autotune", []), f"{path}.autotune", 10_000)):
        r = an_object(r, f"{path}.autotune[{i}]")
        rows.append(
            AutotuneRow(
                name=a_string(r.get("name"), f"{path}.autotune[{i}].name", MAX_TEXT),
                time_us=_autotune_time(r.get("time_us"), f"{path}.autotune[{i}].time_us"),
                description=a_string(r.get("description", ""), f"{path}.autotune[{i}].description", MAX_TEXT),
            )
        )
    fused = []
    for i, r in enumerate(a_list(d.get("fused", []), f"{path}.fused", 10_000)):
        r = an_object(r, f"{path}.fused[{i}]")
        fused.append(AutotuneRow(name=a_string(r.get("name"), f"{path}.fused[{i}].name", MAX_TEXT),
                                 time_us=_autotune_time(r.get("time_us"), f"{path}.fused[{i}].time_us")))
    key = d.get("key")
    return Variant(
        index=index,
        hint=an_int_or_null(d.get("hint"), f"{path}.hint"),
        key=None if key is None else a_key(key, f"{path}.key"),
        kernel_name=a_string(d.get("kernel_name"), f"{path}.kernel_name"),
        source=a_string(d.get("source", ""), f"{path}.source", MAX_SOURCE, SOURCE_CONTROLS),
        source_hash=a_string(d.get("source_hash", ""), f"{path}.source_hash"),
        config=a_scalar_map(d.get("config", {}), f"{path}.config"),
        autotune=tuple(rows),
        winner=a_string_or_null(d.get("winner"), f"{path}.winner", MAX_TEXT),
        emitted=a_string_or_null(d.get("emitted"), f"{path}.emitted", MAX_TEXT),
        source_path=a_string_or_null(d.get("source_path"), f"{path}.source_path", MAX_TEXT),
        fused=tuple(fused),
    )


def _autotune_time(value: Any, path: str) -> float | None:
    """Inductor times a choice that failed to compile or run as infinity, which sessions
    written before kinspect stored it as null hold as `Infinity`: read as null, no time."""
    return None if value == math.inf else a_number(value, path)


def call_site_to_json(c: CallSite) -> dict[str, Any]:
    return {
        "node": c.node, "call": c.call, "line": c.line, "module": c.module, "module_class": c.module_class,
        "file": c.file, "lineno": c.lineno, "code": c.code,
    }


def call_site_from_json(d: Any, path: str, index: int) -> CallSite:
    d = an_object(d, path)
    return CallSite(
        index=index,
        node=a_string_or_null(d.get("node"), f"{path}.node"),
        call=a_string_or_null(d.get("call"), f"{path}.call", MAX_TEXT),
        line=an_int_or_null(d.get("line"), f"{path}.line"),
        module=a_string_or_null(d.get("module"), f"{path}.module", MAX_TEXT),
        module_class=a_string_or_null(d.get("module_class"), f"{path}.module_class"),
        file=a_string_or_null(d.get("file"), f"{path}.file", MAX_TEXT),
        lineno=an_int_or_null(d.get("lineno"), f"{path}.lineno"),
        code=a_string_or_null(d.get("code"), f"{path}.code", MAX_TEXT),
    )


def site_to_json(s: Site) -> dict[str, Any]:
    return {
        "name": s.name,
        "graph": s.graph,
        "op": s.op,
        "tensors": [tensor_to_json(t) for t in s.tensors],
        "runtime_tensors": None if s.runtime_tensors is None else [tensor_to_json(t) for t in s.runtime_tensors],
        "call": s.call,
        "call_sites": [call_site_to_json(c) for c in s.call_sites],
        "variants": [variant_to_json(v) for v in s.variants],
    }


def site_from_json(d: Any, path: str) -> Site:
    d = an_object(d, path)
    variants = a_list(d.get("variants"), f"{path}.variants", 256)
    if not variants:
        raise failure(f"{path}.variants", "a site needs at least one variant")
    rt = d.get("runtime_tensors")
    return Site(
        name=a_string(d.get("name"), f"{path}.name"),
        graph=a_string(d.get("graph", ""), f"{path}.graph"),
        op=a_string(d.get("op", ""), f"{path}.op"),
        tensors=tuple(tensor_from_json(t, f"{path}.tensors[{i}]")
                      for i, t in enumerate(a_list(d.get("tensors", []), f"{path}.tensors", MAX_TENSORS))),
        variants=tuple(variant_from_json(v, f"{path}.variants[{i}]", i) for i, v in enumerate(variants)),
        runtime_tensors=None if rt is None else tuple(
            tensor_from_json(t, f"{path}.runtime_tensors[{i}]")
            for i, t in enumerate(a_list(rt, f"{path}.runtime_tensors", MAX_TENSORS))
        ),
        call=a_string_or_null(d.get("call"), f"{path}.call", MAX_TEXT),
        call_sites=tuple(call_site_from_json(c, f"{path}.call_sites[{i}]", i)
                         for i, c in enumerate(a_list(d.get("call_sites", []), f"{path}.call_sites", 10_000))),
    )


def graph_to_json(g: Graph) -> dict[str, Any]:
    out = {
        "name": g.name, "wrapper_path": g.wrapper_path, "sites": list(g.sites),
        "no_site_reason": g.no_site_reason, "wrapper_code": g.wrapper_code,
    }
    if g.misfits:
        out["misfits"] = [misfit_to_json(m) for m in g.misfits]
    if g.hint_sizes:
        out["hint_sizes"] = [{"hint": a.hint, "values": dict(a.values), "lowered_for": a.lowered_for,
                              **({"held": list(a.held)} if a.held else {})}
                             for a in g.hint_sizes]
    if g.parameters:
        out["parameters"] = dict(g.parameters)
    return out


def assignment_from_json(d: Any, path: str) -> Assignment:
    d = an_object(d, path)
    values = an_object(d.get("values"), f"{path}.values")
    if len(values) > MAX_SYMBOLS:
        raise failure(f"{path}.values", f"more than {MAX_SYMBOLS:,} symbols")
    for name in values:
        if not SYMBOL_NAME.match(name):
            raise failure(f"{path}.values", f"{echo(name)} is not a symbol name")
    held = tuple(a_string(s, f"{path}.held[{i}]") for i, s in enumerate(a_list(d.get("held", []), f"{path}.held", MAX_SYMBOLS)))
    for name in held:
        if name not in values:
            raise failure(f"{path}.held", f"{echo(name)} is no symbol of the assignment")
    return Assignment(an_int(d.get("hint"), f"{path}.hint", 1),
                      # an int Dynamo made a size symbol keeps its own value (an ignore index of -100)
                      {name: an_int(v, f"{path}.values.{name}", -MAX_SIZE) for name, v in values.items()},
                      a_string_or_null(d.get("lowered_for"), f"{path}.lowered_for", MAX_TEXT), held)


def graph_from_json(d: Any, path: str) -> Graph:
    d = an_object(d, path)
    return Graph(
        name=a_string(d.get("name"), f"{path}.name"),
        wrapper_path=a_string_or_null(d.get("wrapper_path"), f"{path}.wrapper_path", MAX_TEXT),
        sites=tuple(a_string(s, f"{path}.sites[{i}]") for i, s in enumerate(a_list(d.get("sites", []), f"{path}.sites", 10_000))),
        no_site_reason=a_string_or_null(d.get("no_site_reason"), f"{path}.no_site_reason", MAX_TEXT),
        wrapper_code=a_string_or_null(d.get("wrapper_code"), f"{path}.wrapper_code", MAX_WRAPPER, SOURCE_CONTROLS),
        misfits=tuple(misfit_from_json(m, f"{path}.misfits[{i}]")
                      for i, m in enumerate(a_list(d.get("misfits", []), f"{path}.misfits", 100_000))),
        hint_sizes=tuple(assignment_from_json(a, f"{path}.hint_sizes[{i}]")
                         for i, a in enumerate(a_list(d.get("hint_sizes", []), f"{path}.hint_sizes", MAX_HINTS))),
        parameters=_parameters(d.get("parameters", {}), f"{path}.parameters"),
    )


def _parameters(value: Any, path: str) -> dict[str, str]:
    d = an_object(value, path)
    if len(d) > 100_000:
        raise failure(path, f"holds {len(d):,} entries, more than 100,000")
    return {a_string(k, f"{path} key"): a_string(v, f"{path}[{echo(k)}]") for k, v in d.items()}
