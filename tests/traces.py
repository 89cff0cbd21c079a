"""The TORCH_TRACE fixtures (made by scripts/trace_fixture.py) and ways to damage a copy."""

from __future__ import annotations

import gzip
from pathlib import Path

TRACES = Path(__file__).resolve().parent / "fixtures" / "traces"
SAMPLES = Path(__file__).resolve().parent.parent / "samples"
MLP = TRACES / "mlp" / "dedicated_log_torch_trace_fixture.log"
"""samples/mlp.py compiled on the CPU, its output code the H200 recording's: two sites."""
DDP = TRACES / "ddp"
"""samples/ddp.py's MLP in DDP on two gloo ranks, each rank's output code its H200 recording's."""
CPU = TRACES / "cpu" / "dedicated_log_torch_trace_fixture.log.gz"
"""A CPU compile's own trace: extern GEMMs, no multi-kernel, a recompile."""


def text_of(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode()


def write_log(folder: Path, text: str, name: str = "dedicated_log_torch_trace_x.log") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    return path
