"""At a shape nobody measured: the nearest measured keys with their figures, and each
variant's time there estimated from its own measured keys on either side, always marked
as an estimate with the keys it came from (`explain` as text and JSON, the inspector)."""

from __future__ import annotations

import json
import math
import random

from synthetic import linear_site

from kinspect.core.dispatch.shapes import SymbolShape
from kinspect.core.quality.estimate import estimate
from kinspect.core.quality.explain import explain
from kinspect.core.session.model import Environment, Session, SymbolInfo
from kinspect.core.session.runtime import Measurement
from kinspect.core.store import load

GPT2 = "tests/fixtures/samples_h200_2026-11-30/gpt2.session.json"
"""GPT-2 as recorded and swept on the H200: its figures stay put when samples/ is re-recorded."""


def ok(result) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def two_keys(times: dict[int, tuple[float, float]]) -> Session:
    """One Linear (B dynamic) with every variant measured at B=64 and B=1024 only."""
    site = linear_site(0, [64, 256, 4096], random.Random(0))
    session = Session(Environment(created="test", gpu="synthetic"), symbols=[SymbolInfo("s0", "B", example=64)],
                      sites=[site])
    for b, i in ((64, 0), (1024, 1)):
        key = session.runtime_key(site, SymbolShape({"B": b}))
        session.measurements += [Measurement(site.name, key, v, "cuda_events", t[i], t[i] * 0.99, t[i] * 1.01)
                                 for v, t in times.items()]
    return session


def test_a_variant_is_interpolated_in_log_time_against_log_work_between_its_own_keys():
    session = two_keys({0: (10.0, 160.0), 1: (20.0, 40.0), 2: (10.0, 160.0)})
    site = session.sites[0]
    est = estimate(session, site, session.runtime_key(site, SymbolShape({"B": 256})))
    assert est is not None and est.axis.startswith("GEMM work")
    # the work is proportional to B: halfway in log B is halfway in log time
    assert math.isclose(est.median(0), 40.0, rel_tol=1e-9)
    assert math.isclose(est.median(1), math.sqrt(20.0 * 40.0), rel_tol=1e-9)
    assert est.fastest == 1 and math.isclose(est.regret(0), 40.0 / math.sqrt(800.0))
    below, above = est.sources()[0]
    assert (dict(est.sizes(below)), dict(est.sizes(above))) == ({"B": 64}, {"B": 1024})
    assert [dict(est.sizes(n.key)) for n in est.nearest] == [{"B": 64}, {"B": 1024}]


def test_beyond_the_measured_keys_a_variant_gets_no_estimate():
    session = two_keys({0: (10.0, 160.0), 1: (20.0, 40.0), 2: (10.0, 160.0)})
    site = session.sites[0]
    est = estimate(session, site, session.runtime_key(site, SymbolShape({"B": 4000})))
    assert est is not None and not est.variants and est.fastest is None
    assert [dict(est.sizes(n.key)) for n in est.nearest] == [{"B": 1024}, {"B": 64}]


def test_explain_at_an_unmeasured_shape_marks_estimates_and_names_their_keys(kinspect_cli):
    out = ok(kinspect_cli("explain", "samples/mlp.session.json", "--shape", "B=999", "--site", "multi_kernel_0"))
    text = " ".join(out.split())
    rows = [line for line in out.splitlines() if "triton_tem" in line]
    assert all("~" in row for row in rows)  # every variant's median is an estimate
    assert ("~ is an estimate, interpolated in log time against log GEMM work (2·M·N·K) between the measured "
            "B=895 and B=1000") in text
    assert "nearest measured: B=1000 (distance 0.003): v1 picked, the fastest · 15.1 µs" in text
    assert "at B=999, over 1 site (each once per call site, estimated): Inductor's picks ~15.1 µs" in text


def test_explain_beyond_the_measured_shapes_says_there_is_no_estimate(kinspect_cli):
    out = ok(kinspect_cli("explain", "samples/mlp.session.json", "--shape", "B=40000", "--site", "multi_kernel_0"))
    text = " ".join(out.split())
    assert "no estimate: the shape lies outside the measured keys of every variant" in text
    assert "nearest measured: B=16384 (distance 2.575)" in text
    assert not [line for line in out.splitlines() if "triton_tem" in line and "~" in line]


def test_explain_json_gives_the_estimate_its_keys_and_the_nearest(kinspect_cli):
    doc = json.loads(ok(kinspect_cli("explain", GPT2, "--shape", "B=37 S=200", "--json")))
    site = doc["sites"][0]
    assert "median_us" not in site["variants"][0]  # nothing was measured here
    est = site["estimate"]
    assert est["estimated"] is True and est["basis"].startswith("interpolated in log time")
    ends = [[w["sizes"] for w in v["from"]] for v in est["variants"]]
    assert ends[0] == [{"B": 32, "S": 129}, {"B": 32, "S": 256}]
    at = {v["index"]: v["median_us"] for v in est["variants"]}
    low, high = (est["nearest"][1]["median_us"]["0"], est["nearest"][0]["median_us"]["0"])
    assert min(low, high) < at[0] < max(low, high)
    assert doc["model"]["estimated_sites"] == 4 and doc["model"]["measured_sites"] == 0


def test_explain_lists_the_measured_shapes_and_ends_with_the_line_to_paste(kinspect_cli):
    out = ok(kinspect_cli("explain", GPT2))
    assert "every site (35): B=2: S=16, 32, 64, 128, 129, 256, 1024 · B=4: S=128, 500" in " ".join(out.split())
    assert out.splitlines()[-1] == "torch._inductor.config.multi_kernel_hints = [256, 4096]"
    doc = json.loads(ok(kinspect_cli("explain", GPT2, "--json")))
    assert doc["paste"] == "torch._inductor.config.multi_kernel_hints = [256, 4096]"
    assert doc["measured_shapes"]["multi_kernel_0"][:2] == ["B=2 S=16", "B=2 S=32"]


def test_a_shape_ends_with_what_the_best_hints_predict_and_the_line(kinspect_cli):
    out = ok(kinspect_cli("explain", GPT2, "--shape", "B=37 S=200"))
    lines = out.splitlines()
    assert lines[-1] == "torch._inductor.config.multi_kernel_hints = [256, 4096]"
    assert "predicted geomean ×1.27 against ×1.30 with the compiled hints [64, 256, 4096]" in " ".join(lines[-4:-1])


def test_a_measured_shape_gives_no_estimate():
    (r,) = explain(load("samples/mlp.session.json"), SymbolShape({"B": 1000}), "multi_kernel_0")
    assert r.estimate is None and r.timings is not None and r.timings.fastest is not None


def test_the_line_to_paste_says_how_to_verify_it_for_a_model_file_and_for_a_recorded_program():
    """A model file's recording is verified by `kinspect advise` compiling it; a program that
    `kinspect run` gave its hints, by `kinspect advise --run` running it (its path escaped, as
    any text from a session file)."""
    from dataclasses import replace

    from kinspect.core.quality.whatif import paste_note, what_ifs

    session = load(GPT2)
    results = what_ifs(session, session.timings())
    note = paste_note(results, session.compiled_hints, session.advisable_program)
    assert session.advisable_program is None and note.endswith("(kinspect advise compiles it to verify):")
    ran = replace(session, model=replace(session.model, path="serve\x1b[2J.py"),
                  environment=replace(session.environment, config={**session.environment.config,
                                                                   "hints_added_by_kinspect": True}))
    note = paste_note(results, ran.compiled_hints, ran.advisable_program)
    assert note.endswith("(kinspect advise --run serve\\x1b[2J.py runs the program with more candidates and "
                         "verifies):")


def test_where_two_hints_share_a_variant_the_compiled_hints_row_is_still_the_current_one():
    """The MoE stack recorded with both switches: hints 256 and 4096 were tuned at the same
    sizes, so its sites have variants at 64 and 4096 only. The compiled hints run as that pair,
    which the what-if marks current and the line to paste is weighed against."""
    from pathlib import Path

    from kinspect.core.quality.whatif import current, paste_note, what_ifs

    session = load(Path(__file__).parent / "fixtures" / "sessions" / "moe_layers_fixed_h100_2026-12-06.session.json")
    results = what_ifs(session, session.timings())
    now = current(results, session.compiled_hints)
    assert session.compiled_hints == (64, 256, 4096) and now is not None and now.hints == (64, 4096)
    note = paste_note(results, session.compiled_hints, session.advisable_program)
    assert note.startswith(f"predicted geomean ×1.04 against {'×%.2f' % now.geomean_regret} with the compiled hints "
                           "[64, 256, 4096], from these kernels")


def test_fewer_hints_with_the_same_prediction_are_said_to_be_that():
    """Where dropping a hint changes no pick, the best row has fewer hints and the same
    figure: the note says so rather than 'x1.04 against x1.04'."""
    from kinspect.core.quality.whatif import WhatIf, paste_line, paste_note

    results = [WhatIf("inductor", (64,), 72, 1.0412, 1.14, 0.05), WhatIf("inductor", (64, 4096), 72, 1.0412, 1.14, 0.05)]
    assert paste_note(results, (64, 256, 4096)) == (
        "fewer hints, the same predicted geomean ×1.04 as the compiled hints [64, 256, 4096], from these kernels "
        "(kinspect advise compiles it to verify):")
    assert paste_line(results) == "torch._inductor.config.multi_kernel_hints = [64]"
