"""A plain program that compiles with Inductor on the CPU: no GEMM, so no size-hint
multi-kernel whatever the hints (views only, so no C++ compiler runs for a kernel)."""

import torch


@torch.compile(dynamic=True)
def scale(x):
    return x[1:]


for n in (8, 16, 32):
    print(n, float(scale(torch.ones(n)).sum()))
