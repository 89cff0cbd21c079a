"""The dispatch events: a session file's key table and event columns.

A recording holds millions of events, so the file stores them as columns of small
integers, each distinct shape key once in a key table, and reading them builds an
`EventLog` over those columns, no per-event objects. Both directions follow one list of
columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Any

from kinspect.core.errors import SessionError
from kinspect.core.session.eventlog import EventLog
from kinspect.core.session.format.columns import Bools
from kinspect.core.session.runtime import DispatchEvent
from kinspect.core.session.model import Site
from kinspect.core.session.format.checks import (
    a_bool,
    a_column,
    an_object,
    failure,
    int_column,
    ref_column,
    variant_column,
)
from kinspect.core.dispatch.shapes import MAX_SIZE, Key

EVENT_COLUMNS = ("seq", "site", "key", "picked", "predicted", "hit", "step", "t_ns", "override", "call_site")
"""The columns of `events`, in the order of DispatchEvent's fields."""
_NULLABLE = frozenset({"step", "t_ns", "override", "call_site"})
"""Columns whose values may be null, and that may be left out (all null)."""
_FIELDS = {"hit": "cache_hit"}
"""A column named apart from its DispatchEvent field."""


def events_to_json(events: Sequence[DispatchEvent], sites: Sequence[Site], keys: dict[Key, int]) -> dict[str, list[Any]]:
    """The event columns, keys by their index in the session's key table (`keys`, which
    gains the ones it lacks: each distinct key once)."""
    index = {s.name: i for i, s in enumerate(sites)}
    try:
        site = [index[e.site] for e in events]
    except KeyError as e:
        raise SessionError(f"an event names site {e.args[0]!r}, which the session does not have") from None
    columns = {"site": site, "key": [keys.setdefault(e.key, len(keys)) for e in events]}
    for name in EVENT_COLUMNS:
        if name not in columns:
            columns[name] = list(map(attrgetter(_FIELDS.get(name, name)), events))
    return {name: columns[name] for name in EVENT_COLUMNS}


def events_from_json(value: Any, sites: Sequence[Site], keys: Sequence[Key]) -> EventLog:
    d = an_object(value, "events")
    cols: dict[str, list[Any] | None] = {}
    for name in EVENT_COLUMNS:
        col = d.get(name)
        cols[name] = None if col is None and name in _NULLABLE else a_column(col, f"events.{name}")
    n = len(cols["seq"] or ())
    for name, col in cols.items():
        if col is not None and len(col) != n:
            raise failure("events", f"columns differ in length (seq has {n} entries, {name} has {len(col)})")
    seq, site, key, picked, predicted, hit, step, t_ns, override, call_site = cols.values()
    int_column(seq, "events.seq", MAX_SIZE)
    ref_column(site, "events.site", "site", "sites", len(sites))
    ref_column(key, "events.key", "key", "keys", len(keys))
    if not isinstance(hit, Bools) and not set(map(type, hit)) <= {bool}:
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
