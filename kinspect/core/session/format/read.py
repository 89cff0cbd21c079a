"""A session file's sections into the session model, each field checked on the way.

The events come as columns of small integers, each distinct shape key once in a key
table, and become an `EventLog` over those columns, so opening a big recording builds no
per-event objects.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from kinspect.core.errors import SessionError, echo
from kinspect.core.session.eventlog import EventLog
from kinspect.core.session.model import (
    BASELINE_KINDS,
    FORMAT,
    INSPECTED_KINDS,
    RECOMPILE_PURPOSES,
    SEVERITIES,
    VERSION,
    AutotuneRow,
    Baseline,
    Environment,
    Finding,
    Graph,
    Measurement,
    ModelInfo,
    Session,
    CallSite,
    Recompile,
    Site,
    Sweep,
    SymbolInfo,
    Variant,
)
from kinspect.core.session.misfit import PATHS as MISFIT_PATHS, Concrete, Layout, Misfit, Replaced, TemplateMisfit
from kinspect.core.session.format.checks import (
    SOURCE_CONTROLS,
    MAX_RANK,
    MAX_RANKS,
    MAX_SOURCE,
    MAX_TENSORS,
    MAX_TEXT,
    MAX_WRAPPER,
    a_bool,
    failure,
    an_int,
    int_column,
    a_key,
    a_key_table,
    a_list,
    a_number,
    an_object,
    an_int_or_null,
    a_string_or_null,
    ref_column,
    a_scalar_map,
    size_maps,
    a_string,
    variant_column,
)
from kinspect.core.dispatch.shapes import MAX_SIZE, Key
from kinspect.core.dispatch.symbolic import SYMBOL_NAME, ExprError, SizeExpr, TensorSpec

EVENT_COLUMNS = ("seq", "site", "key", "picked", "predicted", "hit", "step", "t_ns", "override", "call_site")
"""The columns of `events`, in the order of DispatchEvent's fields."""
_NULLABLE = frozenset({"step", "t_ns", "override", "call_site"})
"""Columns whose values may be null, and that may be left out (all null)."""


def _tensor(value: Any, path: str) -> TensorSpec:
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


def _environment(d: Any) -> Environment:
    d = an_object(d, "environment")
    peaks = {
        a_string(k, "environment.peaks key"): a_number(v, f"environment.peaks.{k}")
        for k, v in an_object(d.get("peaks", {}), "environment.peaks").items()
    }
    return Environment(
        created=a_string(d.get("created"), "environment.created"),
        torch=a_string_or_null(d.get("torch"), "environment.torch"),
        triton=a_string_or_null(d.get("triton"), "environment.triton"),
        python=a_string_or_null(d.get("python"), "environment.python"),
        gpu=a_string_or_null(d.get("gpu"), "environment.gpu"),
        cuda=a_string_or_null(d.get("cuda"), "environment.cuda"),
        platform=a_string_or_null(d.get("platform"), "environment.platform"),
        config=a_scalar_map(d.get("config", {}), "environment.config"),
        peaks=peaks,
        rank=an_int_or_null(d.get("rank"), "environment.rank", 0, MAX_RANKS - 1),
        world_size=an_int_or_null(d.get("world_size"), "environment.world_size", 1, MAX_RANKS),
        local_rank=an_int_or_null(d.get("local_rank"), "environment.local_rank", 0, MAX_RANKS - 1),
    )


def _model(d: Any) -> ModelInfo:
    d = an_object(d if d is not None else {}, "model")
    workload = size_maps(d.get("workload", []), "model.workload", 1_000_000)
    return ModelInfo(
        path=a_string_or_null(d.get("path"), "model.path", MAX_TEXT),
        name=a_string_or_null(d.get("name"), "model.name"),
        hints=tuple(an_int(h, f"model.hints[{i}]") for i, h in enumerate(a_list(d.get("hints", []), "model.hints", 256))),
        workload=tuple(workload),
    )


def _symbol(d: Any, path: str) -> SymbolInfo:
    d = an_object(d, path)
    return SymbolInfo(
        name=a_string(d.get("name"), f"{path}.name", 64),
        alias=_alias(d.get("alias"), f"{path}.alias"),
        sources=tuple(a_string(s, f"{path}.sources[{i}]") for i, s in enumerate(a_list(d.get("sources", []), f"{path}.sources", 64))),
        input=a_string_or_null(d.get("input"), f"{path}.input"),
        dim=an_int_or_null(d.get("dim"), f"{path}.dim", 0, MAX_RANK),
        example=an_int_or_null(d.get("example"), f"{path}.example"),
    )


def _autotune_time(value: Any, path: str) -> float | None:
    """Inductor times a choice that failed to compile or run as infinity, which sessions
    written before kinspect stored it as null hold as `Infinity`: read as null, no time."""
    return None if value == math.inf else a_number(value, path)


def _alias(value: Any, path: str) -> str | None:
    """The user's name for a size, which they type in shapes and conditions: an identifier."""
    alias = a_string_or_null(value, path, 64)
    if alias is not None and not SYMBOL_NAME.match(alias):
        raise failure(path, f"{echo(alias)} is not a size name (an identifier, not starting with __)")
    return alias


def _variant(d: Any, path: str, index: int) -> Variant:
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
    )


def _call_site(d: Any, path: str, index: int) -> CallSite:
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


def _sizes(d: Any, path: str) -> dict[str, int]:
    return {a_string(k, f"{path} key", 64): an_int(v, f"{path}.{k}") for k, v in an_object(d, path).items()}


def _sweep(d: Any, path: str) -> Sweep:
    d = an_object(d, path)
    ranges = {}
    for k, v in an_object(d.get("ranges"), f"{path}.ranges").items():
        span = a_list(v, f"{path}.ranges.{a_string(k, f'{path}.ranges key', 64)}", 2)
        if len(span) != 2:
            raise failure(f"{path}.ranges.{k}", "expected [lo, hi]")
        ranges[k] = (an_int(span[0], f"{path}.ranges.{k}[0]"), an_int(span[1], f"{path}.ranges.{k}[1]"))
    points = tuple(_sizes(p, f"{path}.points[{i}]") for i, p in enumerate(a_list(d.get("points", []), f"{path}.points", 100_000)))
    skipped = []
    for i, x in enumerate(a_list(d.get("skipped", []), f"{path}.skipped", 100_000)):
        x = an_object(x, f"{path}.skipped[{i}]")
        skipped.append((_sizes(x.get("sizes"), f"{path}.skipped[{i}].sizes"),
                        a_string(x.get("reason"), f"{path}.skipped[{i}].reason", MAX_TEXT)))
    return Sweep(ranges, points, tuple(skipped))


def _site(d: Any, path: str) -> Site:
    d = an_object(d, path)
    variants = a_list(d.get("variants"), f"{path}.variants", 256)
    if not variants:
        raise failure(f"{path}.variants", "a site needs at least one variant")
    rt = d.get("runtime_tensors")
    return Site(
        name=a_string(d.get("name"), f"{path}.name"),
        graph=a_string(d.get("graph", ""), f"{path}.graph"),
        op=a_string(d.get("op", ""), f"{path}.op"),
        tensors=tuple(_tensor(t, f"{path}.tensors[{i}]") for i, t in enumerate(a_list(d.get("tensors", []), f"{path}.tensors", MAX_TENSORS))),
        variants=tuple(_variant(v, f"{path}.variants[{i}]", i) for i, v in enumerate(variants)),
        runtime_tensors=None if rt is None else tuple(
            _tensor(t, f"{path}.runtime_tensors[{i}]") for i, t in enumerate(a_list(rt, f"{path}.runtime_tensors", MAX_TENSORS))
        ),
        call=a_string_or_null(d.get("call"), f"{path}.call", MAX_TEXT),
        call_sites=tuple(_call_site(c, f"{path}.call_sites[{i}]", i)
                         for i, c in enumerate(a_list(d.get("call_sites", []), f"{path}.call_sites", 10_000))),
    )


def _graph(d: Any, path: str) -> Graph:
    d = an_object(d, path)
    return Graph(
        name=a_string(d.get("name"), f"{path}.name"),
        wrapper_path=a_string_or_null(d.get("wrapper_path"), f"{path}.wrapper_path", MAX_TEXT),
        sites=tuple(a_string(s, f"{path}.sites[{i}]") for i, s in enumerate(a_list(d.get("sites", []), f"{path}.sites", 10_000))),
        no_site_reason=a_string_or_null(d.get("no_site_reason"), f"{path}.no_site_reason", MAX_TEXT),
        wrapper_code=a_string_or_null(d.get("wrapper_code"), f"{path}.wrapper_code", MAX_WRAPPER, SOURCE_CONTROLS),
        misfits=tuple(_misfit(m, f"{path}.misfits[{i}]")
                      for i, m in enumerate(a_list(d.get("misfits", []), f"{path}.misfits", 100_000))),
    )


def _ints(value: Any, path: str) -> tuple[int, ...]:
    return tuple(an_int(v, f"{path}[{i}]") for i, v in enumerate(a_list(value, path, MAX_RANK)))


def _concrete(d: Any, path: str) -> Concrete:
    d = an_object(d, path)
    return Concrete(_ints(d.get("size"), f"{path}.size"), _ints(d.get("stride"), f"{path}.stride"),
                    an_int(d.get("offset"), f"{path}.offset"), an_int(d.get("storage"), f"{path}.storage"))


def _exprs(value: Any, path: str) -> tuple[str, ...]:
    return tuple(a_string(v, f"{path}[{i}]", MAX_TEXT) for i, v in enumerate(a_list(value, path, MAX_RANK)))


def _misfit(d: Any, path: str) -> TemplateMisfit:
    """A benchmark tensor's misfit, its expressions kept as text (only ever displayed)."""
    d = an_object(d, path)
    where = a_string(d.get("path"), f"{path}.path")
    if where not in MISFIT_PATHS:
        raise failure(f"{path}.path", f"must be one of {', '.join(MISFIT_PATHS)}")
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
        given=_concrete(d.get("given"), f"{path}.given"),
        needed=_concrete(d.get("needed"), f"{path}.needed"),
        replaced=tuple(replaced),
    )
    return TemplateMisfit(misfit, a_string(d.get("op"), f"{path}.op"), inputs, index,
                          a_bool(d.get("fitted"), f"{path}.fitted"),
                          a_string_or_null(d.get("site"), f"{path}.site"))


def _baseline(d: Any, path: str) -> Baseline:
    d = an_object(d, path)
    kind = a_string(d.get("kind"), f"{path}.kind")
    inspected = a_bool(d.get("inspected", False), f"{path}.inspected")
    if kind not in BASELINE_KINDS and kind not in INSPECTED_KINDS:
        raise failure(f"{path}.kind", f"must be one of {', '.join(dict.fromkeys(BASELINE_KINDS + INSPECTED_KINDS))}")
    if inspected and kind not in INSPECTED_KINDS:
        raise failure(f"{path}.kind", f"{kind} is compiled afresh, never timed on the inspected compile")
    if not inspected and kind not in BASELINE_KINDS:
        raise failure(f"{path}.kind", f'{kind} is only timed on the inspected compile ("inspected": true)')
    sizes = {a_string(k, f"{path}.sizes key", 64): an_int(v, f"{path}.sizes.{k}") for k, v in an_object(d.get("sizes"), f"{path}.sizes").items()}
    return Baseline(
        sizes=sizes, kind=kind,
        wall_us=a_number(d.get("wall_us"), f"{path}.wall_us"),
        gpu_us=a_number(d.get("gpu_us"), f"{path}.gpu_us"),
        error=a_string_or_null(d.get("error"), f"{path}.error", MAX_TEXT),
        inspected=inspected,
    )


def _recompile(d: Any, path: str) -> Recompile:
    d = an_object(d, path)
    purpose = a_string(d.get("purpose"), f"{path}.purpose")
    if purpose not in RECOMPILE_PURPOSES:
        raise failure(f"{path}.purpose", f"must be one of {', '.join(RECOMPILE_PURPOSES)}")
    variants = {}
    for name, vs in an_object(d.get("variants", {}), f"{path}.variants").items():
        where = f"{path}.variants.{a_string(name, f'{path}.variants key')}"
        rows = [an_object(v, f"{where}[{i}]") for i, v in enumerate(a_list(vs, where, 256))]
        variants[name] = tuple((an_int_or_null(v.get("hint"), f"{where}[{i}].hint", 1), a_string(v.get("kernel"), f"{where}[{i}].kernel"))
                               for i, v in enumerate(rows))
    return Recompile(
        hints=tuple(an_int(h, f"{path}.hints[{i}]", 1, MAX_SIZE) for i, h in enumerate(a_list(d.get("hints"), f"{path}.hints", 256))),
        purpose=purpose,
        variants=variants,
        measurements=tuple(_measurement(x, f"{path}.measurements[{i}]")
                           for i, x in enumerate(a_list(d.get("measurements", []), f"{path}.measurements"))),
        error=a_string_or_null(d.get("error"), f"{path}.error", MAX_TEXT),
    )


def _events(value: Any, sites: Sequence[Site], keys: Sequence[Key]) -> EventLog:
    d = an_object(value, "events")
    cols: dict[str, list[Any] | None] = {}
    for name in EVENT_COLUMNS:
        col = d.get(name)
        cols[name] = None if col is None and name in _NULLABLE else a_list(col, f"events.{name}")
    n = len(cols["seq"] or ())
    for name, col in cols.items():
        if col is not None and len(col) != n:
            raise failure("events", f"columns differ in length (seq has {n} entries, {name} has {len(col)})")
    seq, site, key, picked, predicted, hit, step, t_ns, override, call_site = cols.values()
    int_column(seq, "events.seq", MAX_SIZE)
    ref_column(site, "events.site", "site", "sites", len(sites))
    ref_column(key, "events.key", "key", "keys", len(keys))
    if not set(map(type, hit)) <= {bool}:
        for i, x in enumerate(hit):
            a_bool(x, f"events.hit[{i}]")
    for name, col in (("step", step), ("t_ns", t_ns)):
        if col is not None:
            int_column(col, f"events.{name}", MAX_SIZE, nullable=True)
    counts = [len(s.variants) for s in sites]
    for name, col in (("picked", picked), ("predicted", predicted), ("override", override)):
        if col is not None:
            variant_column(col, f"events.{name}", site, sites, counts, nullable=name in _NULLABLE)
    if call_site is not None:
        variant_column(call_site, "events.call_site", site, sites, [max(1, len(s.call_sites)) for s in sites],
                        what="call site", hi=MAX_SIZE)
    return EventLog(seq, site, [s.name for s in sites], key, keys, picked, predicted, hit, step, t_ns, override,
                    call_site)


def _measurement(d: Any, path: str) -> Measurement:
    d = an_object(d, path)
    return Measurement(
        site=a_string(d.get("site"), f"{path}.site"),
        key=a_key(d.get("key"), f"{path}.key"),
        variant=an_int(d.get("variant"), f"{path}.variant", 0, 255),
        method=a_string(d.get("method"), f"{path}.method"),
        median_us=a_number(d.get("median_us"), f"{path}.median_us"),
        p20_us=a_number(d.get("p20_us"), f"{path}.p20_us"),
        p80_us=a_number(d.get("p80_us"), f"{path}.p80_us"),
        samples=an_int(d.get("samples", 0), f"{path}.samples"),
        l2_flush=a_bool(d.get("l2_flush", False), f"{path}.l2_flush"),
        tflops=a_number(d.get("tflops"), f"{path}.tflops"),
        gbps=a_number(d.get("gbps"), f"{path}.gbps"),
        error=a_string_or_null(d.get("error"), f"{path}.error", MAX_TEXT),
    )


def _finding(d: Any, path: str) -> Finding:
    d = an_object(d, path)
    severity = a_string(d.get("severity", "warning"), f"{path}.severity")
    if severity not in SEVERITIES:
        raise failure(f"{path}.severity", f"must be one of {', '.join(SEVERITIES)}")
    return Finding(
        kind=a_string(d.get("kind"), f"{path}.kind"),
        message=a_string(d.get("message"), f"{path}.message", MAX_TEXT),
        severity=severity,
        site=a_string_or_null(d.get("site"), f"{path}.site"),
        graph=a_string_or_null(d.get("graph"), f"{path}.graph"),
        variants=tuple(an_int(v, f"{path}.variants[{i}]", 0, 255) for i, v in enumerate(a_list(d.get("variants", []), f"{path}.variants", 256))),
    )


def check_version(d: Mapping[str, Any], fmt: str) -> None:
    if d.get("format") != fmt:
        raise SessionError(f"not a kinspect session: missing \"format\": \"{fmt}\"")
    version = d.get("version")
    if version is None:
        raise SessionError("session has no \"version\"")
    if type(version) is not int or version != VERSION:  # true and 1.0 equal 1 in Python
        raise SessionError(f"session format version {echo(version)} is not supported (this kinspect reads version {VERSION})")


def session_from_json(d: Any) -> Session:
    d = an_object(d, "session")
    check_version(d, FORMAT)
    sites = [_site(x, f"sites[{i}]") for i, x in enumerate(a_list(d.get("sites", []), "sites", 10_000))]
    keys = a_key_table(d.get("keys", []), "keys")
    events = d.get("events")
    sites, events = _merge_shared(sites, events)
    s = Session(
        environment=_environment(d.get("environment")),
        model=_model(d.get("model")),
        symbols=[_symbol(x, f"symbols[{i}]") for i, x in enumerate(a_list(d.get("symbols", []), "symbols", 1024))],
        graphs=[_graph(x, f"graphs[{i}]") for i, x in enumerate(a_list(d.get("graphs", []), "graphs", 10_000))],
        sites=sites,
        events=[] if events is None else _events(events, sites, keys),
        measurements=[_measurement(x, f"measurements[{i}]") for i, x in enumerate(a_list(d.get("measurements", []), "measurements"))],
        findings=[_finding(x, f"findings[{i}]") for i, x in enumerate(a_list(d.get("findings", []), "findings"))],
        baselines=[_baseline(x, f"baselines[{i}]") for i, x in enumerate(a_list(d.get("baselines", []), "baselines", 10_000))],
        sweeps=[_sweep(x, f"sweeps[{i}]") for i, x in enumerate(a_list(d.get("sweeps", []), "sweeps", 1000))],
        recompiles=[_recompile(x, f"recompiles[{i}]") for i, x in enumerate(a_list(d.get("recompiles", []), "recompiles", 1000))],
    )
    _check_references(s)
    return s


def _merge_shared(sites: list[Site], events: Any) -> tuple[list[Site], Any]:
    """Files from before kinspect told call sites apart hold one site per call of a shared
    multi-kernel (same name, same graph, same variants): one site each again, its copies
    becoming call sites, and the events' site column pointing at the merged site."""
    slots: dict[tuple[str, str], int] = {}
    merged: list[Site] = []
    remap: list[tuple[int, int]] = []
    """Per site in the file: (its site in `merged`, its call site there)."""
    copies: dict[int, int] = {}
    for s in sites:
        slot = slots.get((s.name, s.graph))
        if slot is None:
            slots[(s.name, s.graph)] = len(merged)
            remap.append((len(merged), 0))
            merged.append(s)
            continue
        if merged[slot].keys != s.keys or merged[slot].call_sites or s.call_sites:
            raise SessionError("sites: two sites share a name")
        copies[slot] = copies.get(slot, 1) + 1
        remap.append((slot, copies[slot] - 1))
    if not copies:
        return sites, events
    for slot, n in copies.items():
        merged[slot] = replace(merged[slot], call_sites=tuple(CallSite(i) for i in range(n)))
    if isinstance(events, dict) and isinstance(events.get("site"), list) and events.get("call_site") is None:
        col = events["site"]
        if all(type(x) is int and 0 <= x < len(remap) for x in col):
            shared = [bool(merged[remap[x][0]].call_sites) for x in range(len(remap))]
            events = {**events, "site": [remap[x][0] for x in col],
                      "call_site": [remap[x][1] if shared[x] else None for x in col]}
    return merged, events


def _check_references(s: Session) -> None:
    names = [x.name for x in s.sites]
    if len(set(names)) != len(names):
        raise SessionError("sites: two sites share a name")
    variants = {x.name: len(x.variants) for x in s.sites}
    for i, m in enumerate(s.measurements):
        n = variants.get(m.site)
        if n is None or m.variant >= n:
            raise SessionError(f"measurements[{i}]: no variant {m.variant} of site {m.site!r}")
