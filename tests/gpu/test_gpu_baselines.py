"""Whole-model baselines compiled afresh in child processes, on the GPU."""

from __future__ import annotations

from gpu_cases import MEASURE_AT, SAMPLES


def test_eager_and_static_baselines_have_times(recorded):
    r = recorded(SAMPLES / "linear.py", MEASURE_AT["linear"])
    got = r.live.baselines({"B": 1000}, ["eager", "static"])
    assert [b.kind for b in got] == ["eager", "static"]
    for b in got:
        assert b.error is None, b.error
        assert 0 < b.gpu_us <= b.wall_us * 1.05, b
    assert r.session.baselines[-2:] == got
    print({b.kind: (b.gpu_us, b.wall_us) for b in got})
