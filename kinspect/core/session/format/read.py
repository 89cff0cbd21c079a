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
from kinspect.core.session.format.checks import (
    _SOURCE_OK,
    MAX_RANK,
    MAX_RANKS,
    MAX_SOURCE,
    MAX_TENSORS,
    MAX_TEXT,
    MAX_WRAPPER,
    _bool,
    _fail,
    _int,
    _int_column,
    _key,
    _key_table,
    _list,
    _num,
    _obj,
    _opt_int,
    _opt_str,
    _ref_column,
    _scalar_map,
    _size_maps,
    _str,
    _variant_column,
)
from kinspect.core.dispatch.shapes import MAX_SIZE, Key
from kinspect.core.dispatch.symbolic import SYMBOL_NAME, ExprError, SizeExpr, TensorSpec

EVENT_COLUMNS = ("seq", "site", "key", "picked", "predicted", "hit", "step", "t_ns", "override", "call_site")
"""The columns of `events`, in the order of DispatchEvent's fields."""
_NULLABLE = frozenset({"step", "t_ns", "override", "call_site"})
"""Columns whose values may be null, and that may be left out (all null)."""


def _tensor(value: Any, path: str) -> TensorSpec:
    d = _obj(value, path)
    sizes = []
    for j, s in enumerate(_list(d.get("sizes"), f"{path}.sizes", MAX_RANK)):
        try:
            sizes.append(SizeExpr.from_json(s))
        except ExprError as e:
            raise _fail(f"{path}.sizes[{j}]", str(e)) from None
    return TensorSpec(
        name=_str(d.get("name"), f"{path}.name"),
        role=_str(d.get("role", "input"), f"{path}.role"),
        sizes=tuple(sizes),
    )


def _environment(d: Any) -> Environment:
    d = _obj(d, "environment")
    peaks = {
        _str(k, "environment.peaks key"): _num(v, f"environment.peaks.{k}")
        for k, v in _obj(d.get("peaks", {}), "environment.peaks").items()
    }
    return Environment(
        created=_str(d.get("created"), "environment.created"),
        torch=_opt_str(d.get("torch"), "environment.torch"),
        triton=_opt_str(d.get("triton"), "environment.triton"),
        python=_opt_str(d.get("python"), "environment.python"),
        gpu=_opt_str(d.get("gpu"), "environment.gpu"),
        cuda=_opt_str(d.get("cuda"), "environment.cuda"),
        platform=_opt_str(d.get("platform"), "environment.platform"),
        config=_scalar_map(d.get("config", {}), "environment.config"),
        peaks=peaks,
        rank=_opt_int(d.get("rank"), "environment.rank", 0, MAX_RANKS - 1),
        world_size=_opt_int(d.get("world_size"), "environment.world_size", 1, MAX_RANKS),
        local_rank=_opt_int(d.get("local_rank"), "environment.local_rank", 0, MAX_RANKS - 1),
    )


def _model(d: Any) -> ModelInfo:
    d = _obj(d if d is not None else {}, "model")
    workload = _size_maps(d.get("workload", []), "model.workload", 1_000_000)
    return ModelInfo(
        path=_opt_str(d.get("path"), "model.path", MAX_TEXT),
        name=_opt_str(d.get("name"), "model.name"),
        hints=tuple(_int(h, f"model.hints[{i}]") for i, h in enumerate(_list(d.get("hints", []), "model.hints", 256))),
        workload=tuple(workload),
    )


def _symbol(d: Any, path: str) -> SymbolInfo:
    d = _obj(d, path)
    return SymbolInfo(
        name=_str(d.get("name"), f"{path}.name", 64),
        alias=_alias(d.get("alias"), f"{path}.alias"),
        sources=tuple(_str(s, f"{path}.sources[{i}]") for i, s in enumerate(_list(d.get("sources", []), f"{path}.sources", 64))),
        input=_opt_str(d.get("input"), f"{path}.input"),
        dim=_opt_int(d.get("dim"), f"{path}.dim", 0, MAX_RANK),
        example=_opt_int(d.get("example"), f"{path}.example"),
    )


def _autotune_time(value: Any, path: str) -> float | None:
    """Inductor times a choice that failed to compile or run as infinity, which sessions
    written before kinspect stored it as null hold as `Infinity`: read as null, no time."""
    return None if value == math.inf else _num(value, path)


def _alias(value: Any, path: str) -> str | None:
    """The user's name for a size, which they type in shapes and conditions: an identifier."""
    alias = _opt_str(value, path, 64)
    if alias is not None and not SYMBOL_NAME.match(alias):
        raise _fail(path, f"{echo(alias)} is not a size name (an identifier, not starting with __)")
    return alias


def _variant(d: Any, path: str, index: int) -> Variant:
    d = _obj(d, path)
    rows = []
    for i, r in enumerate(_list(d.get("autotune", []), f"{path}.autotune", 10_000)):
        r = _obj(r, f"{path}.autotune[{i}]")
        rows.append(
            AutotuneRow(
                name=_str(r.get("name"), f"{path}.autotune[{i}].name", MAX_TEXT),
                time_us=_autotune_time(r.get("time_us"), f"{path}.autotune[{i}].time_us"),
                description=_str(r.get("description", ""), f"{path}.autotune[{i}].description", MAX_TEXT),
            )
        )
    key = d.get("key")
    return Variant(
        index=index,
        hint=_opt_int(d.get("hint"), f"{path}.hint"),
        key=None if key is None else _key(key, f"{path}.key"),
        kernel_name=_str(d.get("kernel_name"), f"{path}.kernel_name"),
        source=_str(d.get("source", ""), f"{path}.source", MAX_SOURCE, _SOURCE_OK),
        source_hash=_str(d.get("source_hash", ""), f"{path}.source_hash"),
        config=_scalar_map(d.get("config", {}), f"{path}.config"),
        autotune=tuple(rows),
        winner=_opt_str(d.get("winner"), f"{path}.winner", MAX_TEXT),
        emitted=_opt_str(d.get("emitted"), f"{path}.emitted", MAX_TEXT),
        source_path=_opt_str(d.get("source_path"), f"{path}.source_path", MAX_TEXT),
    )


def _call_site(d: Any, path: str, index: int) -> CallSite:
    d = _obj(d, path)
    return CallSite(
        index=index,
        node=_opt_str(d.get("node"), f"{path}.node"),
        call=_opt_str(d.get("call"), f"{path}.call", MAX_TEXT),
        line=_opt_int(d.get("line"), f"{path}.line"),
        module=_opt_str(d.get("module"), f"{path}.module", MAX_TEXT),
        module_class=_opt_str(d.get("module_class"), f"{path}.module_class"),
        file=_opt_str(d.get("file"), f"{path}.file", MAX_TEXT),
        lineno=_opt_int(d.get("lineno"), f"{path}.lineno"),
        code=_opt_str(d.get("code"), f"{path}.code", MAX_TEXT),
    )


def _sizes(d: Any, path: str) -> dict[str, int]:
    return {_str(k, f"{path} key", 64): _int(v, f"{path}.{k}") for k, v in _obj(d, path).items()}


def _sweep(d: Any, path: str) -> Sweep:
    d = _obj(d, path)
    ranges = {}
    for k, v in _obj(d.get("ranges"), f"{path}.ranges").items():
        span = _list(v, f"{path}.ranges.{_str(k, f'{path}.ranges key', 64)}", 2)
        if len(span) != 2:
            raise _fail(f"{path}.ranges.{k}", "expected [lo, hi]")
        ranges[k] = (_int(span[0], f"{path}.ranges.{k}[0]"), _int(span[1], f"{path}.ranges.{k}[1]"))
    points = tuple(_sizes(p, f"{path}.points[{i}]") for i, p in enumerate(_list(d.get("points", []), f"{path}.points", 100_000)))
    skipped = []
    for i, x in enumerate(_list(d.get("skipped", []), f"{path}.skipped", 100_000)):
        x = _obj(x, f"{path}.skipped[{i}]")
        skipped.append((_sizes(x.get("sizes"), f"{path}.skipped[{i}].sizes"),
                        _str(x.get("reason"), f"{path}.skipped[{i}].reason", MAX_TEXT)))
    return Sweep(ranges, points, tuple(skipped))


def _site(d: Any, path: str) -> Site:
    d = _obj(d, path)
    variants = _list(d.get("variants"), f"{path}.variants", 256)
    if not variants:
        raise _fail(f"{path}.variants", "a site needs at least one variant")
    rt = d.get("runtime_tensors")
    return Site(
        name=_str(d.get("name"), f"{path}.name"),
        graph=_str(d.get("graph", ""), f"{path}.graph"),
        op=_str(d.get("op", ""), f"{path}.op"),
        tensors=tuple(_tensor(t, f"{path}.tensors[{i}]") for i, t in enumerate(_list(d.get("tensors", []), f"{path}.tensors", MAX_TENSORS))),
        variants=tuple(_variant(v, f"{path}.variants[{i}]", i) for i, v in enumerate(variants)),
        runtime_tensors=None if rt is None else tuple(
            _tensor(t, f"{path}.runtime_tensors[{i}]") for i, t in enumerate(_list(rt, f"{path}.runtime_tensors", MAX_TENSORS))
        ),
        call=_opt_str(d.get("call"), f"{path}.call", MAX_TEXT),
        call_sites=tuple(_call_site(c, f"{path}.call_sites[{i}]", i)
                         for i, c in enumerate(_list(d.get("call_sites", []), f"{path}.call_sites", 10_000))),
    )


def _graph(d: Any, path: str) -> Graph:
    d = _obj(d, path)
    return Graph(
        name=_str(d.get("name"), f"{path}.name"),
        wrapper_path=_opt_str(d.get("wrapper_path"), f"{path}.wrapper_path", MAX_TEXT),
        sites=tuple(_str(s, f"{path}.sites[{i}]") for i, s in enumerate(_list(d.get("sites", []), f"{path}.sites", 10_000))),
        no_site_reason=_opt_str(d.get("no_site_reason"), f"{path}.no_site_reason", MAX_TEXT),
        wrapper_code=_opt_str(d.get("wrapper_code"), f"{path}.wrapper_code", MAX_WRAPPER, _SOURCE_OK),
    )


def _baseline(d: Any, path: str) -> Baseline:
    d = _obj(d, path)
    kind = _str(d.get("kind"), f"{path}.kind")
    inspected = _bool(d.get("inspected", False), f"{path}.inspected")
    if kind not in BASELINE_KINDS and kind not in INSPECTED_KINDS:
        raise _fail(f"{path}.kind", f"must be one of {', '.join(dict.fromkeys(BASELINE_KINDS + INSPECTED_KINDS))}")
    if inspected and kind not in INSPECTED_KINDS:
        raise _fail(f"{path}.kind", f"{kind} is compiled afresh, never timed on the inspected compile")
    if not inspected and kind not in BASELINE_KINDS:
        raise _fail(f"{path}.kind", f'{kind} is only timed on the inspected compile ("inspected": true)')
    sizes = {_str(k, f"{path}.sizes key", 64): _int(v, f"{path}.sizes.{k}") for k, v in _obj(d.get("sizes"), f"{path}.sizes").items()}
    return Baseline(
        sizes=sizes, kind=kind,
        wall_us=_num(d.get("wall_us"), f"{path}.wall_us"),
        gpu_us=_num(d.get("gpu_us"), f"{path}.gpu_us"),
        error=_opt_str(d.get("error"), f"{path}.error", MAX_TEXT),
        inspected=inspected,
    )


def _recompile(d: Any, path: str) -> Recompile:
    d = _obj(d, path)
    purpose = _str(d.get("purpose"), f"{path}.purpose")
    if purpose not in RECOMPILE_PURPOSES:
        raise _fail(f"{path}.purpose", f"must be one of {', '.join(RECOMPILE_PURPOSES)}")
    variants = {}
    for name, vs in _obj(d.get("variants", {}), f"{path}.variants").items():
        where = f"{path}.variants.{_str(name, f'{path}.variants key')}"
        rows = [_obj(v, f"{where}[{i}]") for i, v in enumerate(_list(vs, where, 256))]
        variants[name] = tuple((_opt_int(v.get("hint"), f"{where}[{i}].hint", 1), _str(v.get("kernel"), f"{where}[{i}].kernel"))
                               for i, v in enumerate(rows))
    return Recompile(
        hints=tuple(_int(h, f"{path}.hints[{i}]", 1, MAX_SIZE) for i, h in enumerate(_list(d.get("hints"), f"{path}.hints", 256))),
        purpose=purpose,
        variants=variants,
        measurements=tuple(_measurement(x, f"{path}.measurements[{i}]")
                           for i, x in enumerate(_list(d.get("measurements", []), f"{path}.measurements"))),
        error=_opt_str(d.get("error"), f"{path}.error", MAX_TEXT),
    )


def _events(value: Any, sites: Sequence[Site], keys: Sequence[Key]) -> EventLog:
    d = _obj(value, "events")
    cols: dict[str, list[Any] | None] = {}
    for name in EVENT_COLUMNS:
        col = d.get(name)
        cols[name] = None if col is None and name in _NULLABLE else _list(col, f"events.{name}")
    n = len(cols["seq"] or ())
    for name, col in cols.items():
        if col is not None and len(col) != n:
            raise _fail("events", f"columns differ in length (seq has {n} entries, {name} has {len(col)})")
    seq, site, key, picked, predicted, hit, step, t_ns, override, call_site = cols.values()
    _int_column(seq, "events.seq", MAX_SIZE)
    _ref_column(site, "events.site", "site", "sites", len(sites))
    _ref_column(key, "events.key", "key", "keys", len(keys))
    if not set(map(type, hit)) <= {bool}:
        for i, x in enumerate(hit):
            _bool(x, f"events.hit[{i}]")
    for name, col in (("step", step), ("t_ns", t_ns)):
        if col is not None:
            _int_column(col, f"events.{name}", MAX_SIZE, nullable=True)
    counts = [len(s.variants) for s in sites]
    for name, col in (("picked", picked), ("predicted", predicted), ("override", override)):
        if col is not None:
            _variant_column(col, f"events.{name}", site, sites, counts, nullable=name in _NULLABLE)
    if call_site is not None:
        _variant_column(call_site, "events.call_site", site, sites, [max(1, len(s.call_sites)) for s in sites],
                        what="call site", hi=MAX_SIZE)
    return EventLog(seq, site, [s.name for s in sites], key, keys, picked, predicted, hit, step, t_ns, override,
                    call_site)


def _measurement(d: Any, path: str) -> Measurement:
    d = _obj(d, path)
    return Measurement(
        site=_str(d.get("site"), f"{path}.site"),
        key=_key(d.get("key"), f"{path}.key"),
        variant=_int(d.get("variant"), f"{path}.variant", 0, 255),
        method=_str(d.get("method"), f"{path}.method"),
        median_us=_num(d.get("median_us"), f"{path}.median_us"),
        p20_us=_num(d.get("p20_us"), f"{path}.p20_us"),
        p80_us=_num(d.get("p80_us"), f"{path}.p80_us"),
        samples=_int(d.get("samples", 0), f"{path}.samples"),
        l2_flush=_bool(d.get("l2_flush", False), f"{path}.l2_flush"),
        tflops=_num(d.get("tflops"), f"{path}.tflops"),
        gbps=_num(d.get("gbps"), f"{path}.gbps"),
        error=_opt_str(d.get("error"), f"{path}.error", MAX_TEXT),
    )


def _finding(d: Any, path: str) -> Finding:
    d = _obj(d, path)
    severity = _str(d.get("severity", "warning"), f"{path}.severity")
    if severity not in SEVERITIES:
        raise _fail(f"{path}.severity", f"must be one of {', '.join(SEVERITIES)}")
    return Finding(
        kind=_str(d.get("kind"), f"{path}.kind"),
        message=_str(d.get("message"), f"{path}.message", MAX_TEXT),
        severity=severity,
        site=_opt_str(d.get("site"), f"{path}.site"),
        graph=_opt_str(d.get("graph"), f"{path}.graph"),
        variants=tuple(_int(v, f"{path}.variants[{i}]", 0, 255) for i, v in enumerate(_list(d.get("variants", []), f"{path}.variants", 256))),
    )


def _check_version(d: Mapping[str, Any], fmt: str) -> None:
    if d.get("format") != fmt:
        raise SessionError(f"not a kinspect session: missing \"format\": \"{fmt}\"")
    version = d.get("version")
    if version is None:
        raise SessionError("session has no \"version\"")
    if type(version) is not int or version != VERSION:  # true and 1.0 equal 1 in Python
        raise SessionError(f"session format version {echo(version)} is not supported (this kinspect reads version {VERSION})")


def session_from_json(d: Any) -> Session:
    d = _obj(d, "session")
    _check_version(d, FORMAT)
    sites = [_site(x, f"sites[{i}]") for i, x in enumerate(_list(d.get("sites", []), "sites", 10_000))]
    keys = _key_table(d.get("keys", []), "keys")
    events = d.get("events")
    sites, events = _merge_shared(sites, events)
    s = Session(
        environment=_environment(d.get("environment")),
        model=_model(d.get("model")),
        symbols=[_symbol(x, f"symbols[{i}]") for i, x in enumerate(_list(d.get("symbols", []), "symbols", 1024))],
        graphs=[_graph(x, f"graphs[{i}]") for i, x in enumerate(_list(d.get("graphs", []), "graphs", 10_000))],
        sites=sites,
        events=[] if events is None else _events(events, sites, keys),
        measurements=[_measurement(x, f"measurements[{i}]") for i, x in enumerate(_list(d.get("measurements", []), "measurements"))],
        findings=[_finding(x, f"findings[{i}]") for i, x in enumerate(_list(d.get("findings", []), "findings"))],
        baselines=[_baseline(x, f"baselines[{i}]") for i, x in enumerate(_list(d.get("baselines", []), "baselines", 10_000))],
        sweeps=[_sweep(x, f"sweeps[{i}]") for i, x in enumerate(_list(d.get("sweeps", []), "sweeps", 1000))],
        recompiles=[_recompile(x, f"recompiles[{i}]") for i, x in enumerate(_list(d.get("recompiles", []), "recompiles", 1000))],
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
