"""Stock Inductor, a (B, S, 768) @ (768, 2304) GEMM with B and S dynamic, autotuned at one hint.

    python docs/upstream/hint_rows_repro.py 4096   # autotune table: configs timed at ~4 us
    python docs/upstream/hint_rows_repro.py 64     # dies of a CUDA error while autotuning

It then prints cuBLAS on the same GEMM with B*S rows at the hint for each symbol (what the
kernel computes), at the sizes the patched Inductor tunes where the 32-bit indexing guard
halves them, and at the hint itself (what the grid and the benchmark tensors of stock
Inductor are sized for), to hold the autotune table against.
Needs torch with CUDA and triton only (no kinspect). See hint-rows.md beside it.
"""

import sys

import torch
import torch._inductor.config as ic

hint = int(sys.argv[1])
ic.multi_kernel_hints = [hint]
ic.max_autotune = True
ic.max_autotune_gemm = True
ic.max_autotune_gemm_backends = "TRITON"
w = torch.randn(768, 2304, device="cuda", dtype=torch.bfloat16)
f = torch.compile(lambda x: x @ w)
x = torch.randn(2, 16, 768, device="cuda", dtype=torch.bfloat16)
torch._dynamo.mark_dynamic(x, 0)
torch._dynamo.mark_dynamic(x, 1)
f(x)
torch.cuda.synchronize()


def cublas_us(rows: int) -> float:
    y = torch.randn(rows, 768, device="cuda", dtype=torch.bfloat16)
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        y @ w
    s.record()
    for _ in range(20):
        y @ w
    e.record()
    torch.cuda.synchronize()
    return s.elapsed_time(e) / 20 * 1000


# What the patched Inductor tunes at this hint: B = S = the hint, halved together until the
# (B*S, 2304) output passes its 32-bit indexing guard.
side = hint
while side * side * 2304 > torch.iinfo(torch.int32).max:
    side //= 2
for rows in dict.fromkeys(r for r in (hint * hint, side * side, hint) if r * (768 + 2304) * 2 < 8 << 30):
    print(f"cuBLAS {rows}x768x2304: {cublas_us(rows):.1f} us")
print("compiled, no fault")
