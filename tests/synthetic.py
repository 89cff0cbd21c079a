"""Sessions built without a GPU, for the tests and the benchmarks.

A fixture, not part of kinspect: nothing in the package needs one. The sessions follow
Inductor's rules (keys built by hint substitution, picks by the real heuristic) but every
kernel, latency and timestamp is invented, and the environment says so
(`gpu: "synthetic"`), so nobody mistakes one for a recording.
"""

from __future__ import annotations

import hashlib
import random

from kinspect.core.dispatch.decision import decide
from kinspect.core.session.model import AutotuneRow, Environment, Graph, ModelInfo, Session, Site, SymbolInfo, Variant
from kinspect.core.session.runtime import DispatchEvent, Measurement
from kinspect.core.dispatch.symbolic import SizeExpr, TensorSpec

_BLOCKS = [(64, 64, 128), (64, 128, 128), (128, 128, 64), (64, 32, 128), (128, 256, 64), (32, 64, 64)]


def _source(name: str, block: tuple[int, int, int], warps: int, stages: int) -> str:
    m, n, k = block
    return (
        "import triton\nimport triton.language as tl\n\n"
        "@triton.jit\n"
        f"def {name}(in_ptr0, arg_A, arg_B, out_ptr0, ks0):\n"
        f"    BLOCK_M : tl.constexpr = {m}\n"
        f"    BLOCK_N : tl.constexpr = {n}\n"
        f"    BLOCK_K : tl.constexpr = {k}\n"
        f"    # synthetic kernel: num_warps={warps}, num_stages={stages}\n"
        "    pid = tl.program_id(0)\n"
        "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n"
    )


def _variants(tensors: tuple[TensorSpec, ...], hints: list[int], rng: random.Random, site: int) -> tuple[Variant, ...]:
    out = []
    blocks = [_BLOCKS[(site + i) % len(_BLOCKS)] for i in range(len(hints))]
    if len(hints) > 2:
        blocks[2] = blocks[0]  # the byte-identical pair the H200 shows so often, timed alike below
    for i, hint in enumerate(hints):
        block = blocks[i]
        warps, stages = (4, 3) if block[0] <= 64 else (8, 4)
        name = f"triton_tem_fused_mm_{site}_{blocks.index(block)}"
        src = _source(name, block, warps, stages)
        out.append(
            Variant(
                index=i,
                hint=hint,
                key=tuple(t.key_at_hint(hint) for t in tensors),
                kernel_name=name,
                source=src,
                source_hash=hashlib.sha256(src.encode()).hexdigest()[:16],
                config={"BLOCK_M": block[0], "BLOCK_N": block[1], "BLOCK_K": block[2], "GROUP_M": 8, "num_warps": warps, "num_stages": stages},
                autotune=tuple(
                    AutotuneRow(f"triton_mm_{j}", round(rng.uniform(5, 50) * (1 + hint / 1024), 3), f"BLOCK_M={b[0]}, BLOCK_N={b[1]}, BLOCK_K={b[2]}")
                    for j, b in enumerate(_BLOCKS[:4])
                ),
                winner=f"BLOCK_M={block[0]}, BLOCK_N={block[1]}, BLOCK_K={block[2]}",
            )
        )
    return tuple(out)


def linear_site(index: int, hints: list[int], rng: random.Random, k: int = 1024, n: int = 4096) -> Site:
    """`nn.Linear(k, n)` with dynamic batch `s0`: addmm over (bias, x, weight, out)."""
    b = SizeExpr("s0")
    tensors = (
        TensorSpec("bias", "input", (SizeExpr(n),)),
        TensorSpec("x", "input", (b, SizeExpr(k))),
        TensorSpec("weight", "input", (SizeExpr(n), SizeExpr(k))),
        TensorSpec("out", "output", (b, SizeExpr(n))),
    )
    return Site(f"multi_kernel_{index}", "graph_0", "addmm", tensors, _variants(tensors, hints, rng, index))


def mm_two_dims_site(index: int, hints: list[int], rng: random.Random, k: int = 4096) -> Site:
    """`a @ b` with M = s0 and N = 2*s1: the key uses the hint where the true size is 2x."""
    m, nn = SizeExpr("s0"), SizeExpr(("mul", 2, "s1"))
    tensors = (
        TensorSpec("a", "input", (m, SizeExpr(k))),
        TensorSpec("b", "input", (SizeExpr(k), nn)),
        TensorSpec("out", "output", (m, nn)),
    )
    return Site(f"multi_kernel_{index}", "graph_0", "mm", tensors, _variants(tensors, hints, rng, index))


def synthetic_session(
    sites: int = 3, variants: int = 3, events: int = 0, seed: int = 0, measured: bool = True
) -> Session:
    rng = random.Random(seed)
    hints = [2 ** (6 + 2 * i) for i in range(variants)]
    built = [
        (linear_site if i % 2 == 0 else mm_two_dims_site)(i, hints, rng) for i in range(sites)
    ]
    session = Session(
        environment=Environment(
            created="2026-11-29T00:00:00Z", torch="synthetic", triton="synthetic",
            python="3.11", gpu="synthetic", cuda=None, platform="synthetic",
            config={"multi_kernel_hints": hints, "max_autotune": True, "max_autotune_gemm_backends": "TRITON"},
            peaks={"tflops_bf16": 790.0, "gbps": 4300.0},
        ),
        model=ModelInfo(path="synthetic.py", name="synthetic", hints=tuple(hints),
                        workload=tuple({"B": b, "N": 64} for b in (64, 100, 129, 1000, 1025, 8192))),
        symbols=[
            SymbolInfo("s0", "B", ("L['x'].size()[0]",), "x", 0, 1000),
            SymbolInfo("s1", "N", ("L['b'].size()[1]",), "b", 1, 64),
        ],
        graphs=[Graph("graph_0", "/tmp/synthetic/output_code.py", tuple(s.name for s in built)),
                Graph("graph_1", None, (), "no GEMM in this graph")],
        sites=built,
    )
    # Like Inductor's _shape_cache: decide a (site, size) once; later calls reuse the pick.
    cache: dict[tuple[int, int], tuple[tuple, int]] = {}
    log: list[DispatchEvent] = []
    for seq in range(events):
        si = seq % sites
        site = built[si]
        bval = rng.choice([1, 64, 100, 128, 129, 500, 1000, 1024, 1025, 4096, 8192, rng.randint(1, 16384)])
        hit = (si, bval) in cache
        if not hit:
            key = site.runtime_key({"s0": bval, "s1": 64})
            cache[(si, bval)] = (key, decide(site.keys, key).chosen)
        key, pick = cache[(si, bval)]
        log.append(DispatchEvent(seq, site.name, key, pick, pick, hit, seq // sites, seq * 1000, None))
    session.events = log
    if measured:
        for site in built:
            key = site.runtime_key({"s0": 1000, "s1": 64})
            for v in site.variants:
                base = 10.0 + 5.0 * abs(v.index - 1)
                session.measurements.append(
                    Measurement(site.name, key, v.index, "synthetic", base, base * 0.97, base * 1.04, 50)
                )
    return session


PRODUCT_ROWS_KERNEL = """
@triton.jit
def triton_mm(in_ptr0, arg_A, arg_B, out_ptr0, ks0, ks1):
    M = {m}
    N = {n}
    K = 768
    if M * N == 0:
        # early exit due to zero-size input(s)
        return
"""


def product_rows_site(m: str = "ks0*ks1", n: int = 2304, hints=(64, 256, 4096)) -> Site:
    """A GEMM whose rows are B*S (`s27*s52`), its variants keyed by Inductor's own rule (the
    hint for the whole product) and its kernels shaped as samples/generate.py's."""
    rows = SizeExpr(("mul", "s27", "s52"))
    tensors = (TensorSpec("x", "input", (rows, SizeExpr(768))),
               TensorSpec("w", "input", (SizeExpr(768), SizeExpr(n))),
               TensorSpec("out", "output", (rows, SizeExpr(n))))
    variants = tuple(Variant(i, h, tuple(t.key_at_hint(h) for t in tensors), f"k{i}",
                             source=PRODUCT_ROWS_KERNEL.format(m=m, n=n), winner="triton_mm_1",
                             autotune=(AutotuneRow("triton_mm_1", 3.168 if h == 4096 else 8.0),))
                     for i, h in enumerate(hints))
    return Site("multi_kernel_0", "graph_0", "addmm", tensors, variants)
