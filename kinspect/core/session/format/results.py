"""What running and timing the model found: measurements, baselines, sweeps, recompiles
and findings.

Each record's JSON form and its reading sit side by side. Measurements come by the
hundred thousand (a long sweep), so a session file holds them as columns, as it holds its
events: a site column of indices into `sites`, a key column of indices into the key
table, one column per other field (JSON decodes that in well under half the time of one
object per measurement, and the file is half the size). Every column is checked whole,
in C; a value-by-value reader only runs to name the first bad value. A list of
measurement objects (older files, a recompile's measurements, a recording log's records)
is read the same way a field at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import repeat
from operator import attrgetter
from typing import Any

from kinspect.core.session.runtime import (
    BASELINE_KINDS, INSPECTED_KINDS, RECOMPILE_PURPOSES, Baseline, Measurement, Recompile, Sweep,
)
from kinspect.core.session.model import SEVERITIES, Finding, Site
from kinspect.core.session.format.key_table import key_column
from kinspect.core.session.format.checks import (
    MAX_TEXT,
    a_bool,
    a_key,
    a_list,
    a_number,
    a_string,
    a_string_or_null,
    an_int,
    an_int_or_null,
    an_object,
    bool_values,
    failure,
    int_values,
    key_to_json,
    number_values,
    ref_column,
    string_column,
    variant_column,
)
from kinspect.core.dispatch.shapes import MAX_SIZE, Key
from kinspect.core.errors import SessionError
from kinspect.core.session.records import build


def measurement_to_json(m: Measurement) -> dict[str, Any]:
    return {
        "site": m.site, "key": key_to_json(m.key), "variant": m.variant, "method": m.method,
        "median_us": m.median_us, "p20_us": m.p20_us, "p80_us": m.p80_us, "samples": m.samples,
        "l2_flush": m.l2_flush, "tflops": m.tflops, "gbps": m.gbps, "error": m.error,
    }


def measurement_from_json(d: Any, path: str) -> Measurement:
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


_VALUE_COLUMNS: tuple[tuple[str, Any, Callable[[list[Any]], list[Any] | None], Callable[[Any, str], Any]], ...] = (
    ("method", None, string_column, a_string),
    ("median_us", None, number_values, a_number),
    ("p20_us", None, number_values, a_number),
    ("p80_us", None, number_values, a_number),
    ("samples", 0, lambda col: int_values(col, 0, MAX_SIZE), an_int),
    ("l2_flush", False, bool_values, a_bool),
    ("tflops", None, number_values, a_number),
    ("gbps", None, number_values, a_number),
    ("error", None, lambda col: string_column(col, MAX_TEXT, nullable=True),
     lambda x, path: a_string_or_null(x, path, MAX_TEXT)),
)
"""A measurement's fields after site, key and variant: (field, its default (what a column
left out holds), a check giving the column as read or None if any value is bad, the
value check that names a bad one)."""
_MEASUREMENT_COLUMNS: tuple[tuple[str, Any, Callable[[list[Any]], list[Any] | None]], ...] = (
    ("site", None, string_column),
    ("key", None, key_column),
    ("variant", None, lambda col: int_values(col, 0, 255)),
    *((name, default, check) for name, default, check, _ in _VALUE_COLUMNS),
)
"""`measurement_from_json`'s checks a column at a time, in Measurement's field order:
(field, its default, a check giving the column as read or None if any value is bad)."""


def measurements_from_json(value: Any, path: str) -> list[Measurement]:
    """A list of measurements, as `measurement_from_json` reads each: every column checked
    whole first; where one holds a bad value, record by record to name it."""
    rows = a_list(value, path)
    if set(map(type, rows)) <= {dict}:
        columns = []
        for name, default, check in _MEASUREMENT_COLUMNS:
            column = check(list(map(dict.get, rows, repeat(name), repeat(default))))
            if column is None:
                break
            columns.append(column)
        else:
            return build(Measurement, [
                {"site": site, "key": key, "variant": variant, "method": method, "median_us": median_us,
                 "p20_us": p20_us, "p80_us": p80_us, "samples": samples, "l2_flush": l2_flush, "tflops": tflops,
                 "gbps": gbps, "error": error}
                for site, key, variant, method, median_us, p20_us, p80_us, samples, l2_flush, tflops, gbps, error
                in zip(*columns)])
    return [measurement_from_json(x, f"{path}[{i}]") for i, x in enumerate(rows)]


_REQUIRED = frozenset({"method", "median_us"})
"""Columns a file must hold; the others may be left out where every value is the default."""


def measurement_columns_to_json(measurements: Sequence[Measurement], sites: Sequence[Site],
                                keys: dict[Key, int]) -> dict[str, list[Any]]:
    """The measurement columns, keys by their index in the session's key table (`keys`,
    which gains the ones it lacks); a column holding only its default is left out."""
    index = {s.name: i for i, s in enumerate(sites)}
    try:
        site = [index[m.site] for m in measurements]
    except KeyError as e:
        raise SessionError(f"a measurement names site {e.args[0]!r}, which the session does not have") from None
    columns: dict[str, list[Any]] = {"site": site, "key": [keys.setdefault(m.key, len(keys)) for m in measurements],
                                     "variant": list(map(attrgetter("variant"), measurements))}
    for name, default, _, _ in _VALUE_COLUMNS:
        col = list(map(attrgetter(name), measurements))
        if name in _REQUIRED or col.count(default) != len(col):  # each column holds one type
            columns[name] = col
    return columns


def measurement_columns_from_json(value: Any, path: str, sites: Sequence[Site], keys: Sequence[Key]
                                  ) -> list[Measurement]:
    d = an_object(value, path)
    site = a_list(d.get("site"), f"{path}.site")
    n = len(site)
    columns: dict[str, list[Any]] = {"site": site}
    for name in ("key", "variant", *(c[0] for c in _VALUE_COLUMNS)):
        col = d.get(name)
        if col is None and name not in {"key", "variant", *_REQUIRED}:
            continue
        col = columns[name] = a_list(col, f"{path}.{name}")
        if len(col) != n:
            raise failure(path, f"columns differ in length (site has {n} entries, {name} has {len(col)})")
    ref_column(site, f"{path}.site", "site", "sites", len(sites))
    ref_column(columns["key"], f"{path}.key", "key", "keys", len(keys))
    variant_column(columns["variant"], f"{path}.variant", site, sites, [len(s.variants) for s in sites],
                   nullable=False)
    values = {}
    for name, default, check, check_one in _VALUE_COLUMNS:
        col = columns.get(name)
        if col is None:
            values[name] = repeat(default, n)
            continue
        good = check(col)
        values[name] = good if good is not None else [check_one(x, f"{path}.{name}[{i}]") for i, x in enumerate(col)]
    names = [s.name for s in sites]
    return build(Measurement, [
        {"site": names[si], "key": keys[ki], "variant": variant, "method": method, "median_us": median_us,
         "p20_us": p20_us, "p80_us": p80_us, "samples": samples, "l2_flush": l2_flush, "tflops": tflops,
         "gbps": gbps, "error": error}
        for si, ki, variant, method, median_us, p20_us, p80_us, samples, l2_flush, tflops, gbps, error
        in zip(site, columns["key"], columns["variant"], *values.values())])


def baseline_to_json(b: Baseline) -> dict[str, Any]:
    return {"sizes": dict(b.sizes), "kind": b.kind, "wall_us": b.wall_us, "gpu_us": b.gpu_us, "error": b.error,
            "inspected": b.inspected}


def baseline_from_json(d: Any, path: str) -> Baseline:
    d = an_object(d, path)
    kind = a_string(d.get("kind"), f"{path}.kind")
    inspected = a_bool(d.get("inspected", False), f"{path}.inspected")
    if kind not in BASELINE_KINDS and kind not in INSPECTED_KINDS:
        raise failure(f"{path}.kind", f"must be one of {', '.join(dict.fromkeys(BASELINE_KINDS + INSPECTED_KINDS))}")
    if inspected and kind not in INSPECTED_KINDS:
        raise failure(f"{path}.kind", f"{kind} is compiled afresh, never timed on the inspected compile")
    if not inspected and kind not in BASELINE_KINDS:
        raise failure(f"{path}.kind", f'{kind} is only timed on the inspected compile ("inspected": true)')
    return Baseline(
        sizes=_sizes(d.get("sizes"), f"{path}.sizes"), kind=kind,
        wall_us=a_number(d.get("wall_us"), f"{path}.wall_us"),
        gpu_us=a_number(d.get("gpu_us"), f"{path}.gpu_us"),
        error=a_string_or_null(d.get("error"), f"{path}.error", MAX_TEXT),
        inspected=inspected,
    )


def _sizes(d: Any, path: str) -> dict[str, int]:
    return {a_string(k, f"{path} key", 64): an_int(v, f"{path}.{k}") for k, v in an_object(d, path).items()}


def sweep_to_json(w: Sweep) -> dict[str, Any]:
    return {
        "ranges": {k: list(v) for k, v in w.ranges.items()},
        "points": [dict(p) for p in w.points],
        "skipped": [{"sizes": dict(sizes), "reason": why} for sizes, why in w.skipped],
    }


def sweep_from_json(d: Any, path: str) -> Sweep:
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


def recompile_to_json(r: Recompile) -> dict[str, Any]:
    return {"hints": list(r.hints), "purpose": r.purpose,
            "variants": {k: [{"hint": h, "kernel": kernel} for h, kernel in v] for k, v in r.variants.items()},
            "measurements": [measurement_to_json(m) for m in r.measurements], "error": r.error}


def recompile_from_json(d: Any, path: str) -> Recompile:
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
        measurements=tuple(measurements_from_json(d.get("measurements", []), f"{path}.measurements")),
        error=a_string_or_null(d.get("error"), f"{path}.error", MAX_TEXT),
    )


def finding_to_json(f: Finding) -> dict[str, Any]:
    return {
        "kind": f.kind, "message": f.message, "severity": f.severity, "site": f.site,
        "graph": f.graph, "variants": list(f.variants),
    }


def finding_from_json(d: Any, path: str) -> Finding:
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
        variants=tuple(an_int(v, f"{path}.variants[{i}]", 0, 255)
                       for i, v in enumerate(a_list(d.get("variants", []), f"{path}.variants", 256))),
    )
