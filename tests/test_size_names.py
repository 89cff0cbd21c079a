"""Sizes by the user's names everywhere: a program recorded by `kinspect run` names its
sizes from their sources (`input_ids_1`), `--name s27=S` renames any, and keys whose dims
do not hold the sizes are named by the model call they came in."""

from __future__ import annotations

import json

import pytest
from test_advise_grid import llama_like_session

from kinspect.core.errors import KinspectError
from kinspect.core.quality.findings import refreshed
from kinspect.core.quality.overview import model_quality
from kinspect.core.session.model import SymbolInfo
from kinspect.core.session.size_names import parse_names, rename, source_name, with_source_names
from kinspect.core.store import load, read

GENERATE = "tests/fixtures/samples_h200_2026-12-03/generate.session.json"
"""samples/generate.py as kinspect run recorded it on the H200 before names were stored, kept as a
fixture so that its figures stay put when samples/ is re-recorded."""


def ok(result) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("source, name", [
    ("L['kwargs']['input_ids'].size()[1]", "input_ids_1"),
    ("L['x'].size()[0]", "x_0"),
    ("L['args'][0].size()[2]", "arg0_2"),
    ("L['self']._modules['blocks'].size()[0]", "blocks_0"),
    ("L['xs'][1].size()[0]", "xs1_0"),
    ("L['weird name'].size()[0]", "weird_name_0"),
    ("L['logits_to_keep']", "logits_to_keep"),
    ("L['kwargs']['past_length']", "past_length"),
    ("L['args'][2]", "arg2"),
    ("L['x'].stride()[0]", None),
    ("L['self'].n", None),
])
def test_a_size_is_named_by_the_tensor_and_dim_it_came_from(source, name):
    assert source_name(SymbolInfo("s1", sources=(source,))) == name


def test_an_int_argument_dynamo_made_a_size_is_named_where_an_assignment_lists_it():
    """GPT-2's training loop passes `logits_to_keep=0`, which Dynamo made a symbol: the sizes
    each hint was tuned at read by it, not by Inductor's number."""
    s = load("tests/fixtures/sessions/gpt_train_hints_16_32_h100_2026-12-07.session.json")
    (a16, _) = s.hint_assignments(s.sites[0])
    assert a16.text(s.aliases) == "hint 16: input_ids_0=16 input_ids_1=16 logits_to_keep=0"


def test_a_name_taken_already_is_not_given_twice():
    named = with_source_names([SymbolInfo("x_0", sources=("L['y'].size()[0]",)),
                               SymbolInfo("s2", sources=("L['x'].size()[0]",)),
                               SymbolInfo("s3", "B", sources=("L['z'].size()[0]",))])
    assert [s.label for s in named] == ["y_0", "x_0_", "B"]


def test_a_recording_without_names_reads_by_its_sources_everywhere(kinspect_cli):
    assert [s.alias for s in read(GENERATE).symbols] == [None, None]  # as kinspect run saved it before
    out = ok(kinspect_cli("explain", GENERATE))
    assert "s27=" not in out and "s52=" not in out
    assert "×2.97 at input_ids_0=8 input_ids_1=65" in out  # the quality table, batch first
    assert "input_ids_1=64..66 (input_ids_0=8)" in " ".join(out.split())  # the slow-pick findings


def test_name_renames_a_size_in_every_table_and_finding(kinspect_cli):
    out = ok(kinspect_cli("explain", GENERATE, "--name", "s52=B", "--name", "input_ids_1=S"))
    assert "×2.97 at B=8 S=65" in out and "S=64..66 (B=8)" in " ".join(out.split())
    assert "input_ids" not in out.replace("input_ids │", "")  # only the symbols table's input column names it
    doc = json.loads(ok(kinspect_cli("explain", GENERATE, "--name", "s52=B,s27=S", "--shape", "B=5 S=40", "--json")))
    assert doc["sites"][0]["estimate"]["nearest"][0]["sizes"] == {"B": 4, "S": 34}


def test_a_rename_moves_the_sweeps_workload_and_baselines_too(kinspect_cli):
    out = ok(kinspect_cli("explain", "samples/gpt2.session.json", "--name", "B=Batch"))
    assert "×1.62 at Batch=30 S=1024" in out
    session = load("samples/gpt2.session.json", {"B": "Batch"})
    assert set(session.sweeps[0].ranges) == {"Batch", "S"} and set(session.model.workload[0]) == {"Batch", "S"}


@pytest.mark.parametrize("names, message", [
    (["s99=S"], "s99=S: no size named s99; this session has: input_ids_0 (s52), input_ids_1 (s27)"),
    (["s52=S", "s27=S"], "S would name two sizes (s52 and s27)"),
    (["s52 S"], "--name takes SIZE=NAME, such as s27=S (names are letters, digits and _), not 's52 S'"),
    (["s52=1x"], "--name takes SIZE=NAME, such as s27=S (names are letters, digits and _), not 's52=1x'"),
])
def test_a_bad_name_is_one_line(kinspect_cli, names, message):
    result = kinspect_cli("explain", GENERATE, *[x for n in names for x in ("--name", n)])
    assert result.returncode == 2 and result.stderr == f"kinspect: error: {message}\n"


def test_rename_refuses_a_name_twice_before_anything_changes():
    session = load(GENERATE)
    with pytest.raises(KinspectError):
        rename(session, parse_names(["s52=input_ids_1"]))
    assert [s.label for s in session.symbols] == ["input_ids_0", "input_ids_1"]


def test_a_key_laid_out_otherwise_is_named_by_the_model_call_it_came_in():
    """A Llama's o projection hands Inductor (B, 12, S, 64) where the site's tensors are
    (B, S, 768): its dims do not hold the sizes, the recorded call's other dispatches do."""
    grid = [{"B": b, "S": t} for b in (2, 8) for t in (64, 256, 1024)]
    session = llama_like_session(grid)
    quality = model_quality(session)
    odd = [p for p in quality.sites[1].points if not session.sites[1].lines_up(p.key)]
    assert len(odd) == 6 and all(p.sizes == {"B": p.key[0][0], "S": p.key[0][2]} for p in odd)
    slow = next(f for f in refreshed(session) if f.kind == "slow-pick" and f.site == "multi_kernel_0")
    assert "((2304,)" not in slow.message and "B=2 S=64" in slow.message
