"""From what the hooks captured to the session model: symbols, graphs, sites.

The capture records Inductor's facts as Inductor holds them (one record per template
node, sympy sizes, Dynamo source names); the session holds them as a user reads them.
Two translations matter beyond copying:

- Inductor names a multi-kernel per distinct set of kernels, so a layer repeated N times
  gives N template nodes, N `SizeHintMultiKernel`s and one `multi_kernel_0` called from N
  wrapper lines. Those records become one `Site` with N `CallSite`s, each tied to its
  wrapper line, so events can say which layer ran.
- A nested compile region (`--compile-layers-once`) is lowered once: one template node,
  one wrapper line inside the region's function (`def repeated_subgraph0(args):`), and the
  graph calls that function once per layer. Each of those calls is a call site of its own,
  named by the layer that made it (`h.1.mlp.c_fc`), so events still say which layer ran.
- Inductor's names restart per graph (`multi_kernel_0` in a recompile's graph too), so a
  site's session name carries its graph after the first: `multi_kernel_0@graph_1`.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kinspect.core.inductor_code.calls import call_lines, region_calls, region_of
from kinspect.core.session.benchmark_tensors import TemplateMisfit
from kinspect.core.session.model import COMPILE_DIED, AutotuneRow, CallSite, Graph, Site, SymbolInfo, Variant
from kinspect.core.dispatch.symbolic import SizeExpr, TensorSpec
from kinspect.inductor.hooks.benchmark_tensors import Seen
from kinspect.inductor.hooks.capture import GraphRecord, SiteRecord
from kinspect.inductor.launch.modelfile import DynamicDim
from kinspect.inductor.hooks.origins import Origin

_SOURCE = re.compile(r"^L\['(?P<name>[A-Za-z_][A-Za-z0-9_]*)'\](?:\[(?P<pos>\d+)\])?\.size\(\)\[(?P<dim>\d+)\]$")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def site_name(graph_index: int, name: str) -> str:
    """A site's name in the session: Inductor's, with its graph after the first graph."""
    return name if graph_index == 0 else f"{name}@graph_{graph_index}"


def symbols(graphs: Sequence[GraphRecord], dyn: Sequence[DynamicDim], params: Sequence[str],
            examples: Mapping[str, int]) -> list[SymbolInfo]:
    """Each graph symbol with the model file's name for it (`B`), read off Dynamo's sources."""
    by_pos = {(d.input, d.dim): d.names for d in dyn}
    seen: dict[str, SymbolInfo] = {}
    for g in graphs:
        for sym, sources in g.symbols.items():
            if sym in seen or not _IDENT.fullmatch(sym):
                continue
            alias = input_name = dim = None
            for src in sources:
                m = _SOURCE.match(src)
                if not m:
                    continue
                pos = int(m["pos"]) if m["pos"] is not None else (
                    params.index(m["name"]) if m["name"] in params else None)
                if pos is None:
                    continue
                names = by_pos.get((pos, int(m["dim"])))
                input_name = params[pos] if pos < len(params) else f"input {pos}"
                dim = int(m["dim"])
                if names and len(names) == 1:
                    alias = names[0]
                    break
            seen[sym] = SymbolInfo(sym, alias, tuple(sources)[:16], input_name, dim,
                                   examples.get(alias) if alias else None)
    return list(seen.values())


def graph(g: GraphRecord, code: str | None, hints: Sequence[int]) -> Graph:
    names = tuple(dict.fromkeys(site_name(g.index, r.name) for r in g.sites))
    return Graph(g.name, g.wrapper_path, names, None if names else no_site_reason(g, hints), code, misfits(g),
                 g.hint_sizes)


def op_of(g: GraphRecord, seen: Seen) -> tuple[str, str | None]:
    """The op of the template a misfit was seen in and the session's site name for it (None:
    no site was made, as when the compile died first)."""
    for r in g.sites:
        if tuple(n for n, role, _ in r.tensors if role == "input") == seen.inputs:
            return r.op, site_name(g.index, r.name)
    return g.misfit_ops.get(seen.inputs, "a template"), None


def misfits(g: GraphRecord) -> tuple[TemplateMisfit, ...]:
    """The benchmark tensors the graph's compile saw misfit, each tied to its site."""
    out = []
    for seen in g.misfits:
        op, site = op_of(g, seen)
        out.append(TemplateMisfit(seen.misfit, op, seen.inputs, seen.index, seen.fitted, site))
    return tuple(out)


def _tokens(text: str) -> set[str]:
    return set(_IDENT.findall(text))


def _match_calls(records: Sequence[SiteRecord], lines: list[tuple[int, str]]) -> list[tuple[int, str] | None]:
    """The wrapper line of each record: the line passing the record's template buffer,
    else the next unclaimed line in wrapper order (codegen emits calls in record order)."""
    out: list[tuple[int, str] | None] = [None] * len(records)
    free = list(lines)
    for i, rec in enumerate(records):
        hit = next((ln for ln in free if rec.node in _tokens(ln[1])), None)
        if hit is not None:
            out[i] = hit
            free.remove(hit)
    for i in range(len(records)):
        if out[i] is None and free:
            out[i] = free.pop(0)
    return out


def sites(g: GraphRecord, code: str | None, facts_for: Callable[[str], list[dict[str, Any]]]) -> list[Site]:
    """One `Site` per multi-kernel name in the graph, with a call site per record (per
    layer, for a record inside a nested compile region)."""
    groups: dict[str, list[SiteRecord]] = {}
    for rec in g.sites:
        groups.setdefault(rec.name, []).append(rec)
    lines = code.splitlines() if code else []
    out = []
    for name, records in groups.items():
        matched = _match_calls(records, call_lines(code, name))
        calls: list[CallSite] = []
        for rec, line in zip(records, matched):
            region = region_of(lines, line[0]) if line else None
            if region is None:
                calls.append(_call_site(len(calls), rec, line, rec.origin))
                continue
            callers = g.regions.get(region, [])
            for i, (outer, _) in enumerate(region_calls(lines, region)):
                layer = callers[i] if i < len(callers) else None
                calls.append(_call_site(len(calls), rec, (outer, line[1]), in_layer(rec.origin, callers[:1], layer)))
        out.append(_site(g, records[0], facts_for(site_name(g.index, name)), tuple(calls)))
    return out


def in_layer(origin: Origin | None, first: Sequence[Origin], layer: Origin | None) -> Origin | None:
    """A region's template as one layer's call made it: the region was traced at its first
    call (`h.0.mlp.c_fc`), so that call's module path gives way to this one's (`h.1`)."""
    if origin is None or origin.module is None or layer is None or layer.module is None or not first:
        return origin
    traced = first[0].module
    if traced is None or not (origin.module == traced or origin.module.startswith(traced + ".")):
        return origin
    return dataclasses.replace(origin, module=layer.module + origin.module[len(traced):])


def _call_site(index: int, rec: SiteRecord, line: tuple[int, str] | None, o: Origin | None) -> CallSite:
    return CallSite(
        index=index, node=rec.node if rec.node != "?" else None,
        call=line[1] if line else None, line=line[0] if line else None,
        module=o.module if o else None, module_class=o.module_class if o else None,
        file=o.file if o else None, lineno=o.line if o else None, code=o.code if o else None,
    )


def _site(g: GraphRecord, rec: SiteRecord, facts: list[dict[str, Any]], calls: tuple[CallSite, ...]) -> Site:
    """The multi-kernel as its first record defines it: the wrapper defines it once, with
    the first record's keys, and every later call site runs those variants."""
    tensors = tuple(
        TensorSpec(n, role, tuple(SizeExpr.from_sympy(e) for e in sizes))
        for n, role, sizes in rec.tensors
    )
    runtime = tuple(
        TensorSpec(n, "arg", tuple(SizeExpr.from_sympy(e) for e in sizes))
        for n, sizes in rec.runtime_args if sizes is not None
    )
    hint_of = {k: h for h, k in rec.hint_keys.items()}
    variants = []
    for i, key in enumerate(rec.keys):
        hint = hint_of.get(key)
        table = g.timings.get((rec.node, hint), [])
        triton = [c for c in table if c.is_triton and c.time_ms is not None]
        winner = min(triton, key=lambda c: c.time_ms).name if triton else None
        emitted = g.emitted.get((rec.node, hint))
        f = facts[i] if i < len(facts) else {}
        variants.append(Variant(
            index=i, hint=hint, key=key, kernel_name=rec.kernel_names[i],
            source=f.get("source", ""), source_hash=f.get("source_hash", ""),
            source_path=f.get("source_path"), config=f.get("config", {}),
            autotune=tuple(
                AutotuneRow(c.name, None if c.time_ms is None or not math.isfinite(c.time_ms) else round(c.time_ms * 1000, 3),
                            c.description)
                for c in sorted(table, key=lambda c: (c.time_ms is None, c.time_ms or 0))
            ),
            winner=winner, emitted=emitted[0] if emitted else None,
            fused=tuple(AutotuneRow(name, round(ms * 1000, 3)) for name, ms in g.fused.get((rec.node, hint), ())),
        ))
    same = [t.sizes for t in runtime] == [t.sizes for t in tensors]
    return Site(site_name(g.index, rec.name), g.name, rec.op, tensors, tuple(variants),
                runtime_tensors=None if same or not runtime else runtime,
                call=calls[0].call if calls else None, call_sites=calls)


def _died_of(g: GraphRecord) -> str:
    """What kinspect saw that explains a compile that died autotuning at a hint: the first
    benchmark tensor its kernel read past (CUDA reports such a fault late, at a later call)
    and the option that tunes each hint on one problem; else the autotuning that raised."""
    short = [s for s in g.misfits if s.misfit.short]
    if not short:
        at = g.died_at
        if at is None or at.hint is None:
            return ""
        out = f": it raised while autotuning {at.op} ({at.node}) at hint {at.hint}"
        if g.per_symbol:
            return out
        return out + (" (at a hint, stock Inductor's sizes disagree where a GEMM's rows are a product of sizes); "
                      "--one-size-per-symbol tunes each hint on one problem")
    first = short[0]
    op, _ = op_of(g, first)
    return (f": at hint {first.misfit.hint}, {op}'s {first.misfit.tensor} was autotuned on a tensor smaller than its "
            f"kernel reads (Inductor's sizes at a hint disagree; {len(short)} such tensor"
            f"{'s' if len(short) > 1 else ''} in all); --one-size-per-symbol tunes each hint on one problem")


def died(g: GraphRecord) -> str:
    """A compile that raised before Inductor wrote the graph's code, and what explains it."""
    return f"{COMPILE_DIED}, so no kernel was chosen" + _died_of(g)


def no_site_reason(g: GraphRecord, hints: Sequence[int]) -> str:
    if g.cpp_wrapper:
        return "cpp_wrapper picks one kernel at compile time, so there is no runtime dispatch"
    if not hints:
        return "no multi_kernel_hints were set"
    if not g.dynamic_inputs:
        return "no dynamic dim reaches this graph, so every size is static and one kernel suffices"
    if g.templates == 0:
        return "no GEMM Inductor could render as a Triton template (no mm/addmm/bmm here)"
    if g.wrapper_path is None:
        return died(g)
    if not g.finalized:
        return "an extern kernel (e.g. cuBLAS) beat every Triton template in autotuning"
    return "the Triton templates chosen here have no dynamic size (Inductor needs one for a size-hint key)"
