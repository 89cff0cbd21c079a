"""`kinspect run` as a user runs it on the GPU: samples/generate.py, an ordinary script
that compiles GPT-2 itself, recorded with `--hints` and `--measure` through the real
command line. With KINSPECT_RECORD_DIR set (scripts/device_session.sh run) the session
is saved there, to be committed beside the sample.

The same command's code on the CPU, on plain programs: tests/test_run_cpu.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_cases import ROOT, SAMPLES

from kinspect.core.store import load

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = Path(os.environ.get("KINSPECT_RECORD_DIR") or tmp_path_factory.mktemp("run")) / "generate.session.json"
    env = {**os.environ, "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1", "COLUMNS": "200"}
    # Stock Inductor died of an illegal memory access autotuning this program's GEMMs at a hint
    # on the H200 (its benchmark tensors do not fit what the kernel reads): kinspect fits them.
    done = subprocess.run([sys.executable, "-m", "kinspect", "run", "--hints", "64,256,4096", "--measure",
                           "--fit-benchmark-tensors",
                           "-o", str(out), str(SAMPLES / "generate.py"), "--tokens", "3"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    print(done.stderr[-3000:])
    (out.parent / "generate.stderr.txt").write_text(done.stderr)  # the whole of it, for a failure's cause
    assert done.returncode == 0, done.stderr[-3000:]
    return done, load(out)


def test_the_script_runs_as_itself_and_kinspect_speaks_on_stderr(generated):
    done, _ = generated
    assert done.stdout.splitlines() == [
        f"batch {b}, prompt {p}: 3 tokens generated per sequence"
        for b, p in ((2, 16), (4, 32), (8, 64), (3, 100), (16, 24), (4, 32))]
    ours = [line for line in done.stderr.splitlines() if line.startswith("kinspect:")]
    assert ours[0] == ("kinspect: the program sets no multi_kernel_hints: compiling with [64, 256, 4096], "
                       "max-autotune and Triton GEMMs (--hints)")
    assert re.fullmatch(r"kinspect: saved .*generate\.session\.json: \d+ sites, \d+ dispatches, \d+ measurements, "
                        r"\d+ findings", ours[-1])


def test_the_session_holds_the_compiles_facts_and_every_dispatch(generated):
    _, s = generated
    assert s.sites and not [f for f in s.findings if f.kind == "from-cache"]
    assert s.environment.config["multi_kernel_hints"] == [64, 256, 4096] and s.environment.gpu
    attn = next(site for site in s.sites if any(c.module and c.module.endswith("h.0.attn.c_attn") for c in site.call_sites))
    assert len(attn.call_sites) == 2 and all(c.line is not None for c in attn.call_sites)  # both layers
    for site in s.sites:
        assert [v.hint for v in site.variants] == [64, 256, 4096]
        assert all(v.source and v.autotune for v in site.variants), site.name
        assert site.symbols  # symbolic sizes seen at compile time
    events = [e for e in s.events if e.site == attn.name]
    shapes = {e.key[1][:2] for e in events}  # x is (B, S, 768)
    assert len(shapes) > 10  # batch x sequence length changes from call to call
    assert any(e.cache_hit for e in events) and any(not e.cache_hit for e in events)
    assert all(e.picked == e.predicted for e in s.events)


def test_every_variant_is_measured_at_every_key_the_program_ran(generated):
    _, s = generated
    keys = {(e.site, e.key) for e in s.events}
    for site, key in keys:
        n = len(next(x for x in s.sites if x.name == site).variants)
        timed = {(m.variant, m.method) for m in s.measurements if m.site == site and m.key == key and m.median_us}
        assert timed >= {(v, "cuda_events") for v in range(n)}, (site, key)
    assert s.environment.peaks.get("tflops_bf16")


def test_kinspect_explains_the_recording(generated, tmp_path):
    _, s = generated
    path = tmp_path / "again.session.json"
    from kinspect.core.store import save

    save(s, path)
    done = subprocess.run([sys.executable, "-m", "kinspect", "explain", str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
    print(done.stdout[-3000:])
    assert done.returncode == 0, done.stderr
    assert "dispatch quality" in done.stdout
