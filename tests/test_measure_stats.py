"""Measurement statistics, derived figures and their storage (the CPU side of measuring)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from synthetic import synthetic_session

from kinspect.core.quality.explain import explain_site
from kinspect.core.quality.roofline import gemm_flops, min_bytes, share
from kinspect.core.session.runtime import Measurement
from kinspect.core.store import load, save
from kinspect.core.dispatch.shapes import FullKey
from kinspect.inductor.timing.measure import quantile, summarize


def test_quantiles_interpolate_like_numpy_linear():
    values = [10.0, 1.0, 4.0, 3.0, 2.0]
    assert quantile(values, 0.0) == 1.0 and quantile(values, 1.0) == 10.0
    assert quantile(values, 0.5) == 3.0
    assert quantile(values, 0.2) == pytest.approx(1.8)
    assert quantile([7.0], 0.8) == 7.0


def test_summary_is_median_and_p20_p80():
    t = summarize([5.0, 1.0, 2.0, 3.0, 4.0, 100.0])
    assert t.median_us == 3.5 and t.samples == 6
    assert t.p20_us == pytest.approx(2.0) and t.p80_us == pytest.approx(5.0)


def test_event_timings_count_at_a_key_and_cupti_is_the_cross_check():
    """One method per key: v1, timed by CUPTI alone, is not compared with v0's events."""
    s = synthetic_session(measured=False)
    site = s.sites[0]
    key = site.runtime_key({"s0": 1000})
    s.measurements = [
        Measurement(site.name, key, 0, "cuda_events", 20.0, 19.0, 21.0, 25),
        Measurement(site.name, key, 0, "cupti", 19.5, 19.4, 19.6, 20),
        Measurement(site.name, key, 1, "cupti", 30.0, 29.0, 31.0, 20),
    ]
    shown = s.measurements_at(site.name, key)
    assert shown[0].method == "cuda_events" and shown[0].median_us == 20.0
    assert 1 not in shown
    assert s.measurements_at(site.name, key, "cupti")[0].median_us == 19.5
    assert s.timings_at(site.name, key, "cupti").fastest == 0


def three_kernels(site):
    """The synthetic site's v2 copies v0's kernel; here each variant is its own."""
    return replace(site, variants=(*site.variants[:2], replace(site.variants[2], source_hash="own kernel")))


def test_regret_is_the_chosen_variant_over_the_fastest():
    s = synthetic_session(measured=False)
    site = s.sites[0] = three_kernels(s.sites[0])
    key = site.runtime_key({"s0": 1000})  # the synthetic session picks v2 here
    for v, us in ((0, 53.0), (1, 22.1), (2, 14.8)):
        s.measurements.append(Measurement(site.name, key, v, "cuda_events", us, us, us, 10))
    e = explain_site(s, site, FullKey(key))
    assert e.decision.chosen == 2 and e.fastest == 2 and e.regret == 1.0
    s.measurements.append(Measurement(site.name, key, 1, "cuda_events", 10.0, 10.0, 10.0, 10))
    e = explain_site(s, site, FullKey(key))
    assert e.fastest == 1 and e.regret == pytest.approx(1.48)


def test_failed_variant_measurements_keep_their_error_and_do_not_count():
    s = synthetic_session(measured=False)
    site = s.sites[0] = three_kernels(s.sites[0])
    key = site.runtime_key({"s0": 1000})
    s.measurements = [
        Measurement(site.name, key, 0, "cuda_events", None, error="CUDA out of memory"),
        Measurement(site.name, key, 2, "cuda_events", 12.0, 11.0, 13.0, 25),
    ]
    e = explain_site(s, site, FullKey(key))
    assert e.fastest == 2
    assert e.to_json()["variants"][0]["median_us"] is None


def test_measurements_survive_a_round_trip(tmp_path):
    s = synthetic_session(measured=False)
    site = s.sites[0]
    key = site.runtime_key({"s0": 8192})
    s.measurements = [
        Measurement(site.name, key, 1, "cuda_events", 165.2, 164.0, 166.1, 25, True, 416.1, 1015.5),
        Measurement(site.name, key, 0, "cuda_events", None, error="RuntimeError: too many resources requested"),
    ]
    path = tmp_path / "s.json"
    save(s, path)
    assert load(path).measurements == s.measurements


def test_gemm_work_and_traffic_from_keys():
    s = synthetic_session()
    addmm, mm = s.sites[0], s.sites[1]
    key = addmm.runtime_key({"s0": 1000})
    assert gemm_flops(addmm, key) == 2 * 1000 * 4096 * 1024
    assert min_bytes(key, 2) == 2 * (4096 + 1000 * 1024 + 4096 * 1024 + 1000 * 4096)
    key = mm.runtime_key({"s0": 100, "s1": 32})
    assert gemm_flops(mm, key) == 2 * 100 * 64 * 4096
    assert gemm_flops(mm, key[:2]) is None
    assert share(395.0, 790.0) == 0.5 and share(None, 790.0) is None and share(1.0, None) is None


def test_gemm_work_of_a_transformers_keys_whose_input_is_not_laid_out_as_its_rows():
    """GPT-2 hands addmm x as (B, S, K) or viewed (B, heads, S, d) against a (B*S, N) output,
    and lm_head's mm a (N, K) weight: K comes from the weight that another input holds M*K for."""
    s = load(Path(__file__).parent / "fixtures" / "samples_h200_2026-11-30" / "gpt2.session.json")
    c_attn, c_proj = s.sites[0], s.sites[1]
    assert gemm_flops(c_attn, ((2304,), (2, 16, 768), (768, 2304), (32, 2304))) == 2 * 32 * 768 * 2304
    assert gemm_flops(c_proj, ((768,), (2, 12, 16, 64), (768, 768), (32, 768))) == 2 * 32 * 768 * 768
    lm_head = next(site for site in load(Path(__file__).parents[1] / "samples" / "generate.session.json").sites
                   if site.call_sites and site.call_sites[0].module == "lm_head")
    assert gemm_flops(lm_head, ((2, 16, 768), (50257, 768), (32, 50257))) == 2 * 32 * 768 * 50257
    # A key whose input rows disagree with its output's (stock Inductor's at a hint): the
    # problem its output and weight stand for, what its grid covers.
    assert gemm_flops(c_attn, ((2304,), (2, 16, 700), (768, 2304), (32, 2304))) == 2 * 32 * 768 * 2304
