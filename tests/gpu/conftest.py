"""GPU tests: the real compile-with-hints pipeline on an NVIDIA GPU (skipped without CUDA).

Each sample is compiled once per test session (max-autotune takes ~20-60 s a model) and
shared by the tests that read it. With KINSPECT_RECORD_DIR set, the sample sessions are
also saved there: scripts/device_session.sh uses that to record samples/*.session.json.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from gpu_cases import SAMPLES, SWEEPS


def pytest_collection_modifyitems(config, items):
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.gpu)
            if not torch.cuda.is_available():
                item.add_marker(pytest.mark.skip(reason="needs a CUDA GPU"))


class Recorded:
    """A live pipeline that compiled, ran its workload and (for samples) measured."""

    def __init__(self, path: Path, measure_at: list[dict[str, int]] | None) -> None:
        from kinspect.inductor.launch.modelfile import load_model_file
        from kinspect.inductor.recording.pipeline import LivePipeline, Options

        self.progress: list[str] = []
        self.mf = load_model_file(path)
        self.live = LivePipeline(self.mf, Options(progress=self.progress.append))
        self.live.compile()
        self.results = self.live.run_workload()
        self.measured = [self.live.measure(sizes) for sizes in (measure_at or [])]
        self.sweep = None
        if path.parent == SAMPLES and path.stem in SWEEPS and os.environ.get("KINSPECT_RECORD_DIR"):
            from kinspect.inductor.jobs.sweep import run_sweep

            ranges, points = SWEEPS[path.stem]
            self.sweep = run_sweep(self.live, ranges, points, self.progress.append)
        self.session = self.live.session
        self.path = path
        self.save()

    def save(self) -> None:
        """Saved when recorded and again at the end, with what later tests added (baselines)."""
        out = os.environ.get("KINSPECT_RECORD_DIR")
        if out and self.path.parent == SAMPLES:
            self.live.save(Path(out) / f"{self.path.stem}.session.json")


_cache: dict[str, Recorded] = {}


@pytest.fixture(scope="session")
def recorded():
    def get(path: Path, measure_at: list[dict[str, int]] | None = None) -> Recorded:
        key = str(path)
        if key not in _cache:
            _cache[key] = Recorded(path, measure_at)
        return _cache[key]

    yield get
    for r in _cache.values():
        r.save()
        r.live.close()
