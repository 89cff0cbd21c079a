"""The session format's records: each one's JSON form beside its reading, the column
reader of a long list of measurements agreeing with the record-by-record one on every
value, a file's measurement columns read as that same list of objects would be, and
timings that follow a session whose measurements change."""

from __future__ import annotations

import copy
import importlib
import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic import synthetic_session

from kinspect.core.errors import SessionError
from kinspect.core.session.format.document import session_from_json, session_to_json
from kinspect.core.session.format.results import measurement_from_json, measurement_to_json, measurements_from_json

RECORD_MODULES = ("header", "compiled", "results", "events", "document")

WRONG = [None, True, False, -1, 0, 7, 255, 256, 2**62 + 1, 2**1001, 1.5, -0.0, -2.5, math.nan, math.inf, -math.inf,
         "", "cuda_events", "x" * 300, "a\x1bb", "\u202e", [], {}, [[1, 2]], [[-1]], [["1"]], [[1.0]], [None]]
FIELDS = ("site", "key", "variant", "method", "median_us", "p20_us", "p80_us", "samples", "l2_flush", "tflops",
          "gbps", "error")


@pytest.mark.parametrize("name", RECORD_MODULES)
def test_each_record_is_written_and_read_in_one_module(name):
    module = importlib.import_module(f"kinspect.core.session.format.{name}")
    public = [n for n in vars(module) if not n.startswith("_") and callable(getattr(module, n))
              and getattr(module, n).__module__ == module.__name__]
    writers = {n.removesuffix("_to_json") for n in public if n.endswith("_to_json")}
    readers = {n.removesuffix("_from_json") for n in public if n.endswith("_from_json")}
    assert writers
    assert writers <= readers | {r.removesuffix("s") for r in readers}, writers - readers


def _base_rows() -> list[dict]:
    rows = [measurement_to_json(m) for m in synthetic_session(sites=1, variants=3, seed=5).measurements[:3]]
    rows[1]["tflops"], rows[1]["gbps"], rows[1]["samples"] = 3, 7.5, 12
    rows[2].pop("l2_flush")
    rows[2].pop("samples")
    return rows


BASE = _base_rows()


def _read(read):
    try:
        return read()
    except SessionError as e:
        return f"error: {e}"


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.sampled_from(FIELDS), st.sampled_from(WRONG)), max_size=3))
def test_the_column_reader_reads_and_refuses_exactly_as_the_record_reader(changes):
    rows = copy.deepcopy(BASE)
    for row, field, value in changes:
        rows[row][field] = copy.deepcopy(value)
    by_record = _read(lambda: [measurement_from_json(r, f"measurements[{i}]") for i, r in enumerate(rows)])
    by_column = _read(lambda: measurements_from_json(rows, "measurements"))
    assert by_column == by_record
    if not isinstance(by_record, str):
        assert [tuple(map(type, vars(m).values())) for m in by_column] == \
               [tuple(map(type, vars(m).values())) for m in by_record]


def _documents() -> tuple[dict, dict]:
    """One session as kinspect writes it (measurement columns) and with the same
    measurements as a list of objects, as version 1 files hold them."""
    s = synthetic_session(sites=1, variants=3, seed=5)
    s.measurements = s.measurements[:3]
    s.measurements[1] = replace(s.measurements[1], tflops=3.0, gbps=7.5, samples=12, error="x")
    columns = session_to_json(s)
    rows = copy.deepcopy(columns)
    rows["version"] = 1
    rows["measurements"] = [measurement_to_json(m) for m in s.measurements]
    return columns, rows


COLUMNS, ROWS = _documents()
VALUE_FIELDS = FIELDS[2:]


def test_kinspect_writes_measurement_columns_that_read_back_as_written():
    assert isinstance(COLUMNS["measurements"], dict)
    assert session_from_json(COLUMNS).measurements == session_from_json(ROWS).measurements


@settings(max_examples=150, derandomize=True, database=None, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.sampled_from(VALUE_FIELDS), st.sampled_from(WRONG)), max_size=2))
def test_measurement_columns_are_refused_or_read_as_the_same_list_of_objects(changes):
    columns, rows = copy.deepcopy(COLUMNS), copy.deepcopy(ROWS)
    for row, field, value in changes:
        columns["measurements"].setdefault(field, [rows["measurements"][i].get(field) for i in range(3)])
        columns["measurements"][field][row] = copy.deepcopy(value)
        rows["measurements"][row][field] = copy.deepcopy(value)
    by_column = _read(lambda: session_from_json(columns).measurements)
    by_rows = _read(lambda: session_from_json(rows).measurements)
    if isinstance(by_rows, str):
        assert isinstance(by_column, str), (by_rows, by_column)
        if len(changes) == 1:  # both name the value
            row, field, _ = changes[0]
            assert f"measurements.{field}[{row}]" in by_column and f"measurements[{row}]" in by_rows, (by_rows, by_column)
    else:
        assert by_column == by_rows


def test_measurement_columns_beside_two_sites_of_one_name_are_refused():
    doc = copy.deepcopy(COLUMNS)
    doc["sites"].append(copy.deepcopy(doc["sites"][0]))  # as files from before call sites were told apart
    with pytest.raises(SessionError, match=r"^sites: two sites share a name$"):
        session_from_json(doc)
    old = copy.deepcopy(ROWS)
    old["sites"].append(copy.deepcopy(old["sites"][0]))
    assert session_from_json(old).sites[0].call_sites  # read as one site called from two places


@pytest.mark.parametrize("change, error", [
    (("site", 0, 1), r"measurements\.site\[0\]: no site 1 \(sites has 1\)"),
    (("key", 2, 99), r"measurements\.key\[2\]: no key 99 \(keys has \d+\)"),
    (("variant", 1, 3), r"measurements\.variant\[1\]: variant 3 out of range for multi_kernel_0 \(3 variants\)"),
    (("site", 0, "multi_kernel_0"), r"measurements\.site\[0\]: expected an integer"),
    (("median_us", None, [1.0]), r"measurements: columns differ in length \(site has 3 entries, median_us has 1\)"),
    (("method", None, None), r"measurements\.method: expected a list"),
])
def test_a_bad_measurement_column_is_refused_naming_it(change, error):
    doc = copy.deepcopy(COLUMNS)
    field, row, value = change
    if row is None:
        doc["measurements"][field] = value
    else:
        doc["measurements"][field][row] = value
    with pytest.raises(SessionError, match=error):
        session_from_json(doc)


def test_a_key_index_one_past_the_table_is_refused_not_an_index_error():
    doc = copy.deepcopy(COLUMNS)
    n = len(doc["keys"])
    doc["measurements"]["key"][2] = n
    with pytest.raises(SessionError, match=rf"^measurements\.key\[2\]: no key {n} \(keys has {n}\)$"):
        session_from_json(doc)
    doc = copy.deepcopy(COLUMNS)
    doc["measurements"]["key"][2] = n - 1
    assert session_from_json(doc).measurements[2].key == tuple(map(tuple, doc["keys"][n - 1]))


def test_a_variant_past_255_is_refused_wherever_a_measurement_names_one():
    """A site has at most 256 variants, so 255 is the last a measurement may name: in the
    columns, in a list of objects (older files) and in a recompile's measurements, which
    no site's variant count checks."""
    row = copy.deepcopy(ROWS["measurements"][0])
    row["variant"] = 255
    assert measurement_from_json(row, "m").variant == measurements_from_json([row], "m")[0].variant == 255
    row["variant"] = 256
    with pytest.raises(SessionError, match=r"^m\.variant: integer 256 outside 0\.\.255$"):
        measurement_from_json(row, "m")
    with pytest.raises(SessionError, match=r"^m\[0\]\.variant: integer 256 outside 0\.\.255$"):
        measurements_from_json([row], "m")
    doc = copy.deepcopy(COLUMNS)
    doc["recompiles"] = [{"hints": [64], "purpose": "verify", "measurements": [row]}]
    with pytest.raises(SessionError, match=r"^recompiles\[0\]\.measurements\[0\]\.variant: integer 256 outside 0\.\.255$"):
        session_from_json(doc)


def test_timings_follow_measurements_added_or_replaced_and_sites_changed():
    s = synthetic_session(sites=1, variants=3, seed=5)
    site = s.sites[0]
    first = s.timings()
    where, t = next((w, t) for w, t in first.items() if t.fastest is not None)
    slow = next(v for v in range(3) if site.kernels[v] != site.kernels[t.fastest])
    m = t.measured[slow]
    s.measurements.append(replace(m, median_us=t.median(t.fastest) / 10, p20_us=None, p80_us=None))
    assert site.kernels[s.timings()[where].fastest] == site.kernels[slow]
    i = len(s.measurements) - 1
    s.measurements[i] = replace(s.measurements[i], median_us=t.median(t.fastest) * 10)
    assert s.timings()[where].fastest == t.fastest
    one = replace(site.variants[slow], source_hash=site.variants[t.fastest].source_hash,
                  config=site.variants[t.fastest].config, source=site.variants[t.fastest].source)
    s.sites[0] = replace(site, variants=tuple(one if v.index == slow else v for v in site.variants))
    assert s.timings()[where].kernels != first[where].kernels
