"""Kernel-level timing against CUPTI, its repeatability, and out-of-memory handling."""

from __future__ import annotations

import pytest

from kinspect.core.errors import KinspectError

from gpu_cases import MEASURE_AT, SAMPLES


def by_method(measurements, method):
    return {(m.site, m.key, m.variant): m for m in measurements if m.method == method and m.median_us}


@pytest.mark.parametrize("name", sorted(MEASURE_AT))
def test_event_timing_agrees_with_cupti(recorded, name):
    r = recorded(SAMPLES / f"{name}.py", MEASURE_AT[name])
    flat = [m for batch in r.measured for m in batch]
    events, cupti = by_method(flat, "cuda_events"), by_method(flat, "cupti")
    assert not [m.error for m in flat if m.error], [m.error for m in flat if m.error][:3]
    assert events and set(events) == set(cupti)
    compared = 0
    for k, m in events.items():
        c = cupti.get(k)
        if c is None or c.median_us < 10:
            continue
        compared += 1
        assert abs(m.median_us - c.median_us) / c.median_us < 0.05, (k, m.median_us, c.median_us)
    assert compared or all(c.median_us < 10 for c in cupti.values())
    print(name, {k[2]: (round(m.median_us, 2), round(cupti[k].median_us, 2)) for k, m in events.items()})


def test_repeated_measurement_is_stable(recorded):
    r = recorded(SAMPLES / "linear.py", MEASURE_AT["linear"])
    first = by_method(r.live.measure({"B": 1000}), "cuda_events")
    second = by_method(r.live.measure({"B": 1000}), "cuda_events")
    assert first and set(first) == set(second)
    print({k[2]: (m.median_us, second[k].median_us) for k, m in first.items()})
    for k, m in first.items():
        if m.median_us >= 10:
            assert abs(second[k].median_us - m.median_us) / m.median_us < 0.03, (k, m.median_us, second[k].median_us)


def test_shares_of_peak_are_plausible(recorded):
    r = recorded(SAMPLES / "linear.py", MEASURE_AT["linear"])
    peaks = r.session.environment.peaks
    assert 300 < peaks["tflops_bf16"] < 1200 and 1000 < peaks["gbps"] < 6000, peaks
    shares = [m.tflops for m in r.session.measurements if m.tflops is not None]
    assert shares and all(0 < t < peaks["tflops_bf16"] * 1.1 for t in shares), shares


def test_too_large_a_shape_is_refused_cleanly(recorded):
    r = recorded(SAMPLES / "linear.py", MEASURE_AT["linear"])
    before = len(r.session.measurements)
    with pytest.raises(KinspectError, match="GiB of GPU memory"):
        r.live.measure({"B": 2**36})
    assert len(r.session.measurements) == before
    # the session goes on
    again = r.live.measure({"B": 100})
    assert all(m.median_us for m in again if m.method == "cuda_events")


def test_out_of_memory_during_a_run_is_one_step_error(recorded):
    import torch

    r = recorded(SAMPLES / "linear.py", MEASURE_AT["linear"])
    free, _ = torch.cuda.mem_get_info()
    hog = torch.empty(free - (256 << 20), dtype=torch.uint8, device="cuda")
    try:
        result = r.live.run_sizes({"B": 200_000})
    finally:
        del hog
        torch.cuda.empty_cache()
    assert result.error and "out of memory" in result.error
    assert r.live.run_sizes({"B": 100}).error is None
