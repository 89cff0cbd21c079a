"""Whole-model baselines compiled afresh in child processes, on the GPU."""

from __future__ import annotations

from gpu_cases import MEASURE_AT, SAMPLES

from kinspect.core.session.runtime import BASELINE_KINDS


def test_every_baseline_kind_has_times(recorded):
    r = recorded(SAMPLES / "linear.py", MEASURE_AT["linear"])
    got = r.live.baselines({"B": 1000}, list(BASELINE_KINDS))
    print({b.kind: (b.gpu_us, b.wall_us, b.error) for b in got})
    assert [b.kind for b in got] == list(BASELINE_KINDS)
    for b in got:
        assert b.error is None, b.error
        assert 0 < b.gpu_us <= b.wall_us * 1.05, b
    assert r.session.baselines[-len(BASELINE_KINDS):] == got
