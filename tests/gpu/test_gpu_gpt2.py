"""A real transformer: GPT-2 from `transformers`, whose layers share multi-kernels.

Recorded by the device script like the other samples (KINSPECT_RECORD_DIR); the session
must name each call site by the user's module path, attribute events to call sites, save
and reload, and `kinspect explain` on it must show the layers."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kinspect.core.store import load

from gpu_cases import GPT2_MEASURE_AT, ROOT, SAMPLES

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def gpt2(recorded):
    return recorded(SAMPLES / "gpt2.py", GPT2_MEASURE_AT)


def test_each_multi_kernel_is_one_site_called_from_every_layer(gpt2):
    s = gpt2.session
    names = [site.name for site in s.sites]
    assert len(names) == len(set(names)) and names
    attn = next(site for site in s.sites if any(c.module == "h.0.attn.c_attn" for c in site.call_sites))
    assert [c.module for c in attn.call_sites] == ["h.0.attn.c_attn", "h.1.attn.c_attn"]
    assert all(c.line is not None and c.call and f"{attn.name}.run(" in c.call for c in attn.call_sites)
    assert all(c.module_class == "Conv1D" for c in attn.call_sites)
    assert attn.call_sites[0].where and "modeling_gpt2" in attn.call_sites[0].where


def test_events_name_their_call_site_and_the_first_layer_decides(gpt2):
    s = gpt2.session
    shared = [site for site in s.sites if len(site.call_sites) > 1]
    assert shared
    for site in shared:
        events = [e for e in s.events if e.site == site.name]
        assert {e.call_site for e in events} == set(range(len(site.call_sites)))
        misses = [e for e in events if not e.cache_hit]
        assert misses and all(e.call_site == 0 for e in misses), misses[:3]
    assert any(f.kind == "shared-cache" for f in s.findings)
    assert not [f for f in s.findings if f.kind == "model-disagrees"]


def test_the_recording_saves_reloads_and_explains(gpt2, tmp_path):
    path = tmp_path / "gpt2.session.json"
    gpt2.live.save(path)
    again = load(path)
    assert [site.call_sites for site in again.sites] == [site.call_sites for site in gpt2.session.sites]
    assert [e.call_site for e in again.events] == [e.call_site for e in gpt2.session.events]
    done = subprocess.run([sys.executable, "-m", "kinspect", "explain", str(path), "--shape", "B=4 S=128"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    print(done.stdout)
    assert done.returncode == 0, done.stderr
    assert "h.0.attn.c_attn +1" in done.stdout  # each site's table names its layers
    overview = subprocess.run([sys.executable, "-m", "kinspect", "explain", str(path)],
                              capture_output=True, text=True, cwd=ROOT, timeout=120, env={**os.environ, "COLUMNS": "200"})
    print(overview.stdout)
    assert "h.{0,1}.attn.c_attn (Conv1D) modeling_gpt2.py:" in overview.stdout and "· 2 callers" in overview.stdout  # both layers, on one line
