"""Work and traffic of a GEMM site at a runtime key, for share-of-peak figures.

A latency alone does not say whether a variant is good; against the GPU's measured
ceilings (a large bf16 matmul, a large device copy) it does. FLOPs follow from the
output and the reduction size; bytes are each template tensor read or written once
(the fewest a kernel can move), so the reported GB/s is a lower bound on real traffic.
"""

from __future__ import annotations

from math import prod

from kinspect.core.session.model import Site
from kinspect.core.dispatch.shapes import Key


def gemm_flops(site: Site, key: Key) -> int | None:
    """2*M*N*K (times the batch) from the key, or None if the shapes are not a GEMM's."""
    roles = [t.role for t in site.tensors]
    if len(key) != len(roles) or "output" not in roles:
        return None
    out = key[roles.index("output")]
    if len(out) < 2:
        return None
    # The A operand: an input with the output's rank whose leading dims (batch, M) match.
    for shape, role in zip(key, roles):
        if role == "input" and len(shape) == len(out) and shape[:-1] == out[:-1]:
            return 2 * prod(out) * shape[-1]
    return None


def min_bytes(key: Key, itemsize: int) -> int:
    return sum(prod(shape) for shape in key) * itemsize


def share(value: float | None, peak: float | None) -> float | None:
    if value is None or not peak:
        return None
    return value / peak
