"""Merging rank sessions: steps side by side, the straggler rule, compile divergence and
their findings, on synthetic per-rank sessions (tests/ranks_sessions.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ranks_sessions import TIMES, rank_session

from kinspect import cli
from kinspect.core.errors import KinspectError
from kinspect.core.ranks.merged import merge
from kinspect.core.session.runtime import DispatchEvent
from kinspect.core.session.model import Environment
from kinspect.core.store import load, save


def test_each_step_shows_every_rank_its_sizes_picks_times_the_slowest_and_the_waits():
    merged = merge([rank_session(1, [1000, 100], TIMES), rank_session(0, [100, 1000], TIMES)], ["r1", "r0"])
    assert merged.ranks == (0, 1) and merged.sources == ("r0", "r1") and merged.missing == []
    first, second = merged.steps
    assert [(r.rank, dict(r.sizes), r.sites["multi_kernel_0"].picks, r.gpu_us) for r in first.ranks] == [
        (0, {"B": 100}, (0,), 10.0), (1, {"B": 1000}, (1,), 50.0)]
    assert first.slowest() == 1 and first.waits() == {0: 40.0, 1: 0.0}
    assert second.slowest() == 0 and second.waits() == {0: 0.0, 1: 40.0}


def test_a_pick_that_costs_the_others_more_than_a_tenth_of_the_step_is_a_straggler():
    merged = merge([rank_session(0, [100, 1000], TIMES), rank_session(1, [1000, 1000], TIMES)])
    # step 0: rank 1's v1 takes 50 us where v2 takes 40: the step would take 40, not 50 (20%)
    # step 1: both ranks run v1 at B=1000; either alone with v2 still waits for the other: no cost
    (x,) = merged.stragglers
    assert (x.step, x.rank, x.picks, x.step_us, x.cost_us) == (0, 1, (1,), 50.0, 10.0)
    (f,) = [f for f in merged.findings if f.kind == "straggler"]
    assert f.message == (
        "rank 1's pick in multi_kernel_0 holds the other ranks up in 1 step (0): at step 0 (B=1000) its v1 "
        "makes the step take 50.0 µs in this site, 10.0 µs (20%) more than with the fastest variant, which "
        "every other rank waits (measured on each rank, one compile)")
    assert f.variants == (1,) and f.severity == "warning"


def test_a_slow_pick_costing_a_tenth_or_less_or_hidden_behind_a_slower_rank_is_no_straggler():
    close = {**TIMES, (1000, 2): 45.5}  # v1 (50) is slower beyond noise, but saves 4.5 us of 50: 9%
    assert merge([rank_session(0, [100], close), rank_session(1, [1000], close)]).stragglers == []
    hidden = {**TIMES, (100, 0): 45.0}  # rank 0 takes 45 with the fastest pick: rank 1's v2 would save 5 of 50
    assert merge([rank_session(0, [100], hidden), rank_session(1, [1000], hidden)]).stragglers == []
    # and the same sessions with rank 0 quick again do have one: the rule is not just never firing
    assert len(merge([rank_session(0, [100], TIMES), rank_session(1, [1000], TIMES)]).stragglers) == 1


def test_without_measurements_steps_show_picks_and_no_times_or_stragglers():
    merged = merge([rank_session(0, [100, 1000]), rank_session(1, [1000, 100])])
    step = merged.steps[0]
    assert [r.sites["multi_kernel_0"].picks for r in step.ranks] == [(0,), (1,)]
    assert step.times() == {} and step.slowest() is None and merged.stragglers == []


def test_ranks_whose_autotuning_chose_other_configs_diverge():
    merged = merge([rank_session(0, [100]), rank_session(1, [100], config={2: {"BLOCK_M": 32, "num_warps": 2}})])
    (d,) = merged.divergences
    assert d.site == "multi_kernel_0" and d.variants == (2,)
    (f,) = [f for f in merged.findings if f.kind == "rank-divergence"]
    assert f.message.startswith(
        "multi_kernel_0's v2 differ across ranks (rank 0 holds v2 (hint 4096): BLOCK_M=128, num_warps=8; "
        "rank 1 holds v2 (hint 4096): BLOCK_M=32, num_warps=2): each rank autotuned on its own")
    assert "(one compile per rank)" in f.message and f.variants == (2,)
    assert merge([rank_session(0, [100]), rank_session(1, [100])]).divergences == []


def test_a_site_one_rank_lacks_is_a_divergence():
    lacking = rank_session(1, [100])
    lacking.sites, lacking.events = [], []
    (d,) = merge([rank_session(0, [100]), lacking]).divergences
    assert d.groups == (((0,), "3 variants"), ((1,), "no such site"))


def test_the_lead_session_is_the_lowest_rank_with_the_jobs_findings():
    merged = merge([rank_session(1, [1000], TIMES), rank_session(0, [100], TIMES)])
    lead = merged.lead()
    assert lead.environment.rank == 0
    assert [f.kind for f in lead.findings] == ["straggler"]
    assert merged.session(0).findings == []  # the rank's own session is left as it was


@pytest.mark.parametrize("sessions, error", [
    ([rank_session(0, [100])], "merging ranks needs two or more rank sessions"),
    ([rank_session(0, [100]), rank_session(0, [100])], "session 2 and session 1 are both rank 0"),
    ([rank_session(0, [100]), rank_session(1, [100], world_size=4)],
     "these sessions come from jobs of different sizes (world sizes ['2', '4'])"),
])
def test_sessions_that_are_not_one_jobs_ranks_are_refused_in_one_line(sessions, error):
    with pytest.raises(KinspectError) as e:
        merge(sessions)
    assert str(e.value) == error


def test_a_session_without_a_rank_says_how_to_record_one():
    plain = rank_session(1, [100])
    plain.environment = Environment(created="x")
    with pytest.raises(KinspectError, match=r"^b.json: not recorded under torchrun \(it names no rank\): record "
                                            r"with torchrun --nproc-per-node N -m kinspect record model.py$"):
        merge([rank_session(0, [100]), plain], ["a.json", "b.json"])


def test_missing_ranks_are_named():
    assert merge([rank_session(0, [100], world_size=4), rank_session(2, [100], world_size=4)]).missing == [1, 3]


def test_rank_world_size_and_local_rank_are_saved_and_an_old_session_has_none(tmp_path):
    save(rank_session(1, [100], world_size=2), tmp_path / "r1.json")
    env = load(tmp_path / "r1.json").environment
    assert (env.rank, env.world_size, env.local_rank) == (1, 2, 1)
    old = load(Path(__file__).resolve().parent.parent / "samples" / "linear.session.json").environment
    assert (old.rank, old.world_size, old.local_rank) == (None, None, None)
    text = (tmp_path / "r1.json").read_text().replace('"rank":1,', '"rank":-1,')
    (tmp_path / "bad.json").write_text(text)
    with pytest.raises(KinspectError, match=r"bad.json: environment.rank: integer -1 outside 0..1048575$"):
        load(tmp_path / "bad.json")


# ---------------------------------------------------------------- the commands


@pytest.fixture
def job(tmp_path):
    """A folder of two rank sessions; rank 1's compile ran a dispatch 3 ms before its workload."""
    r0, r1 = rank_session(0, [100, 1000], TIMES), rank_session(1, [1000, 100], TIMES)
    first = r1.events[0]
    for e in r1.events:
        e.seq, e.t_ns = e.seq + 1, e.t_ns + 3_000_000
    r1.events = [DispatchEvent(0, first.site, first.key, first.picked, first.picked, False, None, 0), *r1.events]
    save(r0, tmp_path / "model.rank0.session.json")
    save(r1, tmp_path / "model.rank1.session.json")
    save(rank_session(0, [100]), tmp_path / "other.session.json")  # not a rank file: left out of the folder
    return tmp_path


def test_explain_json_of_a_folder_lists_each_step_by_rank(job, capsys):
    assert cli.main(["explain", str(job), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["source"] for r in doc["ranks"]] == [str(job / "model.rank0.session.json"),
                                                    str(job / "model.rank1.session.json")]
    step = doc["steps"][0]
    assert (step["slowest"], step["waits_us"]) == (1, {"0": 40.0, "1": 0.0})
    assert [(r["rank"], r["sizes"], r["sites"]["multi_kernel_0"]["picks"], r["gpu_us"]) for r in step["ranks"]] == [
        (0, {"B": 100}, [0], 10.0), (1, {"B": 1000}, [1], 50.0)]
    assert [(x["step"], x["rank"], x["cost_us"]) for x in doc["stragglers"]] == [(0, 1, 10.0), (1, 0, 10.0)]
    assert len(doc["steps"]) == 2  # the compile's dispatch is in no step
    assert [f["kind"] for f in doc["findings"]] == ["straggler", "straggler"]


def test_the_perfetto_trace_has_a_process_per_rank_lined_up_at_the_first_step(job, tmp_path, capsys):
    out = tmp_path / "trace.json"
    assert cli.main(["export", str(job), "--format", "perfetto", "-o", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote {out} (perfetto, ranks 0, 1, 5 events)\n"
    doc = json.loads(out.read_text())
    dispatches = [e for e in doc["traceEvents"] if e.get("cat") == "dispatch"]
    assert [(e["pid"], e["args"]["step"], e["ts"]) for e in dispatches] == [
        (1, 0, 3000.0), (1, 1, 3001.0), (2, None, 0.0), (2, 0, 3000.0), (2, 1, 3001.0)]  # step 0 lines up
    sort = {e["pid"]: e["args"]["sort_index"] for e in doc["traceEvents"] if e["name"] == "process_sort_index"}
    assert sort == {1: 0, 2: 1}
    assert doc["otherData"]["aligned"] == "each rank's own clock, shifted so that all ranks start workload step 0 together"


@pytest.mark.parametrize("args, error", [
    (["explain", "{job}", "--shape", "B=100"], "--shape explains one session: give one rank's file, not several"),
    (["export", "{job}", "--format", "md", "-o", "{job}/r.md"],
     "--format md takes one session; a torchrun job's rank sessions export together as --format perfetto "
     "(a process per rank)"),
    (["explain", "{job}/model.rank0.session.json", "{job}/other.session.json"],
     "{job}/other.session.json and {job}/model.rank0.session.json are both rank 0"),
    (["explain", "{empty}"], "{empty}: holds no rank sessions (MODEL.rankN.session.json, as torchrun "
                             "--nproc-per-node N -m kinspect record model.py writes) and no TORCH_TRACE logs"),
])
def test_what_cannot_merge_is_one_line(job, tmp_path_factory, capsys, args, error):
    empty = tmp_path_factory.mktemp("empty")
    fill = {"job": job, "empty": empty}
    assert cli.main([a.format(**fill) for a in args]) == 2
    assert capsys.readouterr().err == f"kinspect: error: {error.format(**fill)}\n"
    assert not (job / "r.md").exists()


def test_open_on_a_folder_gives_the_inspector_the_lowest_rank_and_the_ranks(job):
    from kinspect.commands.inspect import ranks_source

    source = ranks_source([str(job)])
    assert source.session.environment.rank == 0 and source.ranks.ranks == (0, 1)
    assert source.banner().endswith("model.rank0.session.json · rank 0 of 2; rank 1 beside it in the Ranks tab (9)")
