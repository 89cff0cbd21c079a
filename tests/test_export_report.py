"""The Markdown report and the trace on the recorded samples, read as their readers read
them: by the user's names and sizes, in order, rounded, with nothing to read past."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from kinspect.core.dispatch.shapes import sizes_text
from kinspect.core.export import render
from kinspect.core.quality.overview import SizeNamer
from kinspect.core.store import load

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.fixture(scope="module")
def sessions():
    return {name: load(SAMPLES / f"{name}.session.json") for name in ("mlp", "gpt2", "linear")}


@pytest.fixture(scope="module")
def reports(sessions):
    return {name: render(s, "md") for name, s in sessions.items()}


def section(text: str, name: str) -> str:
    return text.split(f"\n## {name}\n")[1].split("\n## ")[0]


def tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """(header, rows) of each table."""
    out: list[tuple[list[str], list[list[str]]]] = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("|") and not (i and lines[i - 1].startswith("|")):
            header = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            body = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                body.append([c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]])
            out.append((header, body))
    return out


def test_tensors_go_by_the_users_names_and_inductors_are_a_flag_away(sessions, reports):
    sites = section(reports["mlp"], "Sites")
    assert "tensors: `bias (4096,)`, `x (B, 1024)`, `weight (4096, 1024)`, `out (B, 4096)`" in sites
    assert "arg3_1" not in sites and "s33" not in sites
    gpt2 = section(reports["gpt2"], "Sites")
    assert "`x (B, S, 768)`" in gpt2 and "`out (B*S, 2304)`" in gpt2 and "s33*s50" not in gpt2
    inductor = section(render(sessions["mlp"], "md", inductor_names=True), "Sites")
    assert "tensors: `arg1_1 (4096,)`, `arg3_1 (s33, 1024)`, `arg0_1 (4096, 1024)`, `buf0 (s33, 4096)`" in inductor


def test_findings_read_as_the_symbolic_view_does(reports):
    findings = section(reports["gpt2"], "Findings")
    assert "out dim 0 is B\\*S (4096 at hint 64, 65536 at hint 256" in findings
    assert not re.search(r"\bs(33|50)\b|\bbuf\d+ dim\b", findings)


def test_a_call_site_names_its_module_and_its_class_once(reports):
    calls = section(reports["mlp"], "Sites")
    assert "| `0` | `Linear` |" in calls
    assert "0 (Linear)` | `Linear`" not in calls
    assert "| `h.1.attn.c_attn` | `Conv1D` | `modeling_gpt2.py:185` |" in section(reports["gpt2"], "Sites")


def first_table(text: str) -> list[list[str]]:
    return tables(text)[0][1]


def test_decisions_go_by_the_users_sizes_sorted_by_site_then_size(sessions, reports):
    decisions = first_table(section(reports["mlp"], "Decisions"))
    assert decisions[0][:4] == ["`multi_kernel_0`", "`B=2`", "1", "v0"]
    assert ["`multi_kernel_0`", "`B=157`", "1", "v1", "1 miss, 0 hits", "yes"] in decisions
    order = [(r[0], int(r[1].strip("`").removeprefix("B="))) for r in decisions]
    assert order == sorted(order) and len({site for site, _ in order}) == 2
    gpt2 = [r for r in first_table(section(reports["gpt2"], "Decisions")) if r[0] == "`multi_kernel_0`"]
    sizes = [tuple(int(part.split("=")[1]) for part in r[1].strip("`").split()) for r in gpt2]
    assert sizes == sorted(sizes) and sizes[0] == (2, 16)  # B, then S
    assert "((4096,), (157, 1024)" not in reports["mlp"]
    inductor = render(sessions["mlp"], "md", inductor_names=True)
    assert "| `multi_kernel_0` | `((4096,), (157, 1024), (4096, 1024), (157, 4096))` | 1 | v1 |" in inductor


def test_measurements_go_by_size_in_one_number_format(reports):
    measured = section(reports["mlp"], "Measurements")
    assert "| site | sizes | variant | method | median µs | p20–p80 µs | samples | CUPTI µs | regret |" in measured
    assert ("| `multi_kernel_0` | `B=157` | v1 (hint 256) | CUDA events | 8.3 | 8.3–8.3 | 25 | 8.5 | "
            "×1.48 (slower beyond noise) |") in measured
    assert "| `multi_kernel_0` | `B=157` | v0 (hint 64) | CUDA events | 5.6 | 5.6–5.7 | 25 |" in measured
    order = [(r[0], int(r[1].strip("`").removeprefix("B=")), r[2]) for r in first_table(measured)]
    assert order == sorted(order)  # by site, then size, then variant
    assert not re.search(r"\| \d+\.\d\d \|", measured)  # every time has one decimal


def test_peaks_are_rounded_in_their_units(reports):
    env = section(reports["mlp"], "Environment")
    assert "| GPU peak, bf16 GEMM | 800 TFLOP/s |" in env and "| GPU peak, memory bandwidth | 4225 GB/s |" in env
    assert "| timing overhead, launch gap in a CUDA graph | 0.6 µs |" in env
    assert "800.245" not in env


def test_no_table_has_an_empty_column(reports):
    for name, text in reports.items():
        for header, body in tables(text):
            for i, title in enumerate(header):
                assert any(row[i] for row in body), f"{name}: column {title!r} of {header} is empty"


def test_the_title_and_the_trace_name_the_model(sessions, reports):
    assert reports["mlp"].startswith("# kinspect report: mlp\n")
    doc = json.loads(render(sessions["mlp"], "perfetto"))
    (process,) = [e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"]
    assert process == "kinspect: mlp"
    dispatch = next(e for e in doc["traceEvents"] if e.get("cat") == "dispatch")
    assert dispatch["args"]["sizes"] == "B=1000"  # the key too, as Inductor sees it
    assert dispatch["args"]["key"] == "((4096,), (1000, 1024), (4096, 1024), (1000, 4096))"


def test_export_writes_the_report_with_its_map_and_the_flag_gives_inductors_names(kinspect_cli, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "mlp.md"
    r = kinspect_cli("export", SAMPLES / "mlp.session.json", "--format", "md", "-o", out, "--inductor-names")
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert "![decision map](mlp.map.png)" in text and (tmp_path / "mlp.map.png").is_file()
    assert "`arg3_1 (s33, 1024)`" in text


def test_the_inspectors_export_writes_the_same_report_and_map(sessions, tmp_path):
    """What the inspector's export dialog calls: the report of `kinspect export --format md`."""
    pytest.importorskip("matplotlib")
    from kinspect.report_files import write

    out = tmp_path / "linear.md"
    written = write(sessions["linear"], "md", out)
    assert written.images == ["linear.map.png"] and written.notes == []
    assert out.read_text() == render(sessions["linear"], "md", ["linear.map.png"]) + "\n"
    assert (tmp_path / "linear.map.png").read_bytes()[:4] == b"\x89PNG"


def test_shared_multi_kernels_say_which_layer_decided_how_many_shapes(sessions, reports):
    shared = section(reports["gpt2"], "Decisions").split("Shared multi-kernels")[1]
    assert "| `multi_kernel_0` | `h.0.attn.c_attn` | 35 of 35 |" in shared
    s = sessions["gpt2"]
    events = list(s.events)
    i = next(i for i, e in enumerate(events) if e.site == "multi_kernel_0" and not e.cache_hit)
    events[i] = dataclasses.replace(events[i], call_site=1)  # the second layer met this shape first
    text = section(render(dataclasses.replace(s, events=events), "md"), "Decisions")
    sizes = SizeNamer(s)(s.site("multi_kernel_0"), events[i].key)
    assert f"| `multi_kernel_0` | `h.1.attn.c_attn` | 1 of 35 | `{sizes_text(sizes)}` |" in text
    assert "| `multi_kernel_0` | `h.0.attn.c_attn` | 34 of 35 |  |" in text
