"""Session files and recording logs: round trips, atomic writes, and every way a file is bad."""

from __future__ import annotations

import copy
import json
import os
from dataclasses import replace
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic import synthetic_session

from kinspect.core.errors import KinspectError, SessionError
from kinspect.core.session.benchmark_tensors import Concrete, Layout, Misfit, Replaced, TemplateMisfit
from kinspect.core.session.runtime import Baseline, Recompile, Sweep
from kinspect.core.session.model import AutotuneRow, CallSite, Finding, Site, TensorSpec
from kinspect.core.store import load, read, save
from kinspect.core.session.format.log import DispatchRecord, LiveLog
from kinspect.core.session.format.document import session_to_json
from kinspect.core.session.format.results import measurement_to_json
from kinspect.core.dispatch.hint_sizes import Assignment
from kinspect.core.dispatch.symbolic import SizeExpr

SCHEMA = json.loads(files("kinspect.core.session.format").joinpath("session.schema.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def everything():
    """A session using every optional part of the format, every field away from its
    default (`test_the_round_trip_fixture_sets_every_field_away_from_its_default`):
    findings, keyless variants, runtime tensors, opaque sizes, call sites, baselines,
    sweeps, recompiles, failed measurements, text that looks like markup, non-ASCII names."""
    s = synthetic_session(sites=3, variants=3, events=30, seed=3)
    site = s.sites[0]
    variants = (site.variants[0], replace(site.variants[1], fused=(AutotuneRow("triton_mm_2", 30.5), AutotuneRow("x", None))),
                replace(site.variants[2], key=None, hint=None, source="def k():\n\treturn 1\r\n"))
    runtime = (*site.tensors, TensorSpec("residual", "input", (SizeExpr("s0"), SizeExpr(("opaque", "sqrt(s0)")))))
    s.sites[0] = replace(site, variants=variants, runtime_tensors=runtime, call="multi_kernel_0.run(arg0_1, buf0)")
    s.sites[1] = replace(s.sites[1], name="[bold]site[/bold] ✓", op="mm ⟨fused⟩")
    s.events = [replace(e, site=s.sites[1].name) if e.site == "multi_kernel_1" else e for e in s.events]
    s.measurements = [replace(m, site=s.sites[1].name) if m.site == "multi_kernel_1" else m for m in s.measurements]
    s.environment = replace(s.environment, cuda="13.0", rank=1, world_size=2, local_rank=1)
    misfit = Misfit("arg0_1", 4096, "in-process", Layout(("8", "s0", "128"), ("128*s0", "128", "1"), "64*s0"),
                    Concrete((8, 4096, 128), (4096, 128, 1), 64, 552_960),
                    Concrete((8, 4096, 128), (524_288, 128, 1), 262_144, 4_456_448),
                    (Replaced("stride[0]", "128*s0", 4096, 524_288),))
    s.graphs[0] = replace(s.graphs[0], wrapper_code="import torch\n\tmulti_kernel_0.run(arg0_1, buf0)\n",
                          misfits=(TemplateMisfit(misfit, "bmm", ("arg0_1", "arg1_1"), 0, True, "multi_kernel_0"),
                                   TemplateMisfit(replace(misfit, path="subprocess"), "a template", ("q",), None,
                                                  False)),
                          hint_sizes=(Assignment(64, {"s0": 64, "s42": -100, "s55": 0}),  # an ignore index, a count
                                      Assignment(4096, {"s0": 512, "s42": -100, "s55": 0},
                                                 "lowered from 4096: bmm needed 9 GB"),
                                      Assignment(8192, {"s0": 64, "s42": -100, "s55": 0},  # a vocabulary held at 64
                                                 "the rest at the hint: a guard of the graph (Eq(s0, 64)) fails",
                                                 ("s0",))),
                          parameters={"arg0_1": "h.0.mlp.weight"})
    calls = tuple(CallSite(i, f"buf{i}", "multi_kernel_0.run(arg0_1, buf0)", 40 + i, f"h.{i}.mlp", "Linear",
                           "/home/me/model.py", 12, "return self.fc(x)") for i in range(2))
    variants = (*variants[:2], replace(variants[2], source_path="/tmp/k.py", emitted="triton_mm_7"))
    s.sites[0] = replace(s.sites[0], call_sites=calls, variants=variants)
    s.events = [replace(e, call_site=i % 2, override=e.picked if i == 3 else None) if e.site == site.name else e
                for i, e in enumerate(s.events)]
    m0 = s.measurements[0]
    s.measurements[0] = replace(m0, l2_flush=True, tflops=12.5, gbps=800.0)
    s.measurements.append(replace(m0, median_us=None, p20_us=None, p80_us=None, samples=0, error="out of memory"))
    sizes = {"B": 100}
    s.baselines = [Baseline(sizes, "static", 61.2, 5.1), Baseline(sizes, "eager", error="compile failed"),
                   Baseline(sizes, "oracle", 58.0, 4.8, inspected=True)]
    s.sweeps = [Sweep({"B": (2, 4096)}, ({"B": 100}, {"B": 1000}), (({"B": 4096}, "needs 140.0 GiB"),))]
    s.recompiles = [Recompile((64, 256), "variance", {site.name: ((64, "5ee6b84a9cdfa11d"), (None, "k1"))},
                              (replace(m0, median_us=22.3),)),
                    Recompile((64,), "verify", {}, (), error="compile failed")]
    s.findings = [
        Finding("identical-variants", "v0 and v1 are the same kernel", "info", "multi_kernel_0", "graph_0", (0, 1)),
        Finding("mispick", "B=100 runs v0 at 1.33x the fastest", "warning", s.sites[1].name, None, (0,)),
        Finding("no-site", "graph_1 has no GEMM", "error"),
    ]
    return s


# ---------------------------------------------------------------- round trips


@pytest.mark.parametrize("build", [everything, lambda: synthetic_session(sites=1, variants=1, measured=False)])
def test_save_then_load_gives_the_same_session(tmp_path, build):
    session = build()
    save(session, tmp_path / "s.json")
    assert read(tmp_path / "s.json") == session


def test_save_is_atomic_and_leaves_only_the_file(tmp_path, synthetic):
    path = tmp_path / "s.json"
    save(synthetic, path)
    save(synthetic, path)  # over an existing file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]
    assert read(path) == synthetic


def test_a_failed_save_keeps_the_old_file_and_no_temporary(tmp_path, synthetic, monkeypatch):
    path = tmp_path / "s.json"
    save(synthetic_session(sites=1), path)
    before = path.read_bytes()

    def crash(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(KinspectError, match=r"cannot write .*s\.json: No space left on device"):
        save(synthetic, path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]


def test_a_saved_file_holds_each_key_once_and_the_events_and_measurements_as_columns(tmp_path, synthetic):
    path = tmp_path / "s.json"
    save(synthetic, path)
    text = path.read_text(encoding="utf-8")
    assert text.split("\n", 1)[0] == '{"format":"kinspect-session","version":2,'
    doc = json.loads(text)
    keys = [tuple(map(tuple, k)) for k in doc["keys"]]
    assert keys == list(dict.fromkeys([e.key for e in synthetic.events] + [m.key for m in synthetic.measurements]))
    assert list(doc["events"]) == ["seq", "site", "key", "picked", "predicted", "hit", "step", "t_ns", "override", "call_site"]
    assert {len(column) for column in doc["events"].values()} == {len(synthetic.events)}
    assert [doc["sites"][i]["name"] for i in doc["events"]["site"]] == [e.site for e in synthetic.events]
    measured = doc["measurements"]
    assert list(measured) == ["site", "key", "variant", "method", "median_us", "p20_us", "p80_us", "samples"]
    assert {len(column) for column in measured.values()} == {len(synthetic.measurements)}
    assert [(doc["sites"][s]["name"], keys[k]) for s, k in zip(measured["site"], measured["key"])] == \
        [(m.site, m.key) for m in synthetic.measurements]


@pytest.mark.parametrize("part, defaults", [
    ("events", {"step": None, "t_ns": None, "override": None}),
    ("measurements", {"p20_us": None, "p80_us": None, "samples": 0}),
])
def test_absent_optional_columns_read_as_their_defaults(tmp_path, synthetic, part, defaults):
    doc = session_to_json(synthetic)
    for column in defaults:
        del doc[part][column]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    assert getattr(load(path), part) == [replace(r, **defaults) for r in getattr(synthetic, part)]


def test_a_session_without_keys_events_and_measurements_has_none(tmp_path, synthetic):
    doc = session_to_json(synthetic)
    del doc["keys"], doc["events"], doc["measurements"]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    session = load(path)
    assert session.events == [] and session.measurements == []


def test_saving_an_event_of_a_site_the_session_lacks_is_refused(tmp_path, synthetic):
    synthetic.events[5] = replace(synthetic.events[5], site="multi_kernel_9")
    with pytest.raises(SessionError, match=r"^an event names site 'multi_kernel_9', which the session does not have$"):
        save(synthetic, tmp_path / "s.json")
    assert list(tmp_path.iterdir()) == []


def write_log(path: Path, session, close: bool = True) -> LiveLog:
    """Record a session as the live recorder does: header, compile-time records, events."""
    log = LiveLog(path, session)
    log.symbols(session.symbols)
    for g in session.graphs:
        log.graph(g)
    index = {}
    for s in session.sites:
        log.site(s)
        index[s.name] = len(index)
        log.runtime_site(index[s.name], s.name)
    combos: list = []
    step = None
    for e in session.events:
        if e.step != step:
            step = e.step
            log.record({"type": "step", "step": step})
        call = next(x for x in session.sites if x.name == e.site).call_site(e.call_site)
        combos.append(DispatchRecord(index[e.site], e.key, e.picked, e.cache_hit, e.override,
                                     call.line if call is not None else None, e.predicted))
        log.event(len(combos) - 1, combos, e.t_ns)
    for m in session.measurements:
        log.measurement(m)
    for f in session.findings:
        log.finding(f)
    if close:
        log.close()
    return log


def test_a_recording_log_loads_as_the_session_it_recorded(tmp_path):
    session = everything()
    write_log(tmp_path / "rec.jsonl", session)
    loaded = read(tmp_path / "rec.jsonl")
    assert loaded.truncated is None
    # what the run appends as it happens; baselines, sweeps and recompiles come after it, into the session file
    assert loaded == replace(session, baselines=[], sweeps=[], recompiles=[])


def test_a_log_whose_last_line_was_cut_opens_marked_truncated(tmp_path):
    session = everything()
    path = tmp_path / "rec.jsonl"
    write_log(path, session)
    lines = path.read_bytes().split(b"\n")
    assert lines[-2] == b'{"type":"end"}'
    path.write_bytes(b"\n".join(lines[:-3]) + b"\n" + lines[-3][: len(lines[-3]) // 2])
    loaded = read(path)
    assert loaded.truncated == f"the last record (line {len(lines) - 2}) was cut short"
    assert loaded.findings == session.findings[:-1]
    assert loaded.events == session.events


def test_a_killed_recording_without_end_record_opens_marked_truncated(tmp_path):
    session = everything()
    path = tmp_path / "rec.jsonl"
    log = write_log(path, session, close=False)  # as after SIGKILL: NUL padding, no end
    try:
        loaded = load(path)
    finally:
        log.close()
    assert loaded.truncated == "the recording stopped before its end record (was it killed?)"
    assert loaded.events == session.events and loaded.sites == session.sites


def test_records_written_twice_in_a_log_are_read_once(tmp_path):
    session = everything()
    path = tmp_path / "rec.jsonl"
    write_log(path, session)
    lines = path.read_bytes().split(b"\n")
    twice = [line for line in lines if line.startswith((b'["', b'{"type":"measurement"', b'{"type":"finding"'))]
    end = lines.index(b'{"type":"end"}')
    path.write_bytes(b"\n".join(lines[:end] + twice + lines[end:]))  # as a forked child wrote them again
    loaded = read(path)
    assert loaded.events == session.events and loaded.measurements == session.measurements
    assert loaded.findings == session.findings


def test_a_log_broken_before_its_last_line_is_refused(tmp_path):
    path = tmp_path / "rec.jsonl"
    write_log(path, everything())
    lines = path.read_text().split("\n")
    lines[3] = lines[3][:10]
    path.write_text("\n".join(lines))
    with pytest.raises(SessionError, match=r"rec.jsonl: line 4 is not valid JSON$"):
        load(path)


def _edit_log_line(path: Path, prefix: str, edit) -> int:
    """Rewrite the first line of a log that starts with `prefix`; returns its number."""
    lines = path.read_text().split("\n")
    n = next(i for i, line in enumerate(lines) if line.startswith(prefix))
    lines[n] = edit(lines[n])
    path.write_text("\n".join(lines))
    return n + 1


@pytest.mark.parametrize(
    "prefix, edit, message",
    [
        ('["e"', lambda line: '["e",0,0]', "line {n}: not an event record"),
        ('["e"', lambda line: '["e",7' + line[6:], "line {n}: event names runtime site 7, which no record introduced"),
        ('["e"', lambda line: '["e",true' + line[6:], "line {n}[1]: expected an integer, got a boolean"),
        ('["e"', lambda line: line[:7] + "99" + line[8:], "line {n}: event names key 99, which no record introduced"),
        ('["e"', lambda line: line.rsplit(",", 1)[0] + ',"soon"]', 'line {n}[8]: expected an integer, got a string'),
        ('["e"', lambda line: line.rsplit(",", 2)[0] + ',[1],0]', 'line {n}[7]: expected a wrapper line number or null'),
        ('{"type":"key"', lambda line: line.replace('"((', '"((x, '), "line {n}.key: expected a key such as ((64, 1024), (64, 4096))"),
        ('{"type":"key"', lambda line: line.replace('"((', '"(((((('), "line {n}.key: expected a key such as ((64, 1024), (64, 4096))"),
        ('{"type":"key"', lambda line: line.replace('"((', '"((4611686018427387905, '),
         "line {n}.key[0][0]: integer 4611686018427387905 outside 0..4611686018427387904"),
        ('{"type":"key"', lambda line: line.split('"key":')[0] + '"key":[["x",1]]}', "line {n}.key[0][0]: expected an integer, got a string"),
        ('{"type":"runtime_site"', lambda line: line.replace("multi_kernel_0", "elsewhere"), "runtime site 'elsewhere' has no site record"),
    ],
)
def test_bad_event_records_in_a_log_are_refused_naming_the_line(tmp_path, prefix, edit, message):
    path = tmp_path / "rec.jsonl"
    write_log(path, synthetic_session(sites=1, events=6))
    n = _edit_log_line(path, prefix, edit)
    with pytest.raises(SessionError) as err:
        load(path)
    assert str(err.value) == f"{path}: " + message.format(n=n)


# ---------------------------------------------------------------- the schema


def test_the_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@settings(max_examples=25, derandomize=True, database=None, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(0, 40), st.integers(0, 1000), st.booleans())
def test_saved_synthetic_sessions_validate_against_the_schema(tmp_path_factory, sites, variants, events, seed, measured):
    path = tmp_path_factory.mktemp("schema") / "s.json"
    save(synthetic_session(sites, variants, events, seed, measured), path)
    VALIDATOR.validate(json.loads(path.read_text(encoding="utf-8")))


def test_a_session_using_every_optional_part_validates(tmp_path):
    save(everything(), tmp_path / "s.json")
    VALIDATOR.validate(json.loads((tmp_path / "s.json").read_text(encoding="utf-8")))


def _set(doc, path, value):
    *parents, last = path
    for p in parents:
        doc = doc[p]
    if value is _DELETE:
        del doc[last]
    else:
        doc[last] = value


_DELETE = object()

# (where, new value, the loader's message after "PATH: ")
CORRUPTIONS = [
    (["environment"], "x", "environment: expected an object, got a string"),
    (["environment", "created"], 5, "environment.created: expected a string, got int"),
    (["environment", "gpu"], ["H200"], "environment.gpu: expected a string, got a list"),
    (["environment", "config", "x"], {"a": 1}, "environment.config.x: expected a finite number, string, boolean or a short list of them, got an object"),
    (["model", "workload", 0, "B"], 1.5, "model.workload[0].B: expected an integer, got float"),
    (["model", "hints", 0], -64, "model.hints[0]: integer -64 outside 0..4611686018427387904"),
    (["symbols"], {}, "symbols: expected a list, got an object"),
    (["symbols", 0, "name"], None, "symbols[0].name: expected a string, got null"),
    (["sites", 0, "name"], _DELETE, "sites[0].name: expected a string, got null"),
    (["sites", 0, "variants"], [], "sites[0].variants: a site needs at least one variant"),
    (["sites", 0, "variants", 1, "key", 1, 0], "64", "sites[0].variants[1].key[1][0]: expected an integer, got a string"),
    (["sites", 0, "variants", 1, "key", 1, 0], 2**62 + 1, "sites[0].variants[1].key[1][0]: integer 4611686018427387905 outside 0..4611686018427387904"),
    (["sites", 0, "variants", 1, "key", 1], 64, "sites[0].variants[1].key[1]: expected a list, got int"),
    (["sites", 0, "variants", 0, "kernel_name"], "k\x1b[31m", "sites[0].variants[0].kernel_name: string holds control character '\\x1b'"),
    (["sites", 0, "variants", 0, "source"], "x" * (4 * 1024 * 1024 + 1), "sites[0].variants[0].source: string longer than 4194304 characters (4194305)"),
    (["sites", 0, "variants", 1, "fused", 0, "time_us"], "fast", "sites[0].variants[1].fused[0].time_us: expected a number, got a string"),
    (["sites", 0, "variants", 1, "fused", 1, "name"], "x\x1b[2J", "sites[0].variants[1].fused[1].name: string holds control character '\\x1b'"),
    (["sites", 0, "tensors", 1, "sizes", 0], ["__import__", "os"], "sites[0].tensors[1].sizes[0]: unknown expression operation '__import__'"),
    (["sites", 1, "name"], "multi_kernel_0", "sites: two sites share a name"),
    (["keys", 2, 1, 0], "128", "keys[2][1][0]: expected an integer, got a string"),
    (["keys", 0, 0], [-1], "keys[0][0][0]: integer -1 outside 0..4611686018427387904"),
    (["events"], [], "events: expected an object, got a list"),
    (["events", "seq"], _DELETE, "events.seq: expected a list, got null"),
    (["events", "hit", 3], "yes", "events.hit[3]: expected true or false, got a string"),
    (["events", "hit", 4], 1, "events.hit[4]: expected true or false, got int"),
    (["events", "seq", 2], True, "events.seq[2]: expected an integer, got a boolean"),
    (["events", "t_ns", 5], -1, "events.t_ns[5]: integer -1 outside 0..4611686018427387904"),
    (["events", "step", 6], 1.5, "events.step[6]: expected an integer, got float"),
    (["events", "override", 7], 256, "events.override[7]: integer 256 outside 0..255"),
    (["events", "picked"], [0] * 29, "events: columns differ in length (seq has 30 entries, picked has 29)"),
    (["events", "picked", 0], 7, "events.picked[0]: variant 7 out of range for multi_kernel_0 (3 variants)"),
    (["events", "override", 1], 3, "events.override[1]: variant 3 out of range for [bold]site[/bold] ✓ (3 variants)"),
    (["events", "site", 0], 3, "events.site[0]: no site 3 (sites has 3)"),
    (["events", "key", 9], 19, "events.key[9]: no key 19 (keys has 19)"),
    (["measurements", "variant", 0], 9, "measurements.variant[0]: variant 9 out of range for multi_kernel_0 (3 variants)"),
    (["measurements", "median_us", 0], "fast", "measurements.median_us[0]: expected a number, got a string"),
    (["measurements", "samples", 1], -3, "measurements.samples[1]: integer -3 outside 0..4611686018427387904"),
    (["measurements", "site", 0], 3, "measurements.site[0]: no site 3 (sites has 3)"),
    (["findings", 0, "severity"], "fatal", "findings[0].severity: must be one of info, warning, error"),
]


@pytest.mark.parametrize("where, value, message", CORRUPTIONS, ids=[m.split(":")[0] for _, _, m in CORRUPTIONS])
def test_wrong_types_are_refused_with_the_field_path(tmp_path, where, value, message):
    doc = session_to_json(everything())
    _set(doc, where, value)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(SessionError) as err:
        load(path)
    assert str(err.value) == f"{path}: {message}"
    # What the loader refuses field by field, the schema refuses too (references aside).
    if not message.startswith(("sites: two", "events: columns", "events.picked[0]: variant", "events.override[1]: variant",
                               "events.site", "events.key", "measurements.variant[0]: variant", "measurements.site")):
        assert not VALIDATOR.is_valid(doc)


# ---------------------------------------------------------------- files that are not sessions


def _top(field, value):
    """A change to one top-level field of a session document (`_DELETE` removes it)."""
    def change(doc):
        if value is _DELETE:
            del doc[field]
        else:
            doc[field] = value
    return change


def _version(value):
    return _top("version", value)


def _format(value):
    return _top("format", value)


@pytest.mark.parametrize(
    "change, message",
    [
        (_format(_DELETE), 'not a kinspect session: missing "format": "kinspect-session"'),
        (_format("kinspect-log"), "line 1 is not a kinspect log header"),
        (_format("chrome-trace"), 'not a kinspect session: missing "format": "kinspect-session"'),
        (_version(_DELETE), 'session has no "version"'),
        (_version(3), "session format version 3 is not supported (this kinspect reads versions 1 and 2)"),
        (_version("2"), "session format version '2' is not supported (this kinspect reads versions 1 and 2)"),
        (_version(True), "session format version True is not supported (this kinspect reads versions 1 and 2)"),
        (_version(2.0), "session format version 2.0 is not supported (this kinspect reads versions 1 and 2)"),
    ],
)
def test_wrong_or_missing_format_and_version_are_refused(tmp_path, change, message):
    doc = session_to_json(synthetic_session(sites=1))
    change(doc)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(SessionError) as err:
        load(path)
    assert str(err.value) == f"{path}: {message}"


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "not valid JSON (line 1 column 1: Expecting value)"),
        (b"kinspect", "not valid JSON (line 1 column 1: Expecting value)"),
        (b'{"format": "kinspect-session",', "not valid JSON (line 1 column 31: Expecting property name enclosed in double quotes)"),
        (b"[1, 2]", "session: expected an object, got a list"),
        (b"null", "session: expected an object, got null"),
        (b'{"format": "kinspect-session", "version": 1}\xff\xfe', "not UTF-8 text (byte 44)"),
        (b"\x89PNG\r\n\x1a\n", "not UTF-8 text (byte 0)"),
    ],
)
def test_files_that_are_not_sessions_are_refused_in_one_line(tmp_path, content, message):
    path = tmp_path / "s.json"
    path.write_bytes(content)
    with pytest.raises(SessionError) as err:
        load(path)
    assert str(err.value) == f"{path}: {message}"


def test_a_missing_file_a_directory_and_an_unreachable_path_are_refused(tmp_path):
    cases = {
        tmp_path / "absent.json": "no such file",
        tmp_path: "is a directory, not a file",
    }
    (tmp_path / "plain").write_text("{}")
    cases[tmp_path / "plain" / "s.json"] = "cannot read (Not a directory)"
    for path, message in cases.items():
        with pytest.raises(SessionError) as err:
            load(path)
        assert str(err.value) == f"{path}: {message}"
        assert isinstance(err.value, KinspectError)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_refused(tmp_path, synthetic):
    path = tmp_path / "s.json"
    save(synthetic, path)
    path.chmod(0)
    with pytest.raises(SessionError) as err:
        load(path)
    assert str(err.value) == f"{path}: cannot read (Permission denied)"


def test_a_log_with_a_foreign_header_is_refused(tmp_path):
    path = tmp_path / "rec.jsonl"
    for version in (9, 2):  # 2: a session file's version, not a log's
        path.write_text(f'{{"type": "header", "format": "kinspect-log", "version": {version}}}\n{{"type": "end"}}\n')
        with pytest.raises(SessionError, match=rf"log format version {version} is not supported \(this kinspect reads version 1\)$"):
            load(path)
    path.write_text('{"format": "kinspect-log", "type": "site"}\n')
    with pytest.raises(SessionError, match="line 1 is not a kinspect log header"):
        load(path)


def test_unknown_log_records_are_refused(tmp_path):
    path = tmp_path / "rec.jsonl"
    write_log(path, synthetic_session(sites=1))
    text = path.read_text().replace('{"type":"end"}', '{"type":"exec","code":"import os"}\n{"type":"end"}')
    path.write_text(text)
    with pytest.raises(SessionError, match=r"line \d+: unknown record type 'exec'"):
        load(path)


def test_load_does_not_depend_on_the_extension(tmp_path, synthetic):
    save(synthetic, tmp_path / "session.txt")
    write_log(tmp_path / "rec.json", synthetic)
    assert read(tmp_path / "session.txt") == synthetic
    assert load(tmp_path / "rec.json").sites == synthetic.sites


def test_sites_decide_after_a_round_trip(tmp_path, synthetic):
    save(synthetic, tmp_path / "s.json")
    site: Site = load(tmp_path / "s.json").sites[0]
    assert site.decide(site.runtime_key({"s0": 1000})).chosen == 2
    assert copy.deepcopy(site) == site


def test_the_documented_example_is_a_valid_session(tmp_path):
    doc = (Path(__file__).resolve().parent.parent / "docs" / "session-format.md").read_text(encoding="utf-8")
    example = doc.split("## The session file", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    VALIDATOR.validate(json.loads(example))
    (tmp_path / "example.json").write_text(example)
    session = load(tmp_path / "example.json")
    assert session.sites[0].decide(session.events[0].key).chosen == 0


# ---------------------------------------------------------------- what kinspect writes, it reads


def test_load_derives_findings_afresh_and_keeps_unknown_kinds(tmp_path, synthetic):
    stale = Finding("identical-variants", "a stale message from an older kinspect", "info", "multi_kernel_0")
    newer = Finding("from-the-future", "a kind this kinspect does not derive", "info")
    synthetic.findings = [stale, newer]
    save(synthetic, tmp_path / "s.json")
    assert read(tmp_path / "s.json").findings == [stale, newer]
    shown = load(tmp_path / "s.json").findings
    assert stale not in shown and shown[-1] == newer
    assert any(f.kind == "identical-variants" and "buy nothing" in f.message for f in shown)


def test_a_session_that_would_not_read_back_is_not_saved_and_the_old_file_stays(tmp_path, synthetic):
    path = tmp_path / "s.json"
    save(synthetic, path)
    before = path.read_bytes()
    twin = synthetic.sites[0]
    synthetic.sites.append(replace(twin, variants=twin.variants[:1]))  # a second site of that name
    with pytest.raises(SessionError, match=r"not saved: the session would not read back \(sites: two sites share a name\)"):
        save(synthetic, path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["s.json"]


def test_call_sites_sweeps_and_the_call_site_column_round_trip(tmp_path, synthetic):
    site = synthetic.sites[0]
    calls = (CallSite(0, "buf3", "multi_kernel_0.run(arg7_1, buf3)", 552, "h.0.attn.c_attn", "Conv1D",
                      "/x/modeling_gpt2.py", 312, "self.c_attn(hidden_states)"), CallSite(1, "buf25"))
    synthetic.sites[0] = replace(site, call_sites=calls)
    synthetic.events = [replace(e, call_site=e.seq % 2) if e.site == site.name else e for e in synthetic.events]
    synthetic.sweeps = [Sweep({"B": (1, 16384)}, ({"B": 100, "N": 64}, {"B": 1000, "N": 64}),
                              (({"B": 16384, "N": 64}, "needs 140 GiB"),))]
    save(synthetic, tmp_path / "s.json")
    VALIDATOR.validate(json.loads((tmp_path / "s.json").read_text()))
    again = read(tmp_path / "s.json")
    assert again == synthetic and again.sites[0].call_sites[0].where == "modeling_gpt2.py:312"


def test_a_file_from_before_call_sites_merges_a_shared_multi_kernel(tmp_path):
    """Older kinspect wrote one site per call of a multi-kernel shared by layers (GPT-2:
    `sites: two sites share a name`); such a file opens as one site with call sites."""
    s = synthetic_session(sites=1, variants=3, events=6)
    doc = session_to_json(s)
    doc["version"], doc["measurements"] = 1, [measurement_to_json(m) for m in s.measurements]  # as they were then
    doc["sites"].append(doc["sites"][0])
    for col in ("call_site",):
        doc["events"].pop(col)
    doc["events"]["site"] = [i % 2 for i in range(len(doc["events"]["site"]))]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    loaded = load(path)
    assert [x.name for x in loaded.sites] == ["multi_kernel_0"]
    assert [c.index for c in loaded.sites[0].call_sites] == [0, 1]
    assert [e.call_site for e in loaded.events] == [i % 2 for i in range(6)]
    doc["sites"][1] = {**doc["sites"][1], "variants": doc["sites"][1]["variants"][:1]}
    path.write_text(json.dumps(doc))
    with pytest.raises(SessionError, match="two sites share a name"):
        load(path)


def _defaults_kept(root: object) -> list[str]:
    """`Class.field` for every field with a default that no instance reachable from
    `root` sets away from that default (fields set by the constructor: the others are
    what an object works out for itself, never in a file)."""
    import dataclasses

    moved: dict[tuple[str, str], bool] = {}
    seen: set[int] = set()

    def walk(x: object) -> None:
        if id(x) in seen:
            return
        seen.add(id(x))
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            for f in dataclasses.fields(x):
                value = getattr(x, f.name)
                if f.init and (f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING):
                    default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
                    moved[(type(x).__name__, f.name)] = moved.get((type(x).__name__, f.name), False) or value != default
                walk(value)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)

    walk(root)
    return sorted(f"{c}.{n}" for (c, n), m in moved.items() if not m)


def test_the_round_trip_fixture_sets_every_field_away_from_its_default():
    s = everything()
    assert _defaults_kept(s) == ["Session.truncated"]  # a log's, never in a session file
    events = list(s.events)
    for column in ("step", "t_ns", "override", "call_site"):
        assert any(getattr(e, column) is not None for e in events), column
