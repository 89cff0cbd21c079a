"""What the GPU tests compile and where to find it (shared by tests/gpu modules)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
MODELS = Path(__file__).parent / "models"

MEASURE_AT = {
    "linear": [{"B": 100}, {"B": 1000}],
    "mlp": [{"B": 1000}],
    "gemm_2d": [{"M": 2048, "N": 2048}],
}
"""Shapes each sample is measured at when first recorded."""

GPT2_MEASURE_AT = [{"B": 4, "S": 128}, {"B": 2, "S": 1024}]
"""Shapes the GPT-2 sample is measured at (it is recorded only where transformers is)."""

SWEEPS = {
    "linear": ({"B": (2, 16384)}, 48),
    "mlp": ({"B": (2, 16384)}, 32),
    "gemm_2d": ({"M": (64, 4096), "N": (64, 4096)}, 16),
    "gpt2": ({"B": (2, 32), "S": (16, 1024)}, 16),
}
"""What each sample's recording sweeps (a size of 1 would make Dynamo specialise and
recompile, so ranges start at 2): the map a user without a GPU opens."""
