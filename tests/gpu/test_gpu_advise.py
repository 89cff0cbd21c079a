"""`kinspect compare` and `kinspect advise` on samples/linear.py, run as a user runs them:
`python -m kinspect ...` subprocesses, asserted on what they print and save. Each prints
its whole output between `=== kinspect ...` markers for scripts/device_session.sh advise.

Expected on the H200 (the compile of linear.py takes ~20 s; each fresh compile a process
of its own): compare at 2 shapes with 2 compiles about 3-4 minutes (per shape exact_hint
and static compiles, plus one recompile); advise over B=64..4096 (7 candidate hints, the
model's 7 workload sizes in range, one verification compile each for the proposal and the
default) about 2-3 minutes. The grid runs (B and S, on GPT-2 and a 2-layer Llama) weigh a
12-point serving mix of (B, S), candidate hints every power of two in either range.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from gpu_cases import MODELS, SAMPLES
from gpu_cli import kinspect
from tables import cells

from kinspect.core.session.compile_changes import PATCH_KEY
from kinspect.core.store import load

LINEAR = SAMPLES / "linear.py"


SERVE = """
import torch

layer = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU()).cuda().to(torch.bfloat16)
serve = torch.compile(layer, dynamic=True)
for batch in (8, 96, 8, 300, 1000, 8, 3000, 96):
    serve(torch.randn(batch, 1024, device="cuda", dtype=torch.bfloat16))
print("served")
"""
"""A program for `advise --run`: one GEMM with an epilogue, at batches from 8 to 3000."""


def show(name: str, result) -> None:  # type: ignore[no-untyped-def]
    print(f"=== kinspect {name}\n{result.stdout}=== end {name}")


def test_compare_times_five_kinds_at_each_shape_and_the_spread_of_two_compiles(tmp_path):
    out = tmp_path / "linear.session.json"
    result = kinspect("compare", LINEAR, "--shapes", "B=100", "B=1000", "--compiles", "2", "-o", out)
    show("compare", result)
    rows = {r[0]: r[1:] for r in map(cells, result.stdout.splitlines()) if r and r[0].startswith(("B=", "geomean"))}
    for b in ("B=100", "B=1000"):
        hinted, oracle, *fresh = (float(x) for x in rows[b])
        assert len(fresh) == 3 and all(t > 0 for t in fresh)
        assert oracle <= hinted * 1.10  # the fastest forced at every site: at worst noise above Inductor's picks
    assert all(x.startswith("×") for x in rows["geomean slowdown"])
    session = load(out)
    assert {(b.sizes["B"], b.kind) for b in session.baselines if b.error is None} == {
        (b, k) for b in (100, 1000) for k in ("hinted", "oracle", "exact_hint", "static", "eager")}
    (again,) = session.recompiles
    assert again.error is None and {m.key[1][0] for m in again.measurements if m.median_us} == {100, 1000}
    assert re.search(r"multi_kernel_0: geomean regret ×[\d.]+ \(×[\d.]+–×[\d.]+ over 2 compiles\)", result.stdout)
    assert result.stdout.splitlines()[-1].startswith("phases: ")


def assert_pasted(lines: list[str], proposed: list[str]) -> None:
    """The line to paste is the proposal's hints, or, where every fresh compile of the
    default measured better than the proposal's, the default's, the line before saying so
    (which one depends on the GPU's timings, so either holds)."""
    pasted = re.fullmatch(r"torch\._inductor\.config\.multi_kernel_hints = \[([\d, ]+)\]", lines[-1])
    assert pasted, lines[-1]
    if lines[-2].endswith("keep the default"):
        assert pasted[1] == "64, 256, 4096" != proposed[1]
    else:
        assert pasted[1] == proposed[1] and len(proposed[1].split(", ")) <= 2


def test_advise_proposes_verifies_and_ends_with_the_line_to_paste(tmp_path):
    out = tmp_path / "linear.advise.session.json"
    result = kinspect("advise", LINEAR, "--range", "B=64..4096", "--max-hints", "2", "-o", out)
    show("advise", result)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("workload: the model file's workload")
    proposed = next(cells(line) for line in lines if line.startswith("│ proposed"))
    assert re.fullmatch(r"×\d+\.\d{2}", proposed[2]) and proposed[3].endswith("(one compile)")
    default = next(cells(line) for line in lines if line.startswith("│ default"))
    assert default[1] == "64, 256, 4096" and default[3].endswith("(one compile)")
    phases = next(line for line in lines if line.startswith("phases: "))
    assert re.fullmatch(r"phases: candidate compile [\d.]+ s, candidate sweep [\d.]+ s, search [\d.]+ s, "
                        r"verification compiles [\d.]+ s \(total [\d.]+ s\)", phases)
    assert_pasted(lines, proposed)
    session = load(out)
    assert [v.hint for v in session.sites[0].variants] == [64, 128, 256, 512, 1024, 2048, 4096]
    assert len(session.recompiles) == 2 and all(r.error is None and r.measurements for r in session.recompiles)


def test_advise_on_a_program_weighs_its_own_dispatches_and_verifies_by_running_it(tmp_path):
    """`kinspect advise --run` on a serving loop of one Linear and ReLU at batches 8 to 3000:
    three runs of the program under kinspect run --measure (the candidates, the proposal,
    the default), each session kept beside the first."""
    out = tmp_path / "mlp.advise.session.json"
    program = tmp_path / "serve.py"
    program.write_text(SERVE)
    result = kinspect("advise", "--candidates", "16,64,256,4096", "--max-hints", "2", "-o", out, "--run", program)
    show("advise --run", result)
    lines = result.stdout.splitlines()
    assert re.fullmatch(r"workload: the program's own dispatches \(\d+ calls at \d+ site keys\)", lines[0])
    proposed = next(cells(line) for line in lines if line.startswith("│ proposed"))
    assert re.fullmatch(r"×\d+\.\d{2}", proposed[2]) and proposed[3].endswith("(one compile)")
    # the proposals table: the site each hint set leaves worst, named as in any compile of the program
    ranked = next(cells(line) for line in lines if line.startswith(f"│ {proposed[1]} "))
    assert re.fullmatch(r"×\d+\.\d{2} \(graph_\d+[^·]* · \w+ · .+\)", ranked[2]), ranked
    assert_pasted(lines, proposed)
    candidate = load(out)
    assert candidate.sites and all([v.hint for v in s.variants] == [16, 64, 256, 4096] for s in candidate.sites)
    verified = sorted(tmp_path.glob("mlp.advise.hints-*.session.json"))
    assert verified and all(load(p).events for p in verified)


def _advise_grid(model, tmp_path, *ranges: str):
    """`kinspect advise` over a (B, S) grid with kinspect's fit, as a user runs it: the
    proposal, the default row, the line to paste, and a saved session whose candidate
    variants cover every candidate hint and whose keys hold B, S and B*S entries. With
    KINSPECT_RECORD_DIR set the session is saved there, so a failed run's comes back too."""
    out = Path(os.environ.get("KINSPECT_RECORD_DIR") or tmp_path) / f"{model.stem}.grid.session.json"
    mix = tmp_path / "serving.txt"
    mix.write_text("".join(f"B={b} S={s} x{8 // b}\n" for b in (2, 4, 8) for s in (64, 128, 256, 512)))
    args = [a for r in ranges for a in ("--range", r)]
    result = kinspect("advise", model, *args, "--workload", mix, "--max-hints", "3", "--fit-benchmark-tensors",
                      "-o", out)
    show(f"advise grid {model.stem}", result)
    lines = result.stdout.splitlines()
    proposed = next(cells(line) for line in lines if line.startswith("│ proposed"))
    assert re.fullmatch(r"×\d+\.\d{2}", proposed[2]) and proposed[3].endswith("(one compile)")
    default = next(cells(line) for line in lines if line.startswith("│ default"))
    assert default[1] == "64, 256, 4096" and default[3].endswith("(one compile)")
    assert re.fullmatch(r"torch\._inductor\.config\.multi_kernel_hints = \[\d+(, \d+){0,2}\]", lines[-1])
    session = load(out)
    assert session.environment.config.get(PATCH_KEY) is True
    measured = {(m.key, m.variant) for m in session.measurements if m.median_us}
    assert lines[0].startswith("workload: the file serving.txt (28 calls, 12 sizes)")
    assert len({k for k, _ in measured}) >= 12
    assert len(session.recompiles) == 2 and all(r.error is None and r.measurements for r in session.recompiles)
    assert " is left out" not in result.stdout  # every site weighed
    return result


def test_advise_over_a_batch_and_sequence_grid_on_gpt2(tmp_path):
    _advise_grid(SAMPLES / "gpt2.py", tmp_path, "B=2..8", "S=64..512")


def test_advise_over_a_batch_and_sequence_grid_on_a_llama(tmp_path):
    """Its o projections share the q, k and v projections' multi-kernel but hand it the
    attention's 4-D output: advice weighs those calls at their own keys, and says so."""
    result = _advise_grid(MODELS / "llama.py", tmp_path, "B=2..8", "S=64..512")
    assert re.search(r"^multi_kernel_\d+: layers\.\{0,1\}\.self_attn\.o_proj hand Inductor keys laid out otherwise",
                     result.stdout, re.M)
