"""The fastest a GPU can do a bf16 GEMM, for bounds that must hold whatever else ran on it.

kinspect measures a peak once per session (a large bf16 matmul), but a measurement is only a
floor of the GPU's ceiling: another process on the GPU slows it and nothing speeds it up.
Programs recorded side by side on one H100 measured 264 TFLOP/s in one session and 792 in
another, and at 264 a hint-4096 GEMM autotuned at 1.7 ms looked faster than the GPU could do
it. A least-time bound therefore takes the highest rate there is evidence for: the measured
peak, or the vendor's dense bf16 figure for a GPU named in the session, whichever is higher.
The datasheet figure is the family's highest (an H100 PCIe is slower than the SXM part), so a
bound from it errs only towards saying nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kinspect.core.session.model import Environment

DATASHEET_TFLOPS_BF16: tuple[tuple[str, float], ...] = (
    (r"\bB200\b", 2250.0),
    (r"\bGH200\b", 989.4),
    (r"\bH200\b", 989.4),
    (r"\bH100\b", 989.4),
    (r"\bH800\b", 989.4),
    (r"\bA100\b", 312.0),
    (r"\bA800\b", 312.0),
    (r"\bL40S\b", 362.1),
    (r"\bL4\b", 121.0),
)
"""Dense (no sparsity) bf16 tensor-core TFLOP/s by GPU name, from NVIDIA's data sheets."""


@dataclass(frozen=True)
class Ceiling:
    tflops: float
    source: str
    """How the figure is known, for the reader of a bound: `measured`, `the NVIDIA H100 data sheet`."""


def datasheet_tflops(gpu: str | None) -> tuple[str, float] | None:
    """The data sheet's bf16 rate for a GPU name as torch reports it, and the part it names."""
    for pattern, rate in DATASHEET_TFLOPS_BF16:
        found = re.search(pattern, gpu or "")
        if found:
            return found.group(0), rate
    return None


def bf16_ceiling(environment: Environment) -> Ceiling | None:
    """The highest bf16 GEMM rate the session gives evidence for; None where it gives none."""
    measured = environment.peaks.get("tflops_bf16")
    sheet = datasheet_tflops(environment.gpu)
    if sheet is not None and (not measured or sheet[1] > measured):
        return Ceiling(sheet[1], f"the NVIDIA {sheet[0]} data sheet")
    return Ceiling(measured, "measured") if measured else None
