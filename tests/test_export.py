"""Exports as their readers see them: a schema-valid session, a trace Perfetto accepts, a report."""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from pathlib import Path

import jsonschema
import pytest
from synthetic import synthetic_session

from kinspect.core.export import FORMATS, export, render
from kinspect.core.export.markdown import code, prose
from kinspect.core.session.runtime import Baseline
from kinspect.core.session.model import Finding, Session
from kinspect.core.store import load
from kinspect.core.dispatch.shapes import format_key

SCHEMA = Path(__file__).resolve().parent.parent / "kinspect" / "core" / "session" / "format" / "session.schema.json"


# ---------------------------------------------------------------- JSON


def test_json_export_is_a_schema_valid_session_that_loads_back(tmp_path, synthetic):
    out = tmp_path / "s.json"
    export(synthetic, "json", out)
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    assert (doc["format"], doc["version"]) == ("kinspect-session", 2)
    back = load(out)
    assert back.events == synthetic.events
    assert back.measurements == synthetic.measurements


# ---------------------------------------------------------------- Perfetto

PHASES = set("BEXiIbenSTpFstfPOND") | {"M", "C", "R", "c", "(", ")"}
METADATA = {"process_name", "process_labels", "process_sort_index", "thread_name", "thread_sort_index"}


def validate_trace(doc: object) -> list[dict]:
    """The JSON object form of the Chrome trace-event format; returns the non-metadata events."""
    assert isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list)
    process_names, thread_names, used = {}, {}, set()
    events = []
    for ev in doc["traceEvents"]:
        assert isinstance(ev, dict)
        assert isinstance(ev.get("name"), str) and ev["name"]
        assert ev.get("ph") in PHASES
        for field in ("pid", "tid"):
            assert isinstance(ev.get(field), int) and not isinstance(ev[field], bool)
        assert isinstance(ev.get("ts"), (int, float)) and not isinstance(ev["ts"], bool) and ev["ts"] >= 0
        if ev["ph"] == "M":
            assert ev["name"] in METADATA
            assert isinstance(ev.get("args"), dict)
            if ev["name"] == "process_name":
                process_names[ev["pid"]] = ev["args"]["name"]
            if ev["name"] == "thread_name":
                thread_names[(ev["pid"], ev["tid"])] = ev["args"]["name"]
            continue
        if ev["ph"] == "X":
            assert isinstance(ev.get("dur"), (int, float)) and ev["dur"] >= 0
        if "args" in ev:
            assert isinstance(ev["args"], dict)
        used.add((ev["pid"], ev["tid"]))
        events.append(ev)
    for pid, tid in used:
        assert pid in process_names, f"process {pid} has no process_name"
        assert (pid, tid) in thread_names, f"track {pid}/{tid} has no thread_name"
    return events


def perfetto(session: Session) -> tuple[dict, list[dict]]:
    doc = json.loads(render(session, "perfetto"))
    return doc, validate_trace(doc)


def test_trace_has_one_slice_per_dispatch_on_its_sites_track(synthetic):
    doc, slices = perfetto(synthetic)
    assert len(slices) == len(synthetic.events)
    names = {ev["tid"]: ev["args"]["name"] for ev in doc["traceEvents"] if ev["name"] == "thread_name"}
    assert sorted(names.values()) == sorted(s.name for s in synthetic.sites)
    for ev, e in zip(slices, synthetic.events):
        site = synthetic.site(e.site)
        assert names[ev["tid"]] == e.site
        measured = synthetic.timings_at(e.site, e.key).median(e.picked) is not None
        assert ev["ph"] == ("X" if measured else "i") and ev["name"] == site.variants[e.picked].label
        args = ev["args"]
        assert (args["seq"], args["site"], args["picked"], args["predicted"], args["hit"], args["override"]) == (
            e.seq, e.site, e.picked, e.predicted, e.cache_hit, e.override)
        assert args["key"] == format_key(e.key)
        decision = site.decide(e.key)
        assert args["distances"] == {f"v{s.index}": s.distance for s in decision.scores}
        assert min(args["distances"], key=args["distances"].get) == f"v{decision.chosen}"


def test_trace_timestamps_are_recorded_microseconds_without_overlap(synthetic):
    doc, slices = perfetto(synthetic)
    t0 = synthetic.events[0].t_ns
    assert [ev["ts"] for ev in slices] == [(e.t_ns - t0) / 1000 for e in synthetic.events]
    assert doc["otherData"]["timestamps"] == "recorded t_ns"
    last_end: dict[int, float] = {}
    for ev in slices:
        assert ev["ts"] >= last_end.get(ev["tid"], 0.0)
        last_end[ev["tid"]] = ev["ts"] + ev.get("dur", 0.0)


def test_trace_without_timestamps_lays_events_out_in_sequence(synthetic):
    events = list(synthetic.events)
    events[3] = dataclasses.replace(events[3], t_ns=None)
    doc, slices = perfetto(dataclasses.replace(synthetic, events=events))
    assert slices[0]["ts"] == 0.0
    for ev, after in zip(slices, slices[1:]):
        assert after["ts"] == ev["ts"] + ev.get("dur", 0.0) + 1.0
    assert doc["otherData"]["timestamps"].startswith("synthetic")


def test_trace_marks_overrides_and_misses_in_args(synthetic):
    events = list(synthetic.events)
    events[5] = dataclasses.replace(events[5], picked=2, override=2, cache_hit=False)
    _, slices = perfetto(dataclasses.replace(synthetic, events=events))
    assert (slices[5]["args"]["override"], slices[5]["args"]["hit"], slices[5]["name"]) == (2, False, "v2 (hint 1024)")


def test_a_dispatch_lasts_its_variants_measured_time_or_is_a_marker():
    """samples/mlp, swept on the H200, its workload's first key left unmeasured; variants
    that are one kernel still get slices named apart, by variant."""
    session = load(Path(__file__).resolve().parent.parent / "samples" / "mlp.session.json")
    first = session.events[0]
    session.measurements = [m for m in session.measurements if m.key != first.key]
    doc, slices = perfetto(session)
    assert doc["otherData"]["timestamps"] == "recorded t_ns"
    timed = [ev for ev in slices if ev["ph"] == "X"]
    markers = [ev for ev in slices if ev["ph"] == "i"]
    assert timed and markers and len(timed) + len(markers) == len(session.events)
    for ev in timed:
        e = session.events[ev["args"]["seq"]]
        t = session.timings_at(e.site, e.key)
        assert ev["args"]["measured_us"] == t.median(e.picked) == t.measured[e.picked].median_us
        assert t.measured[e.picked].method == "cuda_events"
        assert ev["args"]["duration"].startswith("the variant's median at this key (CUDA events)")
        assert ev["dur"] == ev["args"]["measured_us"] or ev["args"]["duration"].endswith("cut short where the site dispatches again")
    for ev in markers:
        e = session.events[ev["args"]["seq"]]
        assert session.timings_at(e.site, e.key).median(e.picked) is None
        assert "dur" not in ev and ev["s"] == "t"
        assert ev["args"]["duration"] == "none: a dispatch marker (this variant was not measured at this key)"
    site = session.site("multi_kernel_0")
    kernels = [v.kernel_name for v in site.variants]
    assert len(set(kernels)) < len(kernels)  # two variants are one kernel
    for ev in slices:
        if ev["args"]["site"] == site.name:
            assert ev["name"] == site.variants[ev["args"]["picked"]].label


# ---------------------------------------------------------------- Markdown


def unescaped_pipes(line: str) -> int:
    """Pipes that delimit cells: those not preceded by an odd run of backslashes."""
    return sum(1 for m in re.finditer(r"(\\*)\|", line) if len(m.group(1)) % 2 == 0)


def tables(text: str) -> list[list[str]]:
    out: list[list[str]] = []
    prev = ""
    for line in text.split("\n"):
        if line.startswith("|"):
            if not prev.startswith("|"):
                out.append([])
            out[-1].append(line)
        prev = line
    return out


def hostile(session: Session) -> Session:
    """Session text that would break a naive report: pipes, newlines, HTML, emphasis, backticks."""
    site = session.sites[0]
    variants = (dataclasses.replace(site.variants[0], kernel_name="k|`x`\nnext"),) + site.variants[1:]
    sites = [dataclasses.replace(site, variants=variants)] + session.sites[1:]
    env = dataclasses.replace(session.environment, gpu="H200 | fake\nrow", config={"note": "a|b"})
    findings = [Finding("odd", "B | C\nD <b>bold</b> **x** [l](http://e) `t`", site=site.name)]
    return dataclasses.replace(session, sites=sites, environment=env, findings=findings)


def test_report_has_every_section_in_order(synthetic):
    text = render(synthetic, "md")
    heads = [line[3:] for line in text.split("\n") if line.startswith("## ")]
    assert heads == ["Environment", "Symbols", "Sites", "Findings", "Quality", "Comparison", "Decisions",
                     "Measurements", "Baselines"]
    assert text.startswith("# kinspect report: synthetic\n")


def test_report_tables_keep_their_shape_whatever_the_session_says(synthetic):
    text = render(hostile(synthetic), "md")
    for table in tables(text):
        widths = {unescaped_pipes(line) for line in table}
        assert len(widths) == 1, table
    assert "  - `multi_kernel_0`: B \\| C D \\<b\\>bold\\</b\\> \\*\\*x\\*\\* \\[l\\](http://e) \\`t\\`\n" in text
    assert "<b>" not in text
    assert "``k\\|`x` next``" in text
    assert "`H200 \\| fake row`" in text


def test_report_notes_identical_kernels(synthetic):
    text = render(synthetic, "md")
    assert "- v0 and v2 run the same kernel, `triton_tem_fused_mm_0_0`: choosing between them changes nothing" in text


def test_report_folds_decisions_per_site_and_key(synthetic):
    events = list(synthetic.events)
    events[0] = dataclasses.replace(events[0], predicted=(events[0].picked + 1) % 3)
    text = render(dataclasses.replace(synthetic, events=events), "md")
    decisions = text.split("## Decisions")[1].split("## Measurements")[0]
    rows = [line for line in decisions.split("\n") if line.startswith("| `")]
    pairs = Counter((e.site, e.key) for e in events)
    assert len(rows) == len(pairs)
    assert sum(int(row.split(" | ")[2]) for row in rows) == len(events)
    assert f"{len(events)} dispatch events at {len(pairs)} distinct shapes of a site" in decisions
    assert "differed from Inductor's pick 1 times" in decisions
    wrong = [r for r in rows if "| no, " in r]
    assert len(wrong) == 1 and wrong[0].startswith(f"| `{events[0].site}` | `B=")
    assert f"no, 1 call (predicted v{events[0].predicted})" in wrong[0]


def test_report_measurements_show_regret_against_the_fastest(synthetic):
    text = render(synthetic, "md")
    measured = text.split("## Measurements")[1]
    assert "| site | sizes | variant | method | median µs | p20–p80 µs | samples | regret |" in measured  # no CUPTI here
    assert "| `multi_kernel_0` | `B=1000 N=64` | v0 (hint 64) | synthetic | 15.0 | 14.5–15.6 | 50 | " \
           "×1.50 (slower beyond noise) |" in measured
    assert "| v1 (hint 256) | synthetic | 10.0 | 9.7–10.4 | 50 | ×1.00 (fastest) |" in measured


def test_report_prefers_event_timing_and_shows_cupti_beside_it(synthetic):
    """Every variant timed both ways, CUPTI ranking v0 fastest: the report reads CUDA
    events for all of them, CUPTI only as the cross-check column."""
    first = next(m for m in synthetic.measurements if m.variant == 0)
    here = [m for m in synthetic.measurements if (m.site, m.key) == (first.site, first.key)]
    events = [dataclasses.replace(m, method="cuda_events") for m in here]
    cross = [dataclasses.replace(m, method="cupti", median_us=14.2 if m.variant == 0 else 30.0,
                                 p20_us=None, p80_us=None, samples=20) for m in here]
    s = dataclasses.replace(synthetic, measurements=[*events, *cross])
    measured = render(s, "md").split("## Measurements")[1]
    row = next(line for line in measured.split("\n") if line.startswith(f"| `{first.site}`") and "| v0 " in line)
    assert "| CUDA events | 15.0 | 14.5–15.6 | 50 | 14.2 | ×1.50 (slower beyond noise) |" in row


def test_report_lists_baselines():
    s = synthetic_session(events=0, measured=False)
    s.baselines = [Baseline({"B": 1000}, "exact_hint", 77.6, 15.1), Baseline({"B": 1000}, "hinted", 117.8, 34.4),
                   Baseline({"B": 1000}, "static", None, None, "CUDA out of memory")]
    based = render(s, "md").split("## Baselines")[1]
    assert "| sizes | kind | GPU µs | wall µs | error |" in based
    assert "| B=1000 | `exact_hint` | 15.1 | 77.6 |  |" in based
    assert "| B=1000 | `static` |  |  | CUDA out of memory |" in based


def test_an_empty_session_reports_none_recorded():
    s = synthetic_session(events=0, measured=False)
    text = render(dataclasses.replace(s, symbols=[], findings=[]), "md")
    for section in ("Symbols", "Findings", "Decisions", "Measurements", "Baselines"):
        assert f"## {section}\n\nNone recorded." in text


def test_escaping_helpers():
    assert prose("a|b\r\nc") == "a\\|b c"
    assert prose("\\|") == "\\\\\\|"
    assert code("a`b") == "``a`b``"
    assert code("`a") == "`` `a ``"
    assert code("x|y") == "`x\\|y`" and code("x|y", in_table=False) == "`x|y`"


# ---------------------------------------------------------------- the command


@pytest.mark.parametrize("fmt", FORMATS)
def test_kinspect_export_writes_each_format(kinspect_cli, session_file, tmp_path, fmt):
    out = tmp_path / f"out.{fmt}"
    r = kinspect_cli("export", session_file, "--format", fmt, "-o", out)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"wrote {out} ({fmt}, 24 events)\n"
    text = out.read_text()
    if fmt == "md":
        assert "## Decisions" in text
    else:
        assert json.loads(text)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--format", "md", "-o", "{tmp}/missing/out.md"), "kinspect: error: {tmp}/missing/out.md: no such folder {tmp}/missing\n"),
        (("--format", "md", "-o", "-"),
         "kinspect: error: -: kinspect writes a file, not standard output; give a file name (or /dev/stdout)\n"),
        (("--format", "json", "-o", ""), "kinspect: error: the output file name is empty; give a file name\n"),
        (("--format", "perfetto", "-o", "/proc/version"),
         "kinspect: error: /proc/version: is read-only; kinspect does not replace it (make it writable, or name "
         "another file)\n"),
        (("--format", "md", "-o", "{tmp}"), "kinspect: error: {tmp}: is a directory; give a file name\n"),
    ],
)
def test_kinspect_export_errors_are_one_line(kinspect_cli, session_file, tmp_path, args, message):
    r = kinspect_cli("export", session_file, *(a.format(tmp=tmp_path) for a in args))
    assert r.returncode == 2
    assert r.stderr == message.format(tmp=tmp_path)


def test_kinspect_export_of_a_missing_session(kinspect_cli, tmp_path):
    r = kinspect_cli("export", tmp_path / "nope.json", "--format", "json", "-o", tmp_path / "x.json")
    assert (r.returncode, r.stderr) == (2, f"kinspect: error: {tmp_path / 'nope.json'}: no such file\n")
    assert not (tmp_path / "x.json").exists()


def test_the_trace_names_each_dispatchs_call_site_in_the_users_terms():
    """The GPT-2 sample: multi_kernel_0 runs for both layers' c_attn."""
    session = load(Path(__file__).resolve().parent.parent / "samples" / "gpt2.session.json")
    doc, slices = perfetto(session)
    tracks = [ev["args"]["name"] for ev in doc["traceEvents"] if ev["name"] == "thread_name"]
    assert "multi_kernel_0 · h.0.attn.c_attn +1" in tracks
    layers = {ev["args"]["call_site"] for ev in slices if ev["args"]["site"] == "multi_kernel_0"}
    assert layers == {"h.0.attn.c_attn", "h.1.attn.c_attn"}
    assert all(ev["args"]["user_code"] == "modeling_gpt2.py:185" for ev in slices if ev["args"]["site"] == "multi_kernel_0")
