"""`kinspect explain` as a user runs it: a subprocess, its stdout, its stderr, its status."""

from __future__ import annotations

import dataclasses
import json

import pytest
from synthetic import synthetic_session

from kinspect.core.dispatch.decision import decide
from kinspect.core.session.model import Session
from kinspect.core.store import load, save

ADDMM_1000 = [[4096], [1000, 1024], [4096, 1024], [1000, 4096]]


def ok(result) -> str:
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return result.stdout


def one_error_line(result) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("kinspect: error: ")
    return lines[0].removeprefix("kinspect: error: ")


# ---------------------------------------------------------------- overview


def test_without_a_shape_it_lists_symbols_and_sites(kinspect_cli, session_file):
    out = ok(kinspect_cli("explain", session_file))
    assert "recorded 2026-11-29T00:00:00Z on synthetic with torch synthetic" in out
    for text in ["symbols", "sites", "multi_kernel_0", "multi_kernel_1", "multi_kernel_2", "addmm", "x (B, 1024)", "b (4096, 2*N)"]:
        assert text in out, text
    assert "64: triton_tem_fused_mm_0_0" in out
    # the symbols table: alias, Inductor name, input, dim, example
    assert any(line.split() == ["│", "B", "│", "s0", "│", "x", "│", "0", "│", "1000", "│"] for line in out.splitlines())


def test_symbols_held_at_their_examples_are_named_as_the_user_names_them(kinspect_cli, tmp_path):
    """Where no one size per symbol runs a graph (a loss that guards its vocabulary above 4096),
    the overview's "tuned at" line names the symbols held at their example by the user's names."""
    from kinspect.core.dispatch.hint_sizes import Assignment

    session = synthetic_session(sites=1, variants=2, events=4)
    b = next(s for s in session.symbols if s.alias == "B")
    held = Assignment(64, {b.name: 1000}, "the rest at the hint: a guard of the graph (4096 < s0) fails at the hint",
                      (b.name,))
    session.graphs[0] = dataclasses.replace(session.graphs[0], hint_sizes=(held,))
    save(session, tmp_path / "held.json")
    out = " ".join(ok(kinspect_cli("explain", tmp_path / "held.json")).split())
    assert (f"{session.graphs[0].name} tuned at hint 64: B=1000 (B held at the example sizes, the rest at the hint: "
            "a guard of the graph (4096 < s0) fails at the hint)") in out


def test_hints_tuned_at_the_same_sizes_are_said_to_share_a_variant(kinspect_cli):
    """A MoE stack recorded on an H100 with both switches: hint 4096, lowered to fit, was tuned
    at hint 256's sizes, so each of its sites has two variants, named by their GEMM and hints."""
    from pathlib import Path

    moe = Path(__file__).parent / "fixtures" / "sessions" / "moe_layers_fixed_h100_2026-12-06.session.json"
    out = " ".join(ok(kinspect_cli("explain", moe)).split())  # as one line, however the terminal wraps it
    assert ("; hints 256 and 4096 were tuned at the same sizes, so each site has one variant for them, hint "
            "4096's") in out
    session = load(moe)
    assert [(site.op, [v.hint for v in site.variants]) for site in session.sites] == [
        ("mm", [64, 4096]), ("mm", [64, 4096]), ("bmm", [64, 4096]), ("bmm", [64, 4096]), ("mm", [64, 4096]),
        ("bmm", [64, 4096])]


def test_the_overview_as_json(kinspect_cli, session_file, synthetic: Session):
    doc = json.loads(ok(kinspect_cli("explain", session_file, "--json")))
    assert [s["alias"] for s in doc["symbols"]] == ["B", "N"]
    assert [s["name"] for s in doc["sites"]] == ["multi_kernel_0", "multi_kernel_1", "multi_kernel_2"]
    site = doc["sites"][1]
    assert site["tensors"] == ["(s0, 4096)", "(4096, 2*s1)", "(s0, 2*s1)"]
    assert [v["hint"] for v in site["variants"]] == [64, 256, 1024]
    assert site["variants"][0]["key"] == [[64, 4096], [4096, 64], [64, 64]]
    assert doc["truncated"] is None
    assert doc["environment"] == {"gpu": synthetic.environment.gpu, "torch": synthetic.environment.torch,
                                  "created": synthetic.environment.created}
    assert [s["example"] for s in doc["symbols"]] == [x.example for x in synthetic.symbols]
    shown = load(session_file)  # its findings as a user sees them: derived afresh
    for s in doc["sites"]:  # each site with its own findings, and only those
        assert s["findings"] == [f.message for f in shown.findings if f.site == s["name"]]
    assert any(s["findings"] for s in doc["sites"]) and len({tuple(s["findings"]) for s in doc["sites"]}) > 1


# ---------------------------------------------------------------- decisions


def test_a_shape_as_json_gives_each_sites_decision(kinspect_cli, session_file, synthetic: Session):
    doc = json.loads(ok(kinspect_cli("explain", session_file, "--shape", "B=1000 N=64", "--json")))
    assert doc["shape"] == "B=1000 N=64"
    assert [s["name"] for s in doc["sites"]] == [s.name for s in synthetic.sites]
    for entry, site in zip(doc["sites"], synthetic.sites):
        assert {"name", "runtime_key", "variants", "chosen"} <= entry.keys()
        runtime = site.runtime_key({"s0": 1000, "s1": 64})
        decision = decide(site.keys, runtime)
        assert entry["runtime_key"] == [list(t) for t in runtime]
        assert entry["chosen"] == decision.chosen
        for row, variant, score in zip(entry["variants"], site.variants, decision.scores, strict=True):
            assert {"index", "hint", "key", "distance"} <= row.keys()
            assert (row["index"], row["hint"]) == (variant.index, variant.hint)
            assert row["key"] == [list(t) for t in variant.key]
            assert row["distance"] == score.distance
    first = doc["sites"][0]
    assert first["runtime_key"] == ADDMM_1000
    assert first["chosen"] == 2 and first["tied"] == [2]
    assert first["reason"] == "v2 (hint 1024) is nearest at distance 0.068; next is v1 (hint 256) at 3.932"


def test_a_site_the_shape_does_not_determine_reports_what_is_missing(kinspect_cli, session_file):
    doc = json.loads(ok(kinspect_cli("explain", session_file, "--shape", "B=1000", "--json")))
    by_name = {s["name"]: s for s in doc["sites"]}
    assert by_name["multi_kernel_1"] == {"name": "multi_kernel_1", "graph": "graph_0", "op": "mm", "error": "multi_kernel_1 needs a value for N"}
    assert by_name["multi_kernel_0"]["chosen"] == 2


def test_the_tie_at_a_geometric_midpoint_goes_to_the_first_variant(kinspect_cli, session_file):
    doc = json.loads(ok(kinspect_cli("explain", session_file, "--shape", "B=128", "--site", "multi_kernel_0", "--json")))
    (site,) = doc["sites"]
    assert site["chosen"] == 0 and site["tied"] == [0, 1]
    assert site["reason"].startswith("tie at distance 2.000 between v0 (hint 64) and v1 (hint 256)")


def test_a_full_key_with_a_site(kinspect_cli, session_file):
    key = "(4096,),(1000,1024),(4096,1024),(1000,4096)"
    doc = json.loads(ok(kinspect_cli("explain", session_file, "--shape", key, "--site", "multi_kernel_0", "--json")))
    (site,) = doc["sites"]
    assert site["runtime_key"] == ADDMM_1000 and site["chosen"] == 2
    assert all("mismatch" not in v for v in site["variants"])


def test_a_full_key_that_does_not_fit_the_site_is_refused_in_one_line(kinspect_cli, session_file):
    result = kinspect_cli("explain", session_file, "--shape", "(1000,1024),(4096,1024)", "--site", "multi_kernel_0")
    assert one_error_line(result) == ("this key does not fit multi_kernel_0: the key has 2 tensors; "
                                      "this site is keyed on 4 (bias, x, weight, out)")


def test_a_full_key_is_decided_only_at_the_sites_it_fits(kinspect_cli, session_file):
    """The first Linear's whole key, given to the second Linear or to no site: never decided
    there with its static sizes counted as distance."""
    key = "(4096,),(1000,1024),(4096,1024),(1000,4096)"
    one_error_line(kinspect_cli("explain", session_file, "--shape", key, "--site", "multi_kernel_1"))
    doc = json.loads(ok(kinspect_cli("explain", session_file, "--shape", key, "--json")))
    decided = [s["name"] for s in doc["sites"] if "error" not in s]
    assert decided == ["multi_kernel_0", "multi_kernel_2"]  # two Linear(1024, 4096)
    assert "does not fit multi_kernel_1" in next(s["error"] for s in doc["sites"] if s["name"] == "multi_kernel_1")


def test_the_tables_say_what_the_mismatch_mark_means(kinspect_cli, tmp_path, synthetic):
    """A variant recorded without a key (Inductor charges it 2**62) is marked and said so."""
    site = synthetic.sites[0]
    synthetic.sites[0] = dataclasses.replace(site, variants=(dataclasses.replace(site.variants[0], key=None),
                                                             *site.variants[1:]))
    path = tmp_path / "nokey.json"
    save(synthetic, path)
    out = ok(kinspect_cli("explain", path, "--shape", "B=1000", "--site", "multi_kernel_0"))
    assert "no key !" in out  # the mark in the distance column...
    assert "! key mismatch, v0: variant has no key (Inductor charges 2**62)" in out  # ...and its legend


def test_a_shape_as_tables(kinspect_cli, session_file):
    out = ok(kinspect_cli("explain", session_file, "--shape", "B=1000", "--site", "multi_kernel_0"))
    # the user's sizes; Inductor's key is one flag away
    assert "multi_kernel_0 (addmm) at B=1000" in [line.strip() for line in out.splitlines()]
    inductor = ok(kinspect_cli("explain", session_file, "--shape", "B=1000", "--site", "multi_kernel_0",
                               "--inductor-names"))
    assert "multi_kernel_0 (addmm) at ((4096,), (1000, 1024), (4096, 1024), (1000, 4096))" in inductor
    chosen = [line for line in out.splitlines() if "▶" in line]
    assert len(chosen) == 1 and "triton_tem_fused_mm_0_0" in chosen[0] and "1024" in chosen[0]
    assert "v2 (hint 1024) is nearest at distance 0.068; next is v1 (hint 256) at 3.932" in out


def test_another_heuristic(kinspect_cli, session_file):
    doc = json.loads(ok(kinspect_cli("explain", session_file, "--shape", "B=100", "--site", "multi_kernel_0", "--heuristic", "ceil", "--json")))
    (site,) = doc["sites"]
    assert site["heuristic"] == "ceil" and site["chosen"] == 1
    assert site["alternatives"]["inductor"] == 0


# ---------------------------------------------------------------- mistakes


@pytest.fixture
def sessionless_dir(tmp_path):
    empty = synthetic_session(sites=1)
    empty.sites, empty.events, empty.measurements = [], [], []
    save(empty, tmp_path / "no-sites.json")
    (tmp_path / "broken.json").write_text('{"format": "kinspect-session", "version": 1, "sites": [')
    return tmp_path


BAD = {
    "missing file": (["{dir}/absent.json"], "{dir}/absent.json: no such file"),
    "directory": (["{dir}"], "{dir}: holds no rank sessions (MODEL.rankN.session.json, as torchrun "
                             "--nproc-per-node N -m kinspect record model.py writes) and no TORCH_TRACE logs"),  # a folder: a job's ranks
    "broken JSON": (["{dir}/broken.json"], "{dir}/broken.json: not valid JSON (line 1 column 56: Expecting value)"),
    "no sites": (["{dir}/no-sites.json", "--shape", "B=1"], "this session has no size-hint sites"),
    "symbol without value": (["{session}", "--shape", "B=x"], "column 3: expected a size (non-negative integer), found 'x'"),
    "negative size": (["{session}", "--shape", "B=-1"], "column 3: size must not be negative, got -1"),
    "fractional size": (["{session}", "--shape", "B=1.5"], "column 3: size must be an integer, got '1.5'"),
    "empty shape": (["{session}", "--shape", ""], "empty shape: type symbol values like B=1000, or a key like (1000,1024),(4096,1024)"),
    "unknown symbol": (["{session}", "--shape", "Q=3"], "unknown symbol Q; this session has: B, N"),
    "shape fits no site": (["{session}", "--shape", "N=64"], "multi_kernel_0 needs a value for B"),
    "unknown site": (["{session}", "--shape", "B=1", "--site", "mk9"], "no site named 'mk9'; this session has: multi_kernel_0, multi_kernel_1, multi_kernel_2"),
    "unknown heuristic": (["{session}", "--shape", "B=1", "--heuristic", "l3"], "unknown heuristic 'l3'; known: inductor, log2-l2, log2-linf, l1, ceil"),
    "full key that fits no site": (["{session}", "--shape", "(1,2),(3,4)"], "this key does not fit multi_kernel_0: the key has 2 tensors; this site is keyed on 4 (bias, x, weight, out)"),
    "size Dynamo never sends": (["{session}", "--shape", "B=1"], "B=1: Dynamo specialises sizes 0 and 1, so this graph never sees B=1 (such a call compiles a graph of its own)"),
    "broken full key": (["{session}", "--shape", "(1,2),(3,", "--site", "multi_kernel_0"], "column 10: expected a size (non-negative integer), found end of input"),
    "no session argument": ([], "the following arguments are required: session (see: kinspect explain --help)"),
    "misspelt option": (["{session}", "--shpe", "B=1"], "unrecognized arguments: --shpe B=1 (see: kinspect --help)"),
    "option without value": (["{session}", "--shape"], "argument --shape: expected one argument (see: kinspect explain --help)"),
}


@pytest.mark.parametrize("args, message", BAD.values(), ids=BAD.keys())
def test_every_bad_input_is_one_error_line_and_status_2(kinspect_cli, session_file, sessionless_dir, args, message):
    fill = {"dir": sessionless_dir, "session": session_file}
    result = kinspect_cli("explain", *(a.format(**fill) for a in args))
    assert one_error_line(result) == message.format(**fill)
    assert result.stdout == ""


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_shows_the_traceback(kinspect_cli, session_file, where):
    args = ["explain", session_file, "--shape", "B=x"]
    result = kinspect_cli(*(["--debug", *args] if where == "before" else [*args, "--debug"]))
    assert result.returncode == 2
    assert result.stderr.startswith("Traceback (most recent call last):")
    assert "kinspect.core.errors.ShapeError: column 3" in result.stderr
    assert result.stderr.splitlines()[-1] == "kinspect: error: column 3: expected a size (non-negative integer), found 'x'"
