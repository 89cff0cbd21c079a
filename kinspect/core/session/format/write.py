"""The session model into the JSON a session file (and the recording log) holds.

Each section has its own function, so the recording log writes a site or a finding as it
happens with exactly the JSON the session file would hold.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Any

from kinspect.core.errors import SessionError
from kinspect.core.session.model import (
    FORMAT,
    VERSION,
    Baseline,
    DispatchEvent,
    Environment,
    Finding,
    Graph,
    Measurement,
    ModelInfo,
    Session,
    CallSite,
    Site,
    Recompile,
    Sweep,
    SymbolInfo,
)
from kinspect.core.dispatch.shapes import Key
from kinspect.core.dispatch.symbolic import TensorSpec
from kinspect.core.session.misfit import Concrete, TemplateMisfit


def _key_json(key: Key | None) -> Any:
    return None if key is None else [list(t) for t in key]


def _tensor_json(t: TensorSpec) -> dict[str, Any]:
    return {"name": t.name, "role": t.role, "sizes": [s.to_json() for s in t.sizes]}


def environment_json(e: Environment) -> dict[str, Any]:
    return {
        "created": e.created, "torch": e.torch, "triton": e.triton, "python": e.python,
        "gpu": e.gpu, "cuda": e.cuda, "platform": e.platform,
        "config": dict(e.config), "peaks": dict(e.peaks),
        "rank": e.rank, "world_size": e.world_size, "local_rank": e.local_rank,
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
        "call_sites": [call_site_json(c) for c in s.call_sites],
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


def call_site_json(c: CallSite) -> dict[str, Any]:
    return {
        "node": c.node, "call": c.call, "line": c.line, "module": c.module, "module_class": c.module_class,
        "file": c.file, "lineno": c.lineno, "code": c.code,
    }


def sweep_json(w: Sweep) -> dict[str, Any]:
    return {
        "ranges": {k: list(v) for k, v in w.ranges.items()},
        "points": [dict(p) for p in w.points],
        "skipped": [{"sizes": dict(sizes), "reason": why} for sizes, why in w.skipped],
    }


def graph_json(g: Graph) -> dict[str, Any]:
    out = {
        "name": g.name, "wrapper_path": g.wrapper_path, "sites": list(g.sites),
        "no_site_reason": g.no_site_reason, "wrapper_code": g.wrapper_code,
    }
    if g.misfits:
        out["misfits"] = [misfit_json(m) for m in g.misfits]
    return out


def _concrete_json(c: Concrete) -> dict[str, Any]:
    return {"size": list(c.size), "stride": list(c.stride), "offset": c.offset, "storage": c.storage}


def misfit_json(t: TemplateMisfit) -> dict[str, Any]:
    m = t.misfit
    return {
        "site": t.site, "op": t.op, "inputs": list(t.inputs), "index": t.index, "fitted": t.fitted,
        "tensor": m.tensor, "hint": m.hint, "path": m.path,
        "layout": {"size": list(m.layout.size), "stride": list(m.layout.stride), "offset": m.layout.offset},
        "given": _concrete_json(m.given), "needed": _concrete_json(m.needed),
        "replaced": [{"where": r.where, "expr": r.expr, "given": r.given, "at_hint": r.at_hint} for r in m.replaced],
    }


def baseline_json(b: Baseline) -> dict[str, Any]:
    return {"sizes": dict(b.sizes), "kind": b.kind, "wall_us": b.wall_us, "gpu_us": b.gpu_us, "error": b.error,
            "inspected": b.inspected}


def recompile_json(r: Recompile) -> dict[str, Any]:
    return {"hints": list(r.hints), "purpose": r.purpose, "variants": {k: [{"hint": h, "kernel": kernel} for h, kernel in v] for k, v in r.variants.items()},
            "measurements": [measurement_json(m) for m in r.measurements], "error": r.error}


def events_json(events: Sequence[DispatchEvent], sites: Sequence[Site]) -> tuple[list[Any], dict[str, list[Any]]]:
    """The key table and the event columns: each distinct key once, events by index."""
    index = {s.name: i for i, s in enumerate(sites)}
    try:
        site = [index[e.site] for e in events]
    except KeyError as e:
        raise SessionError(f"an event names site {e.args[0]!r}, which the session does not have") from None
    ids: dict[Key, int] = {}
    key = [ids.setdefault(e.key, len(ids)) for e in events]
    names = ("seq", "picked", "predicted", "cache_hit", "step", "t_ns", "override", "call_site")
    column = {name: list(map(attrgetter(name), events)) for name in names}
    return [_key_json(k) for k in ids], {
        "seq": column["seq"], "site": site, "key": key, "picked": column["picked"],
        "predicted": column["predicted"], "hit": column["cache_hit"], "step": column["step"],
        "t_ns": column["t_ns"], "override": column["override"], "call_site": column["call_site"],
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
        "sweeps": [sweep_json(x) for x in s.sweeps],
        "recompiles": [recompile_json(x) for x in s.recompiles],
    }


def dumps(doc: Mapping[str, Any]) -> str:
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
