"""`kinspect open / explain / export` on a TORCH_TRACE log, as a user runs them: the hints
line first, the compiled code's sites and decisions, the map along a range for every
subset of the hints, a torchrun job's rank logs side by side; and none of it imports torch."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import jsonschema
from traces import CPU, DDP, MLP

from kinspect import cli
from kinspect.commands import inspect
from kinspect.core.dispatch.shapes import SymbolShape
from kinspect.core.ranks.merged import merge
from kinspect.core.store import load

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "kinspect" / "core" / "session" / "format" / "session.schema.json"


def test_explain_opens_with_whether_the_hints_took_effect(kinspect_cli):
    out = kinspect_cli("explain", MLP.parent)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "hints [64, 256, 4096] took effect: 2 size-hint multi-kernel sites in 1 graph; every GEMM has one"
    assert lines[1] == "mlp: read from a TORCH_TRACE log: compiled code only, no dispatch events and no measurements"
    assert "identical-variants" in out.stdout and "x (arg0_0, 1024)" in out.stdout  # named from its source, as a recording names it


def hints_line(stdout: str) -> str:
    """The first line as the user reads it, wrapped as the terminal wraps it."""
    lines = stdout.splitlines()
    end = next(i for i, line in enumerate(lines) if ": read from a TORCH_TRACE log" in line)
    return " ".join(line.strip() for line in lines[:end])


def test_explain_names_each_gemm_without_a_multi_kernel_and_why(kinspect_cli):
    out = kinspect_cli("explain", CPU)
    assert out.returncode == 0, out.stderr
    assert hints_line(out.stdout) == (
        "hints [64, 256, 4096] took no effect: no size-hint multi-kernel in 5 graphs; 6 GEMMs got none: fc1 (addmm), "
        "fc2 (addmm), mm into buf0 in graph_2, proj (addmm) and 1 more: not autotuned: max-autotune is off, so "
        "Inductor called the extern kernel (ATen's, cuBLAS on CUDA) directly; mm into buf0 in graph_1: not a dynamic "
        "size: every size is static, so one kernel serves them all")


def test_explain_json_carries_the_hints_and_the_trace(kinspect_cli):
    data = json.loads(kinspect_cli("explain", MLP, "--json").stdout)
    assert data["hints"]["sites"] == 2 and data["hints"]["without_multi_kernel"] == []
    assert data["torch_trace"] == MLP.name
    data = json.loads(kinspect_cli("explain", CPU, "--json").stdout)
    assert [(g["graph"].split()[0], g["name"], g["reason"].split(":")[0])
            for g in data["hints"]["without_multi_kernel"]] == [
        ("graph_0", "fc1", "not autotuned"), ("graph_0", "fc2", "not autotuned"),
        ("graph_1", "mm into buf0", "not a dynamic size"), ("graph_2", "mm into buf0", "not autotuned"),
        ("graph_3", "proj", "not autotuned"), ("graph_4", "mm into buf0", "not autotuned")]


def test_a_typed_shape_is_decided_as_for_a_recording(kinspect_cli):
    out = kinspect_cli("explain", MLP, "--shape", "s33=1000", "--site", "multi_kernel_1")
    assert out.returncode == 0, out.stderr
    assert "v1 (hint 256) is nearest at distance 3.932" in out.stdout
    assert "not measured at this key" in out.stdout


def test_the_map_along_a_range_for_every_subset_of_the_hints(kinspect_cli):
    out = kinspect_cli("explain", MLP, "--range", "s33=2..8192")
    assert out.returncode == 0, out.stderr
    rows = [" ".join(line.strip("│ ").split()) for line in out.stdout.splitlines() if line.startswith("│")]
    assert rows[:7] == [
        "64, 256, 4096 │ v0 (hint 64) 2..128 · v1 (hint 256) = v2 (hint 4096) 129..8192",
        "64, 256 │ v0 (hint 64) 2..128 · v1 (hint 256) 129..8192",
        "64, 4096 │ v0 (hint 64) 2..512 · v2 (hint 4096) 513..8192",
        "256, 4096 │ v1 (hint 256) = v2 (hint 4096) 2..8192",
        "64 │ v0 (hint 64) 2..8192", "256 │ v1 (hint 256) 2..8192", "4096 │ v2 (hint 4096) 2..8192"]


def test_every_size_of_a_range_runs_what_its_span_says(kinspect_cli):
    data = json.loads(kinspect_cli("explain", MLP, "--range", "s33=2..20000", "--json").stdout)
    s = load(MLP)
    rng = random.Random(3)
    for entry in data["sites"]:
        site = s.site(entry["name"])
        for m in entry["maps"]:
            kept = [v for v in site.variants if v.hint in m["hints"]]
            for span in m["spans"]:
                for x in {span["lo"], span["hi"], rng.randint(span["lo"], span["hi"])}:
                    key = s.runtime_key(site, SymbolShape({"s33": x}))
                    scores = [(site.decide(key).scores[v.index].distance, i) for i, v in enumerate(kept)]
                    assert kept[min(scores)[1]].index in span["variants"], (entry["name"], m["hints"], x)


def test_a_range_over_a_size_the_session_lacks_is_one_line(kinspect_cli):
    out = kinspect_cli("explain", MLP, "--range", "B=2..100")
    assert out.returncode == 2 and out.stderr == "kinspect: error: unknown symbol B; this session has: arg0_0\n"


def test_export_writes_a_session_and_a_report_from_a_trace(tmp_path, kinspect_cli):
    path = tmp_path / "trace.session.json"
    out = kinspect_cli("export", MLP.parent, "--format", "json", "-o", path)
    assert out.returncode == 0, out.stderr
    jsonschema.validate(json.loads(path.read_text()), json.loads(SCHEMA.read_text()))
    assert [s.name for s in load(path).sites] == ["multi_kernel_0", "multi_kernel_1"]
    report = tmp_path / "trace.md"
    out = kinspect_cli("export", MLP, "--format", "md", "-o", report)
    assert out.returncode == 0 and out.stderr == "", out.stderr  # no map image to miss: nothing is measured
    text = report.read_text()
    assert "`multi_kernel_1`: which variant runs along `arg0_0=2..16384`" in text  # the Map tab's answer
    assert "| `64, 256, 4096` | v0 (hint 64) 2..128 · v1 (hint 256) 129..1024 · v2 (hint 4096) 1025..16384 |" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace.md", "trace.session.json"]


def test_a_folder_of_rank_logs_is_a_job_s_ranks(kinspect_cli):
    out = kinspect_cli("explain", DDP)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("rank 0 of 2: a CUDA GPU of compute capability 9.0 (132 SMs), 0 dispatches")
    divergent = [f for f in load_ranks().findings if f.kind == "rank-divergence"]
    assert [f.site for f in divergent] == ["multi_kernel_0"]  # graph_1's kernels differ only in their device index


def load_ranks():
    from kinspect.commands.rank_sessions import load_merged

    return load_merged([str(DDP)])


def test_ranks_compiled_with_other_hints_are_a_finding():
    from dataclasses import replace

    ranks = load_ranks()
    other = ranks.sessions[1]
    other.environment = replace(other.environment, config={**other.environment.config, "multi_kernel_hints": [64, 4096]})
    (f,) = [f for f in merge(list(ranks.sessions), list(ranks.sources)).findings if f.kind == "rank-hints"]
    assert f.message.startswith("the ranks were compiled with different multi_kernel_hints (rank 0 [64, 256, 4096]; "
                                "rank 1 [64, 4096])")


def test_open_shows_a_trace_with_a_banner_saying_what_it_lacks(monkeypatch):
    opened = []
    monkeypatch.setattr(inspect, "_run", lambda source: opened.append(source) or 0)
    assert cli.main(["open", str(MLP)]) == 0
    assert cli.main([str(CPU)]) == 0  # `kinspect TRACE` alone too
    assert opened[0].banner().startswith(f"TORCH_TRACE log {MLP.name} · torch 2.")
    assert opened[0].banner().endswith("compiled for a CUDA GPU of compute capability 9.0 (132 SMs) · compiled code "
                                       "only: no dispatch events, no measurements")
    assert not opened[0].can_measure and opened[1].session.graphs


def test_a_trace_opens_and_explains_without_torch(tmp_path):
    """The inspector's path never imports torch: here it cannot."""
    probe = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch' or name.startswith('torch.'):\n"
        "            raise ImportError('torch is blocked')\n"
        "sys.meta_path.insert(0, Block())\n"
        "from kinspect import cli\n"
        "from kinspect.commands import inspect\n"
        "banner = inspect.source_for_path(sys.argv[1]).banner()\n"
        "from kinspect.tui.app import InspectorApp\n"
        "code = cli.main(['explain', sys.argv[1], '--range', 's33=2..64'])\n"
        "print(banner[:15], code, 'torch' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, str(MLP)], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "TORCH_TRACE log 0 False"
