"""Reading and writing sessions: a versioned JSON file and a JSON-lines recording log.

A session file is data from anywhere (a colleague, a bug report), so reading one only
ever runs `json.loads` and type checks: no pickle, no eval, no sympify. Every field is
checked for type and size, with the path of the offending field in the error, and names
may not hold control characters, so a hostile file is either refused in one line or
shown as the plain text it is.

A recording holds up to millions of dispatch events, so the file stores them as columns
of small integers (each distinct shape key once, in a key table) and the reader checks a
column at a time with whole-list checks that run in C; the per-value checks only run to
name the first bad value once a column is known to hold one.

The log (`.jsonl`) is what a live recording appends to as things happen; a killed
process leaves a log whose last line may be cut, which still opens, marked truncated.
"""

from __future__ import annotations

import gc
import json
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from operator import attrgetter
from pathlib import Path
from typing import Any, NoReturn

from kinspect.core.errors import SessionError, echo
from kinspect.core.eventlog import EventLog
from kinspect.core.session import (
    Baseline,
    FORMAT,
    SEVERITIES,
    VERSION,
    AutotuneRow,
    DispatchEvent,
    Environment,
    Finding,
    Graph,
    Measurement,
    ModelInfo,
    Session,
    Site,
    SymbolInfo,
    Variant,
)
from kinspect.core.shapes import MAX_SIZE, Key
from kinspect.core.symbolic import ExprError, SizeExpr, TensorSpec

LOG_FORMAT = "kinspect-log"
MAX_FILE_BYTES = 1 << 30
MAX_NAME = 256
MAX_TEXT = 64 * 1024
MAX_SOURCE = 4 * 1024 * 1024
MAX_WRAPPER = 16 * 1024 * 1024
MAX_TENSORS = 64
MAX_RANK = 16

EVENT_COLUMNS = ("seq", "site", "key", "picked", "predicted", "hit", "step", "t_ns", "override")
"""The columns of `events`, in the order of DispatchEvent's fields."""
_NULLABLE = frozenset({"step", "t_ns", "override"})
"""Columns whose values may be null, and that may be left out (all null)."""

_CONTROL = {chr(c) for c in range(32)} | {chr(c) for c in range(0x7F, 0xA0)}
"""C0, DEL and C1: ESC and CSI (U+009B) start terminal escape sequences."""
_SOURCE_OK = {"\n", "\t", "\r"}


# ---------------------------------------------------------------- reading helpers


def _fail(path: str, what: str) -> SessionError:
    return SessionError(f"{path}: {what}")


def _obj(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise _fail(path, f"expected an object, got {_kind(value)}")
    return value


def _list(value: Any, path: str, limit: int | None = None) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(path, f"expected a list, got {_kind(value)}")
    if limit is not None and len(value) > limit:
        raise _fail(path, f"more than {limit} entries")
    return value


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


def _str(value: Any, path: str, limit: int = MAX_NAME, allow: set[str] = frozenset()) -> str:
    if not isinstance(value, str):
        raise _fail(path, f"expected a string, got {_kind(value)}")
    if len(value) > limit:
        raise _fail(path, f"string longer than {limit} characters ({len(value)})")
    bad = (set(value) & _CONTROL) - allow
    if bad:
        raise _fail(path, f"string holds control character {min(bad)!r}")
    return value


def _opt_str(value: Any, path: str, limit: int = MAX_NAME, allow: set[str] = frozenset()) -> str | None:
    return None if value is None else _str(value, path, limit, allow)


def _int(value: Any, path: str, lo: int = 0, hi: int = MAX_SIZE) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(path, f"expected an integer, got {_kind(value)}")
    if not lo <= value <= hi:
        raise _fail(path, f"integer {echo(value)} outside {lo}..{hi}")
    return value


def _opt_int(value: Any, path: str, lo: int = 0, hi: int = MAX_SIZE) -> int | None:
    return None if value is None else _int(value, path, lo, hi)


def _num(value: Any, path: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(path, f"expected a number, got {_kind(value)}")
    return float(value)


def _bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(path, f"expected true or false, got {_kind(value)}")
    return value


def _key(value: Any, path: str) -> Key:
    if type(value) is list and len(value) <= MAX_TENSORS and all(
        type(t) is list and len(t) <= MAX_RANK and all(type(x) is int and 0 <= x <= MAX_SIZE for x in t) for t in value
    ):
        return tuple(map(tuple, value))
    tensors = _list(value, path, MAX_TENSORS)
    return tuple(
        tuple(_int(s, f"{path}[{i}][{j}]") for j, s in enumerate(_list(t, f"{path}[{i}]", MAX_RANK)))
        for i, t in enumerate(tensors)
    )


def _scalar_map(value: Any, path: str) -> dict[str, Any]:
    """Config-like maps: string keys, JSON scalars or lists of scalars as values."""
    out: dict[str, Any] = {}
    for k, v in _obj(value, path).items():
        _str(k, f"{path} key")
        p = f"{path}.{k}"
        if isinstance(v, str):
            out[k] = _str(v, p, MAX_TEXT)
        elif v is None or isinstance(v, (bool, int, float)):
            out[k] = v
        elif isinstance(v, list) and len(v) <= 256 and all(
            x is None or isinstance(x, (bool, int, float)) for x in v
        ):
            out[k] = list(v)
        elif isinstance(v, list) and len(v) <= 256 and all(isinstance(x, str) for x in v):
            out[k] = [_str(x, p, MAX_NAME) for x in v]
        else:
            raise _fail(p, f"expected a number, string, boolean or a short list of them, got {_kind(v)}")
    return out


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


# ---------------------------------------------------------------- sections


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
    )


def _model(d: Any) -> ModelInfo:
    d = _obj(d if d is not None else {}, "model")
    workload = []
    for i, step in enumerate(_list(d.get("workload", []), "model.workload", 1_000_000)):
        workload.append(
            {_str(k, f"model.workload[{i}] key"): _int(v, f"model.workload[{i}].{k}") for k, v in _obj(step, f"model.workload[{i}]").items()}
        )
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
        alias=_opt_str(d.get("alias"), f"{path}.alias", 64),
        sources=tuple(_str(s, f"{path}.sources[{i}]") for i, s in enumerate(_list(d.get("sources", []), f"{path}.sources", 64))),
        input=_opt_str(d.get("input"), f"{path}.input"),
        dim=_opt_int(d.get("dim"), f"{path}.dim", 0, MAX_RANK),
        example=_opt_int(d.get("example"), f"{path}.example"),
    )


def _variant(d: Any, path: str, index: int) -> Variant:
    d = _obj(d, path)
    rows = []
    for i, r in enumerate(_list(d.get("autotune", []), f"{path}.autotune", 10_000)):
        r = _obj(r, f"{path}.autotune[{i}]")
        rows.append(
            AutotuneRow(
                name=_str(r.get("name"), f"{path}.autotune[{i}].name", MAX_TEXT),
                time_us=_num(r.get("time_us"), f"{path}.autotune[{i}].time_us"),
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


BASELINE_KINDS = ("eager", "static", "exact_hint", "hinted")


def _baseline(d: Any, path: str) -> Baseline:
    d = _obj(d, path)
    kind = _str(d.get("kind"), f"{path}.kind")
    if kind not in BASELINE_KINDS:
        raise _fail(f"{path}.kind", f"must be one of {', '.join(BASELINE_KINDS)}")
    sizes = {_str(k, f"{path}.sizes key", 64): _int(v, f"{path}.sizes.{k}") for k, v in _obj(d.get("sizes"), f"{path}.sizes").items()}
    return Baseline(
        sizes=sizes, kind=kind,
        wall_us=_num(d.get("wall_us"), f"{path}.wall_us"),
        gpu_us=_num(d.get("gpu_us"), f"{path}.gpu_us"),
        error=_opt_str(d.get("error"), f"{path}.error", MAX_TEXT),
    )


def _int_column(col: list[Any], path: str, hi: int, nullable: bool = False) -> list[int]:
    """Check a column of integers in 0..hi; returns its non-null values."""
    types = set(map(type, col))
    values = col
    if nullable and type(None) in types:
        types.discard(type(None))
        values = [x for x in col if x is not None]
    if not (types <= {int} and (not values or (min(values) >= 0 and max(values) <= hi))):
        check = _opt_int if nullable else _int
        for i, x in enumerate(col):  # raises at the first bad value
            check(x, f"{path}[{i}]", 0, hi)
    return values


def _ref_column(col: list[Any], path: str, what: str, table: str, size: int) -> None:
    """Check a column of indices into a table of `size` entries."""
    _int_column(col, path, MAX_SIZE)
    if col and max(col) >= size:
        i = next(i for i, x in enumerate(col) if x >= size)
        raise _fail(f"{path}[{i}]", f"no {what} {col[i]} ({table} has {size})")


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
    seq, site, key, picked, predicted, hit, step, t_ns, override = cols.values()
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
            _variant_column(col, f"events.{name}", site, sites, counts)
    return EventLog(seq, site, [s.name for s in sites], key, keys, picked, predicted, hit, step, t_ns, override)


def _variant_column(col: list[Any], path: str, site: list[int], sites: Sequence[Site], counts: list[int]) -> None:
    """Variant indices, each below its own event's site's variant count."""
    values = _int_column(col, path, 255, nullable=True)
    if not values or max(values) < min(counts):
        return
    for i, (v, s) in enumerate(zip(col, site)):
        if v is not None and v >= counts[s]:
            raise _fail(f"{path}[{i}]", f"variant {v} out of range for {sites[s].name} ({counts[s]} variants)")


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
    keys = [_key(x, f"keys[{i}]") for i, x in enumerate(_list(d.get("keys", []), "keys"))]
    s = Session(
        environment=_environment(d.get("environment")),
        model=_model(d.get("model")),
        symbols=[_symbol(x, f"symbols[{i}]") for i, x in enumerate(_list(d.get("symbols", []), "symbols", 1024))],
        graphs=[_graph(x, f"graphs[{i}]") for i, x in enumerate(_list(d.get("graphs", []), "graphs", 10_000))],
        sites=sites,
        events=[] if d.get("events") is None else _events(d["events"], sites, keys),
        measurements=[_measurement(x, f"measurements[{i}]") for i, x in enumerate(_list(d.get("measurements", []), "measurements"))],
        findings=[_finding(x, f"findings[{i}]") for i, x in enumerate(_list(d.get("findings", []), "findings"))],
        baselines=[_baseline(x, f"baselines[{i}]") for i, x in enumerate(_list(d.get("baselines", []), "baselines", 10_000))],
    )
    _check_references(s)
    return s


def _check_references(s: Session) -> None:
    names = [x.name for x in s.sites]
    if len(set(names)) != len(names):
        raise SessionError("sites: two sites share a name")
    variants = {x.name: len(x.variants) for x in s.sites}
    for i, m in enumerate(s.measurements):
        n = variants.get(m.site)
        if n is None or m.variant >= n:
            raise SessionError(f"measurements[{i}]: no variant {m.variant} of site {m.site!r}")


# ---------------------------------------------------------------- writing


def _key_json(key: Key | None) -> Any:
    return None if key is None else [list(t) for t in key]


def _tensor_json(t: TensorSpec) -> dict[str, Any]:
    return {"name": t.name, "role": t.role, "sizes": [s.to_json() for s in t.sizes]}


def environment_json(e: Environment) -> dict[str, Any]:
    return {
        "created": e.created, "torch": e.torch, "triton": e.triton, "python": e.python,
        "gpu": e.gpu, "cuda": e.cuda, "platform": e.platform,
        "config": dict(e.config), "peaks": dict(e.peaks),
    }


def model_json(m: ModelInfo) -> dict[str, Any]:
    return {"path": m.path, "name": m.name, "hints": list(m.hints), "workload": [dict(w) for w in m.workload]}


def symbol_json(s: SymbolInfo) -> dict[str, Any]:
    return {"name": s.name, "alias": s.alias, "sources": list(s.sources), "input": s.input, "dim": s.dim, "example": s.example}


def site_json(s: Site) -> dict[str, Any]:
    return {
        "name": s.name,
        "graph": s.graph,
        "op": s.op,
        "tensors": [_tensor_json(t) for t in s.tensors],
        "runtime_tensors": None if s.runtime_tensors is None else [_tensor_json(t) for t in s.runtime_tensors],
        "call": s.call,
        "variants": [
            {
                "hint": v.hint, "key": _key_json(v.key), "kernel_name": v.kernel_name,
                "source": v.source, "source_hash": v.source_hash, "source_path": v.source_path,
                "config": dict(v.config),
                "autotune": [{"name": r.name, "time_us": r.time_us, "description": r.description} for r in v.autotune],
                "winner": v.winner,
                "emitted": v.emitted,
            }
            for v in s.variants
        ],
    }


def graph_json(g: Graph) -> dict[str, Any]:
    return {
        "name": g.name, "wrapper_path": g.wrapper_path, "sites": list(g.sites),
        "no_site_reason": g.no_site_reason, "wrapper_code": g.wrapper_code,
    }


def baseline_json(b: Baseline) -> dict[str, Any]:
    return {"sizes": dict(b.sizes), "kind": b.kind, "wall_us": b.wall_us, "gpu_us": b.gpu_us, "error": b.error}


def events_json(events: Sequence[DispatchEvent], sites: Sequence[Site]) -> tuple[list[Any], dict[str, list[Any]]]:
    """The key table and the event columns: each distinct key once, events by index."""
    index = {s.name: i for i, s in enumerate(sites)}
    try:
        site = [index[e.site] for e in events]
    except KeyError as e:
        raise SessionError(f"an event names site {e.args[0]!r}, which the session does not have") from None
    ids: dict[Key, int] = {}
    key = [ids.setdefault(e.key, len(ids)) for e in events]
    column = {name: list(map(attrgetter(name), events)) for name in ("seq", "picked", "predicted", "cache_hit", "step", "t_ns", "override")}
    return [_key_json(k) for k in ids], {
        "seq": column["seq"], "site": site, "key": key, "picked": column["picked"],
        "predicted": column["predicted"], "hit": column["cache_hit"], "step": column["step"],
        "t_ns": column["t_ns"], "override": column["override"],
    }


def measurement_json(m: Measurement) -> dict[str, Any]:
    return {
        "site": m.site, "key": _key_json(m.key), "variant": m.variant, "method": m.method,
        "median_us": m.median_us, "p20_us": m.p20_us, "p80_us": m.p80_us, "samples": m.samples,
        "l2_flush": m.l2_flush, "tflops": m.tflops, "gbps": m.gbps, "error": m.error,
    }


def finding_json(f: Finding) -> dict[str, Any]:
    return {
        "kind": f.kind, "message": f.message, "severity": f.severity, "site": f.site,
        "graph": f.graph, "variants": list(f.variants),
    }


def session_to_json(s: Session) -> dict[str, Any]:
    keys, events = events_json(s.events, s.sites)
    return {
        "format": FORMAT,
        "version": VERSION,
        "environment": environment_json(s.environment),
        "model": model_json(s.model),
        "symbols": [symbol_json(x) for x in s.symbols],
        "graphs": [graph_json(x) for x in s.graphs],
        "sites": [site_json(x) for x in s.sites],
        "keys": keys,
        "events": events,
        "measurements": [measurement_json(x) for x in s.measurements],
        "findings": [finding_json(x) for x in s.findings],
        "baselines": [baseline_json(x) for x in s.baselines],
    }


def _dumps(doc: Mapping[str, Any]) -> str:
    """A session's JSON text: format and version on the first line (so `head -1` tells
    what a file is), then a line per section, per list entry and per event column.

    Diffs stay readable, and every line goes through json's C encoder; any `indent` would
    send the whole document through the pure-Python one instead, ten times slower.
    """
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    lines = []
    for name, value in doc.items():
        if isinstance(value, list) and value:
            body = "[\n" + ",\n".join(map(encode, value)) + "\n]"
        elif isinstance(value, dict) and name == "events":
            body = "{\n" + ",\n".join(f"{encode(k)}:{encode(v)}" for k, v in value.items()) + "\n}"
        else:
            body = encode(value)
        lines.append(f"{encode(name)}:{body}")
    return "{" + ",".join(lines[:2]) + ",\n" + ",\n".join(lines[2:]) + "}\n"


def save(session: Session, path: str | os.PathLike[str]) -> None:
    """Write atomically: a reader (or a crash) never sees a half-written session."""
    path = Path(path)
    text = _dumps(session_to_json(session))
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        os.fchmod(fd, 0o644)  # mkstemp makes 0600; a session is meant to be shared
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ---------------------------------------------------------------- loading


def _read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise SessionError(f"{path}: file is {size} bytes, more than kinspect reads ({MAX_FILE_BYTES})")
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SessionError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise SessionError(f"{path}: is a directory, not a session file") from None
    except UnicodeDecodeError as e:
        raise SessionError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise SessionError(f"{path}: cannot read ({e.strerror})") from None


def _decode(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise SessionError(f"{where}: not valid JSON (line {e.lineno} column {e.colno}: {e.msg})") from None
    except RecursionError:
        raise SessionError(f"{where}: JSON nested too deeply") from None
    except ValueError:  # Python refuses to convert integers of more than 4300 digits
        raise SessionError(f"{where}: holds a number too long to read") from None


def load(path: str | os.PathLike[str]) -> Session:
    """Open a session file (`.json`) or a recording log (`.jsonl`)."""
    path = Path(path)
    text = _read_text(path)
    with _collector_paused():
        if _looks_like_log(text):
            return _load_log(text, str(path))
        data = _decode(text, str(path))
        try:
            return session_from_json(data)
        except SessionError as e:
            raise SessionError(f"{path}: {e}") from None
        except RecursionError:
            raise SessionError(f"{path}: JSON nested too deeply") from None


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Reading a big session allocates millions of objects that all live on; the cycle
    collector would walk them over and over meanwhile, for nothing (a third of the time)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _looks_like_log(text: str) -> bool:
    first = text.lstrip()[:200]
    return first.startswith("{") and f'"format": "{LOG_FORMAT}"' in first.split("\n", 1)[0] or (
        f'"format":"{LOG_FORMAT}"' in first.split("\n", 1)[0]
    )


# ---------------------------------------------------------------- the recording log
# Written by kinspect.core.livelog.LiveLog; read back here.


def log_header(session: Session) -> dict[str, Any]:
    return {
        "type": "header",
        "format": LOG_FORMAT,
        "version": VERSION,
        "environment": environment_json(session.environment),
        "model": model_json(session.model),
    }


def _load_log(text: str, where: str) -> Session:
    # A killed recording leaves the rest of its memory-mapped file as NUL bytes.
    lines = text.rstrip("\x00").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    truncated: str | None = None
    records = []
    for n, line in enumerate(lines, 1):
        try:
            records.append(json.loads(line))
        except RecursionError:
            raise SessionError(f"{where}: line {n}: JSON nested too deeply") from None
        except json.JSONDecodeError:
            if n == len(lines):
                truncated = f"the last record (line {n}) was cut short"
                break
            raise SessionError(f"{where}: line {n} is not valid JSON") from None
        except ValueError:
            raise SessionError(f"{where}: line {n}: holds a number too long to read") from None
    if not records:
        raise SessionError(f"{where}: empty log")
    head = _obj(records[0], f"{where}: line 1")
    if head.get("type") != "header":
        raise SessionError(f"{where}: line 1 is not a kinspect log header")
    _check_version(head, LOG_FORMAT)
    d: dict[str, Any] = {
        "format": FORMAT, "version": VERSION,
        "environment": head.get("environment"), "model": head.get("model"),
        "symbols": [], "graphs": [], "sites": [], "keys": [], "measurements": [], "findings": [],
    }
    key_rows: dict[int, int] = {}
    """A log's key id -> its row in the session's key table."""
    runtime_sites: dict[int, str] = {}
    events: list[list[Any]] = []
    sites: list[str] = []
    keys: list[int] = []
    steps: list[int | None] = []
    step = None
    ended = False
    for n, r in enumerate(records[1:], 2):
        if type(r) is list:
            if len(r) == 8 and r[0] == "e" and type(r[1]) is int and type(r[2]) is int and r[1] in runtime_sites and r[2] in key_rows:
                events.append(r)
                sites.append(runtime_sites[r[1]])
                keys.append(key_rows[r[2]])
                steps.append(step)
                continue
            _refuse_event(r, f"{where}: line {n}", runtime_sites, key_rows)
        r = _obj(r, f"{where}: line {n}")
        kind = r.get("type")
        if kind == "end":
            ended = True
        elif kind == "symbols":
            d["symbols"] = _list(r.get("symbols"), f"{where}: line {n}.symbols", 1024)
        elif kind == "key":
            key_rows[_int(r.get("id"), f"{where}: line {n}.id")] = len(d["keys"])
            _key(r.get("key"), f"{where}: line {n}.key")  # named by its line, not its row
            d["keys"].append(r.get("key"))
        elif kind == "runtime_site":
            runtime_sites[_int(r.get("index"), f"{where}: line {n}.index")] = _str(r.get("name"), f"{where}: line {n}.name")
        elif kind == "step":
            step = _opt_int(r.get("step"), f"{where}: line {n}.step")
        elif kind in ("graph", "site", "measurement", "finding"):
            d[kind + "s"].append(r.get(kind))
        else:
            raise SessionError(f"{where}: line {n}: unknown record type {str(kind)[:40]!r}")
    if not ended and truncated is None:
        truncated = "the recording stopped before its end record (was it killed?)"
    d["events"] = _log_events(events, sites, keys, steps, d["sites"], records, where)
    try:
        session = session_from_json(d)
    except SessionError as e:
        raise SessionError(f"{where}: {e}") from None
    session.truncated = truncated
    return session


def _refuse_event(r: list[Any], path: str, sites: Mapping[int, str], keys: Mapping[int, int]) -> NoReturn:
    """Say what is wrong with an event record `["e", site, key id, picked, predicted, hit, override, t_ns]`."""
    if len(r) != 8 or r[0] != "e":
        raise SessionError(f"{path}: not an event record")
    if _int(r[1], f"{path}[1]") not in sites:
        raise SessionError(f"{path}: event names runtime site {r[1]}, which no record introduced")
    raise SessionError(f"{path}: event names key {_int(r[2], f'{path}[2]')}, which no record introduced")


def _log_events(events: list[list[Any]], sites: list[str], keys: list[int], steps: list[int | None],
                site_records: list[Any], records: list[Any], where: str) -> dict[str, list[Any]]:
    """The session file's event columns from a log's event records; times become
    nanoseconds since the first event."""
    _, _, _, picked, predicted, hit, override, t_ns = (list(c) for c in zip(*events)) if events else ([],) * 8
    if t_ns and not (set(map(type, t_ns)) <= {int} and min(t_ns) >= 0 and max(t_ns) <= 2**63):
        i = next(i for i, t in enumerate(t_ns) if type(t) is not int or not 0 <= t <= 2**63)
        n = [n for n, r in enumerate(records[1:], 2) if type(r) is list][i]
        _int(t_ns[i], f"{where}: line {n}[7]", 0, 2**63)
    t0 = t_ns[0] if t_ns else 0
    index = {r["name"]: i for i, r in enumerate(site_records) if isinstance(r, dict) and isinstance(r.get("name"), str)}
    try:
        site = list(map(index.__getitem__, sites))
    except KeyError as e:
        raise SessionError(f"{where}: runtime site {e.args[0]!r} has no site record") from None
    return {
        "seq": list(range(len(events))), "site": site, "key": keys, "picked": picked, "predicted": predicted,
        "hit": hit, "step": steps, "t_ns": [t - t0 for t in t_ns], "override": override,
    }
