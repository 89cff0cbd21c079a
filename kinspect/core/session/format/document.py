"""A whole session file: its sections in order, written and read through each record's
own pair of functions (`header`, `compiled`, `results`, `events`), and its text.

Reading only ever runs `json.loads` and type checks; the references between sections
(an event's site, a measurement's variant) are checked once every section is read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from operator import attrgetter
from typing import Any

from kinspect.core.errors import SessionError
from kinspect.core.dispatch.shapes import Key
from kinspect.core.session.model import FORMAT, VERSION, CallSite, Session, Site
from kinspect.core.session.runtime import Measurement
from kinspect.core.session.format.checks import a_key_table, a_list, an_object, key_to_json
from kinspect.core.session.format.compiled import (
    graph_from_json,
    graph_to_json,
    site_from_json,
    site_to_json,
    symbol_from_json,
    symbol_to_json,
)
from kinspect.core.session.format.events import events_from_json, events_to_json
from kinspect.core.session.format.header import (
    check_version,
    environment_from_json,
    environment_to_json,
    model_from_json,
    model_to_json,
)
from kinspect.core.session.format.results import (
    baseline_from_json,
    baseline_to_json,
    finding_from_json,
    finding_to_json,
    measurement_columns_from_json,
    measurement_columns_to_json,
    measurements_from_json,
    recompile_from_json,
    recompile_to_json,
    sweep_from_json,
    sweep_to_json,
)


def session_to_json(s: Session) -> dict[str, Any]:
    keys: dict[Key, int] = {}
    events = events_to_json(s.events, s.sites, keys)
    measurements = measurement_columns_to_json(s.measurements, s.sites, keys)
    return {
        "format": FORMAT,
        "version": VERSION,
        "environment": environment_to_json(s.environment),
        "model": model_to_json(s.model),
        "symbols": [symbol_to_json(x) for x in s.symbols],
        "graphs": [graph_to_json(x) for x in s.graphs],
        "sites": [site_to_json(x) for x in s.sites],
        "keys": [key_to_json(k) for k in keys],
        "events": events,
        "measurements": measurements,
        "findings": [finding_to_json(x) for x in s.findings],
        "baselines": [baseline_to_json(x) for x in s.baselines],
        "sweeps": [sweep_to_json(x) for x in s.sweeps],
        "recompiles": [recompile_to_json(x) for x in s.recompiles],
    }


def session_from_json(d: Any) -> Session:
    d = an_object(d, "session")
    check_version(d, FORMAT)
    sites = [site_from_json(x, f"sites[{i}]") for i, x in enumerate(a_list(d.get("sites", []), "sites", 10_000))]
    keys = a_key_table(d.get("keys", []), "keys")
    events, measurements = d.get("events"), d.get("measurements", [])
    merged, events = _merge_shared(sites, events)
    if len(merged) != len(sites) and isinstance(measurements, dict):  # only older files name a site twice
        raise SessionError("sites: two sites share a name")
    sites = merged
    s = Session(
        environment=environment_from_json(d.get("environment")),
        model=model_from_json(d.get("model")),
        symbols=[symbol_from_json(x, f"symbols[{i}]") for i, x in enumerate(a_list(d.get("symbols", []), "symbols", 1024))],
        graphs=[graph_from_json(x, f"graphs[{i}]") for i, x in enumerate(a_list(d.get("graphs", []), "graphs", 10_000))],
        sites=sites,
        events=[] if events is None else events_from_json(events, sites, keys),
        measurements=_measurements(measurements, sites, keys),
        findings=[finding_from_json(x, f"findings[{i}]") for i, x in enumerate(a_list(d.get("findings", []), "findings"))],
        baselines=[baseline_from_json(x, f"baselines[{i}]") for i, x in enumerate(a_list(d.get("baselines", []), "baselines", 10_000))],
        sweeps=[sweep_from_json(x, f"sweeps[{i}]") for i, x in enumerate(a_list(d.get("sweeps", []), "sweeps", 1000))],
        recompiles=[recompile_from_json(x, f"recompiles[{i}]") for i, x in enumerate(a_list(d.get("recompiles", []), "recompiles", 1000))],
    )
    _check_references(s)
    return s


def _measurements(value: Any, sites: list[Site], keys: list[Key]) -> list[Measurement]:
    """Columns, as kinspect writes them, or a list of objects, as older files and a
    recording log's records hold them."""
    if isinstance(value, dict):
        return measurement_columns_from_json(value, "measurements", sites, keys)
    return measurements_from_json(value, "measurements")


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
    pairs = set(zip(map(attrgetter("site"), s.measurements), map(attrgetter("variant"), s.measurements)))
    if all(v < variants.get(site, 0) for site, v in pairs):  # each distinct pair once: a sweep repeats them
        return
    for i, m in enumerate(s.measurements):
        n = variants.get(m.site)
        if n is None or m.variant >= n:
            raise SessionError(f"measurements[{i}]: no variant {m.variant} of site {m.site!r}")


def dumps(doc: Mapping[str, Any]) -> str:
    """A session's JSON text: format and version on the first line (so `head -1` tells
    what a file is), then a line per section, per list entry and per event or measurement column.

    Diffs stay readable, and every line goes through json's C encoder; any `indent` would
    send the whole document through the pure-Python one instead, ten times slower.
    """
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    lines = []
    for name, value in doc.items():
        if isinstance(value, list) and value:
            body = "[\n" + ",\n".join(map(encode, value)) + "\n]"
        elif isinstance(value, dict) and name in ("events", "measurements"):
            body = "{\n" + ",\n".join(f"{encode(k)}:{encode(v)}" for k, v in value.items()) + "\n}"
        else:
            body = encode(value)
        lines.append(f"{encode(name)}:{body}")
    return "{" + ",".join(lines[:2]) + ",\n" + ",\n".join(lines[2:]) + "}\n"
