"""Work and traffic of a GEMM site at a runtime key, for share-of-peak figures.

A latency alone does not say whether a variant is good; against the GPU's measured
ceilings (a large bf16 matmul, a large device copy) it does. FLOPs follow from the
output and the reduction size; bytes are each template tensor read or written once
(the fewest a kernel can move), so the reported GB/s is a lower bound on real traffic.
"""

from __future__ import annotations

from collections.abc import Mapping
from math import prod

from kinspect.core import numbers
from kinspect.core.numbers import share_range, tflops, us_text
from kinspect.core.session.model import Finding, Session, Site
from kinspect.core.dispatch.shapes import Key
from kinspect.core.session.timings import KeyTimings, per_site
from kinspect.core.quality.rules import session_rule

FAR_BELOW = 0.10
"""Every variant under a tenth of the GPU's measured bf16 peak at every measured shape: no
choice of variant (so no dispatch rule, no hint) can make the site fast."""


def gemm_flops(site: Site, key: Key) -> int | None:
    """2*M*N*K (times the batch) from the key, or None if the shapes are not a GEMM's."""
    dims = gemm_dims(site, key)
    if dims is None:
        return None
    m, k, n = dims
    return 2 * m * k * n


def min_bytes(key: Key, itemsize: int) -> int:
    return sum(prod(shape) for shape in key) * itemsize


def share(value: float | None, peak: float | None) -> float | None:
    if value is None or not peak:
        return None
    return value / peak


def gemm_dims(site: Site, key: Key) -> tuple[int, int, int] | None:
    """(M, K, N) of a GEMM key (the batch folded into M), or None if it is not a GEMM's:
    K from the input laid out as the output's rows, else (a transformer's `(B, S, K)` input
    with its `(B*S, N)` output, or one viewed `(B, heads, S, d)`) from a 2-D weight, `(K, N)`
    or `(N, K)`, that another input holds M*K elements for."""
    roles = [t.role for t in site.tensors]
    if len(key) != len(roles) or "output" not in roles:
        return None
    out = key[roles.index("output")]
    if len(out) < 2:
        return None
    inputs = [shape for shape, role in zip(key, roles) if role == "input"]
    for shape in inputs:
        if len(shape) == len(out) and shape[:-1] == out[:-1]:
            return prod(out[:-1]), shape[-1], out[-1]
    m = prod(out[:-1])
    for shape in inputs:
        for k, n in (shape, shape[::-1]) if len(shape) == 2 else ():  # the weight, or its transpose (lm_head's)
            if n == out[-1] and any(prod(x) == m * k for x in inputs if x is not shape):
                return m, k, out[-1]
    # A key whose input rows disagree with its output's (stock Inductor's at a hint: x keyed
    # (h, h, K) for h output rows) still says the problem its grid and output stand for.
    if len(out) == 2:
        for shape in inputs:
            if len(shape) == 2 and shape[-1] == out[-1]:
                return out[0], shape[0], out[-1]
    return None


@session_rule("far-below-peak")
def far_below_peak(session: Session, timings: Mapping[tuple[str, Key], KeyTimings] | None = None) -> list[Finding]:
    """Sites where every variant runs under a tenth of the GPU's bf16 peak at every measured
    shape: the kernels are slow whichever is picked, a matter for the template's configs
    (or the shapes), not for the size-hint dispatch."""
    peak = session.environment.peaks.get("tflops_bf16")
    if not peak or timings is None and all(m.tflops is None for m in session.measurements):
        return []  # no measurement says its TFLOP/s: no share of peak to go by
    by_site = per_site(timings) if timings is not None else session.timings_per_site()
    out = []
    for site in session.sites:
        rows: list[tuple[float, float, Key, KeyTimings]] | None = []
        for (_, key), t in by_site.get(site.name, {}).items():
            if t.fastest is None:
                continue
            shares = [m.tflops / peak for m in t.measured.values() if m.tflops is not None and m.method == t.method]
            if shares:
                if max(shares) >= FAR_BELOW:
                    rows = None  # one shape reaches a tenth of peak: not this site
                    break
                rows.append((max(shares), min(shares), key, t))
        if not rows:
            continue
        best, _, key, t = min(rows, key=lambda r: r[0])
        dims = gemm_dims(site, key)
        at = f"{dims[0]}×{dims[1]}×{dims[2]} (M×K×N)" if dims else "its slowest shape"
        low, high = min(r[1] for r in rows), max(r[0] for r in rows)
        fastest = t.median(t.fastest) if t.fastest is not None else None
        took = f" takes {us_text(fastest)} at best" if fastest is not None else ""
        out.append(Finding(
            "far-below-peak",
            f"every variant runs at {share_range(low, high)} of the GPU's bf16 peak ({tflops(peak)}) "
            f"at all {len(rows)} measured shapes; {at}{took} ({numbers.share(best)} of peak): no pick or hint "
            "makes this site fast, its kernels' configs (or the shapes) do",
            "warning", site=site.name, graph=site.graph))
    return out
