"""The CLI commands as a user runs them on the GPU: `python -m kinspect ...` on
samples/linear.py, asserted on the exit status, what is printed and what is saved.
(The same commands' code on the CPU, with the pipeline stood in: tests/test_commands_cpu.py.)
"""

from __future__ import annotations

import json

from gpu_cases import SAMPLES
from gpu_cli import kinspect
from tables import cells

from kinspect.core.store import load

LINEAR = SAMPLES / "linear.py"


def test_record_saves_a_session_that_opens_and_its_log(tmp_path):
    out = tmp_path / "linear.session.json"
    result = kinspect("record", LINEAR, "-o", out)
    session = load(out)
    assert len(session.sites) == 1 and len(session.events) == 9  # the compile run and 8 workload steps
    assert all(e.picked == e.predicted for e in session.events)
    assert f"kinspect: saved {out}: 1 sites, 9 dispatches, {len(session.findings)} findings" in result.stderr
    assert load(out.with_suffix(".jsonl")).events == session.events


def test_record_measure_times_each_shape_both_ways_and_explain_shows_it(tmp_path):
    out = tmp_path / "linear.session.json"
    kinspect("record", LINEAR, "-o", out, "--measure", "--shapes", "B=100", "B=1000")
    session = load(out)
    timed = {(m.key[1][0], m.variant, m.method) for m in session.measurements if m.median_us}
    assert timed == {(b, v, method) for b in (100, 1000) for v in range(3) for method in ("cuda_events", "cupti")}
    table = kinspect("explain", out, "--shape", "B=1000").stdout
    assert "timed by CUDA events; fastest v" in table
    rows = [cells(line) for line in table.splitlines() if line.startswith("│")]
    rows = [r for r in rows if len(r) > 2 and r[1].isdigit() and r[2].isdigit()]  # the site's, not the quality table's
    assert "dispatch quality over the measured shapes (one compile)" in table
    assert len(rows) == 3 and all(float(r[5]) > 0 and float(r[7].removeprefix("×")) >= 1.0 for r in rows), table


def test_explain_a_model_measures_and_times_baselines_at_the_shape():
    result = kinspect("explain", LINEAR, "--shape", "B=1000", "--measure", "--baselines", "eager,hinted", "--json")
    doc = json.loads(result.stdout)
    (site,) = doc["sites"]
    assert site["method"] == "cuda_events" and site["fastest"] in (0, 1, 2) and site["regret"] >= 1.0
    assert all(v["median_us"] > 0 for v in site["variants"])
    assert [(b["kind"], b["error"]) for b in doc["baselines"]] == [("eager", None), ("hinted", None)]
    assert all(b["gpu_us"] > 0 and b["wall_us"] > 0 for b in doc["baselines"])
    table = kinspect("explain", LINEAR, "--shape", "B=1000", "--measure").stdout
    assert "median µs" in table and "× fastest" in table and "timed by CUDA events" in table


def test_sweep_maps_the_shape_space_and_plot_draws_it(tmp_path):
    out = tmp_path / "linear.session.json"
    result = kinspect("sweep", LINEAR, "--range", "B=2..16384", "--points", "48", "-o", out)
    session = load(out)
    (sweep,) = session.sweeps
    sizes = {p["B"] for p in sweep.points}
    assert {128, 129, 1024, 1025} <= sizes and len(sizes) >= 48, sorted(sizes)
    assert "dispatch quality over the measured shapes" in result.stdout and "whole model" in result.stdout
    assert "what-if on these measurements" in result.stdout
    print(result.stdout)
    assert any(f.kind == "slow-pick" for f in session.findings)
    explained = kinspect("explain", out, "--json").stdout
    quality = json.loads(explained)["quality"]
    assert quality[0]["site"] == "multi_kernel_0" and quality[0]["shapes"] >= 48
    image = tmp_path / "map.png"
    kinspect("plot", out, "-o", image)
    assert image.stat().st_size > 10_000
    report = tmp_path / "linear.md"
    kinspect("export", out, "--format", "md", "-o", report)
    assert "![decision map](linear.map.png)" in report.read_text() and (tmp_path / "linear.map.png").is_file()
