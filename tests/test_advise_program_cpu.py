"""`kinspect advise --run script.py ARGS...` on the CPU: its own code end to end (the CLI, the
runs it starts, the search, the verification and what it prints), with each run's process
(`kinspect run --hints ... --measure`, which needs a GPU) stood in by one that writes the
session such a run saves: the program's dispatches, every variant timed at each key, the
variant whose hint is nearest the key's rows the fastest.

The same command on the GPU: tests/gpu/test_gpu_advise.py."""

from __future__ import annotations

import io
import math
import random
from dataclasses import replace
from pathlib import Path

import pytest

from synthetic import linear_site

from kinspect import cli
from kinspect.commands import recording
from kinspect.core.dispatch.decision import decide
from kinspect.core.session.model import Environment, Graph, Session
from kinspect.core.session.runtime import DispatchEvent, Measurement
from kinspect.core.store import load, save
from kinspect.inductor.jobs import program_advise

MOE = Path(__file__).parent / "fixtures" / "sessions" / "moe_layers_fixed_h100_2026-12-06.session.json"
"""The MoE stack recorded with both switches (H100): six sites, two of them alike in graph,
op and call sites."""

ROWS = {8: 50, 100: 20, 3000: 5}
"""The program's batches and how often it runs each."""


def _time(hint: int, rows: int) -> float:
    return 10.0 * (1 + 0.2 * abs(math.log2(hint) - math.log2(rows)))


def program_session(hints: list[int], own_hints: list[int] | None = None, slow_pick: bool = False) -> Session:
    """What `kinspect run --hints HINTS --measure` saves for the program; with `slow_pick`,
    the variant Inductor picks for the largest batch runs twice as long as its kernel should
    (a config tuned on noise)."""
    site = linear_site(0, hints, random.Random(0))
    # each hint's kernel its own (the synthetic site shares one between two hints)
    site = replace(site, variants=tuple(replace(v, source=f"{v.source}# tuned at {v.hint}\n", kernel_name=f"{v.kernel_name}_{v.hint}",
                                                   source_hash=f"{v.source_hash[:10]}{v.hint:06d}")
                                       for v in site.variants))
    session = Session(environment=Environment("2026-12-06T00:00:00Z", torch="synthetic", gpu="synthetic",
                                              config={"multi_kernel_hints": own_hints or hints}),
                      graphs=[Graph("graph_0", sites=(site.name,))], sites=[site])
    seq = 0
    for rows, n in ROWS.items():
        key = site.runtime_key({"s0": rows, "s1": 64})
        pick = decide(site.keys, key).chosen
        for _ in range(n):
            session.events.append(DispatchEvent(seq, site.name, key, pick, pick, seq > 0))
            seq += 1
        for v in site.variants:
            t = _time(v.hint, rows) * (2 if slow_pick and rows == max(ROWS) and v.index == pick else 1)
            session.measurements.append(Measurement(site.name, key, v.index, "cuda_events", t, t * 0.99, t * 1.01, 50))
    return session


class Runs:
    """Stands in for each `kinspect run` process advise starts: saves the session it would."""

    def __init__(self, own_hints: list[int] | None = None, failing: tuple[tuple[int, ...], ...] = (),
                 siteless: tuple[tuple[int, ...], ...] = (), slow_pick: tuple[tuple[int, ...], ...] = ()) -> None:
        self.commands: list[list[str]] = []
        self.own_hints, self.failing, self.siteless, self.slow_pick = own_hints, failing, siteless, slow_pick

    def __call__(self, cmd, stdout, stderr, **kw):
        self.commands.append(cmd)
        hints = [int(h) for h in cmd[cmd.index("--hints") + 1].split(",")]
        out = cmd[cmd.index("-o") + 1]
        runs = self

        class Child:
            returncode = 1 if tuple(hints) in runs.failing else 0
            stderr = io.StringIO("program output\nkinspect: compiled graph_0 in 3 s: 1 size-hint multi-kernel\n"
                                 + ("kinspect: graph_0 died at hint 16: CUDA error\n" if returncode else ""))

            def __enter__(self):
                if not self.returncode:
                    session = program_session(hints, runs.own_hints, tuple(hints) in runs.slow_pick)
                    if tuple(hints) in runs.siteless:  # Inductor compiled the GEMM otherwise: no multi-kernel
                        session = replace(session, sites=[], events=[], measurements=[],
                                          graphs=[Graph("graph_0", no_site_reason="no GEMM was autotuned per hint")])
                    save(session, out)
                return self

            def __exit__(self, *exc):
                return False

        return Child()


@pytest.fixture
def program(tmp_path, monkeypatch):
    monkeypatch.setattr(recording, "cuda_available", lambda: True)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "serve.py").write_text("print('serving')\n")
    return tmp_path


def test_advise_on_a_program_proposes_from_its_own_dispatches_and_verifies_by_running_it(program, monkeypatch,
                                                                                          capsys):
    runs = Runs()
    monkeypatch.setattr(program_advise.subprocess, "Popen", runs)
    assert cli.main(["advise", "--max-hints", "2", "--run", "serve.py", "--port", "8"]) == 0
    cand = runs.commands[0]
    assert cand[cand.index("--hints") + 1] == "16,64,256,1024,4096" and "--measure" in cand
    assert cand[-3:] == ["serve.py", "--port", "8"]
    verified = [c[c.index("--hints") + 1] for c in runs.commands[1:]]
    assert verified == ["16,64", "64,256,4096"]
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert lines[0] == "workload: the program's own dispatches (75 calls at 3 site keys)"
    assert lines[-1] == "torch._inductor.config.multi_kernel_hints = [16, 64]"
    proposed = next(x for x in lines if "proposed" in x)
    default = next(x for x in lines if "default" in x)
    # one site: the worst site is the whole workload, named as the user calls it in every compile
    best = next(x for x in lines if x.startswith("│ 16, 64 "))
    assert [c.strip() for c in best.split("│")[1:4]] == ["16, 64", "×1.06", "×1.06 (graph_0 · addmm · multi_kernel_0)"]
    assert [c.strip() for c in proposed.split("│")[2:6]] == ["16, 64", "×1.06", "×1.06 (one compile)",
                                                               "×1.00, worst ×1.00 (graph_0 · addmm · multi_kernel_0)"]
    assert [c.strip() for c in default.split("│")[2:6]] == ["64, 256, 4096", "×1.23", "×1.23 (one compile)",
                                                              "×1.00, worst ×1.00 (graph_0 · addmm · multi_kernel_0)"]
    assert "kinspect: candidate run: compiled graph_0 in 3 s: 1 size-hint multi-kernel" in out.err
    assert load(program / "serve.advise.session.json").sites
    assert (program / "serve.advise.hints-16-64.session.json").exists()
    assert (program / "serve.advise.output.log").read_text().startswith("program output")


def test_each_verification_runs_own_pick_over_its_fastest_variant_is_shown_beside_its_regret(program, monkeypatch,
                                                                                             capsys):
    """The default hints' run picks, at batch 3000, hint 4096's variant, which there runs at
    21.8 µs where hint 256's takes 17.1: ×1.27 at one of three keys, ×1.08 over the model;
    with two compiles of it, each figure's range; a single hint has one variant to pick."""
    monkeypatch.setattr(program_advise.subprocess, "Popen", Runs(slow_pick=((64, 256, 4096),)))
    assert cli.main(["advise", "--max-hints", "2", "--compiles", "2", "--run", "serve.py"]) == 0
    lines = capsys.readouterr().out.splitlines()
    default = next(x for x in lines if "default" in x).split("│")
    proposed = next(x for x in lines if "proposed" in x).split("│")
    assert default[5].strip() == "×1.08, worst ×1.08 over 2 compiles"
    assert proposed[5].strip() == "×1.00, worst ×1.00 over 2 compiles"
    assert "pick / fastest variant: each run's pick over the fastest of its own variants" in " ".join(
        x.strip() for x in lines)

    monkeypatch.setattr(program_advise.subprocess, "Popen", Runs(slow_pick=((64, 256, 4096),)))
    assert cli.main(["advise", "--max-hints", "1", "--run", "serve.py"]) == 0
    lines = capsys.readouterr().out.splitlines()
    proposed = next(x for x in lines if "proposed" in x).split("│")
    default = next(x for x in lines if "default" in x).split("│")
    assert proposed[2].strip() == "16" and proposed[5].strip() == "one variant"
    assert default[5].strip() == "×1.08, worst ×1.08 (graph_0 · addmm · multi_kernel_0)"


def test_a_program_that_sets_its_own_hints_is_refused_in_one_line(program, monkeypatch, capsys):
    monkeypatch.setattr(program_advise.subprocess, "Popen", Runs(own_hints=[64, 256, 4096]))
    assert cli.main(["advise", "--run", "serve.py"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "kinspect: error: the program sets its own multi_kernel_hints ([64, 256, 4096]), which kinspect keeps; "
        "advise needs a program that leaves them to --hints")


def test_a_verification_run_that_dies_is_reported_and_the_proposal_called_a_prediction(program, monkeypatch,
                                                                                         capsys):
    monkeypatch.setattr(program_advise.subprocess, "Popen", Runs(failing=((16, 64),)))
    assert cli.main(["advise", "--max-hints", "2", "--candidates", "16,64,256,4096", "--run", "serve.py"]) == 0
    lines = capsys.readouterr().out.splitlines()
    failed = next(x for x in lines if x.startswith("verification failed for hints [16, 64]"))
    assert "graph_0 died at hint 16: CUDA error (its output: " in failed
    assert "the proposal is unverified (no fresh compile of it gave a figure: see above): treat it as a prediction" \
        in lines
    assert lines[-1] == "torch._inductor.config.multi_kernel_hints = [16, 64]"


def test_a_verification_run_without_the_candidates_site_says_which_and_gives_no_figure(program, monkeypatch,
                                                                                       capsys):
    monkeypatch.setattr(program_advise.subprocess, "Popen", Runs(siteless=((64, 256, 4096),)))
    assert cli.main(["advise", "--max-hints", "2", "--run", "serve.py"]) == 0
    lines = capsys.readouterr().out.splitlines()
    failed = next(x for x in lines if x.startswith("verification failed for hints [64, 256, 4096]"))
    assert failed.startswith("verification failed for hints [64, 256, 4096]: no dispatch of the run could be held "
                             "against the candidate run's times (1 of the candidate run's 1 sites was no size-hint "
                             "multi-kernel in this run and is left out: graph_0 · addmm · ")
    assert "serve.advise.hints-64-256-4096.session.json)" in failed
    default = next(x for x in lines if "default" in x)
    assert default.split("│")[4].strip() == "n/a"
    assert lines[-1] == "torch._inductor.config.multi_kernel_hints = [16, 64]"


def test_sites_alike_in_graph_op_and_call_sites_are_held_against_their_own_in_a_verification_run():
    """The MoE stack's two `mm` sites on the same two modules (the expert up- and
    down-projections): each is matched to itself by its order in the graph's code, so every
    one of the run's 50 dispatches is weighed, each against its own site's fastest variant."""
    from kinspect.core.quality import advise

    moe = load(MOE)
    held = advise.recorded_regret(moe, advise.recorded_tables(moe).sites, moe)
    assert (held.sites, held.unmatched, held.untimed) == (6, (), 0)
    assert held.regret == pytest.approx(_picked_over_fastest(moe))


def test_advise_run_refuses_a_model_files_options_and_a_missing_program(program, capsys):
    assert cli.main(["advise", "--range", "B=2..64", "--run", "serve.py"]) == 2
    assert "takes no model file, --range or --workload" in capsys.readouterr().err
    assert cli.main(["advise", "--run", "gone.py"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == "kinspect: error: 'gone.py': no such file"


def test_a_default_name_taken_is_not_replaced(program, monkeypatch, capsys):
    (program / "serve.advise.session.json").write_text("mine")
    monkeypatch.setattr(program_advise.subprocess, "Popen", Runs())
    assert cli.main(["advise", "--max-hints", "1", "--run", "serve.py"]) == 0
    assert (program / "serve.advise.session.json").read_text() == "mine"
    assert load(program / "serve.advise.1.session.json").sites


def test_the_compile_switches_reach_every_run(program, monkeypatch, capsys):
    runs = Runs()
    monkeypatch.setattr(program_advise.subprocess, "Popen", runs)
    assert cli.main(["advise", "--one-size-per-symbol", "--fusion-per-hint", "--max-hints", "1", "--run",
                     "-m", "json.tool", "--sort-keys"]) == 0
    assert len(runs.commands) == 3
    for cmd in runs.commands:
        assert {"--one-size-per-symbol", "--fusion-per-hint"} <= set(cmd[:cmd.index("-o")])
        assert cmd[-3:] == ["-m", "json.tool", "--sort-keys"]
    assert (program / "json.tool.advise.session.json").exists()


def test_on_a_recorded_resnet_the_search_proposes_from_its_own_keys():
    """The ResNet-18 recorded stock on an H100 (hints 64, 256, 4096, one compile): over the 52
    site keys its 70 dispatches ran, hint 256 alone is predicted within 0.2% of the fastest
    of its variants, the default 4.1% over: what `advise --run` would then verify."""
    from kinspect.core.quality import advise

    session = load(Path(__file__).parent / "fixtures" / "sessions" / "resnet18_stock_h100_2026-12-06.session.json")
    tabs = advise.recorded_tables(session)
    assert (len(tabs.sites), tabs.untimed_keys, sum(len(t.keys) for t in tabs.sites)) == (13, 0, 52)
    assert int(sum(t.weights.sum() for t in tabs.sites)) == len(session.events) == 70
    best = advise.search(tabs.sites, 3)[0]
    assert best.hints == (256,) and round(best.regret, 3) == 1.002
    assert round(advise.workload_regret(tabs.sites, advise.DEFAULT_HINTS), 3) == 1.041


def test_a_default_hint_that_shares_a_variant_is_still_predicted():
    """The MoE stack recorded with both switches (H100): hint 256 was tuned at hint 4096's
    sizes, so its sites have variants at 64 and 4096 only. The default hints are predicted as
    the compile would run them: hint 256 by the variant it shares."""
    from kinspect.core.quality import advise

    moe = load(MOE)
    assert [v.hint for v in moe.sites[0].variants] == [64, 4096]
    assert moe.stands_for(moe.sites[0]) == [frozenset({64}), frozenset({256, 4096})]
    tabs = advise.recorded_tables(moe).sites
    default = advise.default_prediction(tabs)
    assert default is not None and default.hints == (64, 256, 4096)
    assert default.regret == pytest.approx(advise.workload_regret(tabs, (64, 4096)))
    assert advise.workload_regret(tabs, (256,)) == pytest.approx(advise.workload_regret(tabs, (4096,)))


def test_a_verification_run_without_one_of_the_candidates_sites_is_weighed_over_the_rest_and_says_which():
    """A fresh compile in which one GEMM was no size-hint multi-kernel (Inductor kept another
    kernel for it): the figure weighs the other five sites' dispatches, and its line names
    the one left out."""
    from kinspect.core.quality import advise

    moe, run = load(MOE), load(MOE)
    gone = run.sites[2].name
    run.sites = [s for s in run.sites if s.name != gone]
    run.events = [e for e in run.events if e.site != gone]
    held = advise.recorded_regret(moe, advise.recorded_tables(moe).sites, run)
    assert (held.sites, held.unmatched, held.untimed) == (5, ("graph_0 (inference) · bmm · 0 (MoE)",), 0)
    assert held.gaps() == ["1 of the candidate run's 6 sites was no size-hint multi-kernel in this run and is left "
                           "out: graph_0 (inference) · bmm · 0 (MoE)"]
    assert held.regret == pytest.approx(_picked_over_fastest(run))


def _picked_over_fastest(session: Session) -> float:
    """Every dispatch's picked variant's time over its key's fastest, summed over the
    dispatches: the figure worked out from the recording alone (the MoE's sites have two
    variants)."""
    timings = session.timings()
    spent = sum(timings[(e.site, e.key)].median(e.picked) for e in session.events)
    fastest = sum(min(filter(None, map(timings[(e.site, e.key)].median, range(2)))) for e in session.events)
    return spent / fastest
