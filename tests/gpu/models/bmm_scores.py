"""Attention scores with the sequence length dynamic: `torch.bmm(q, k.transpose(1, 2))`.

At hint 4096 stock Inductor autotunes this GEMM on tensors whose batch stride is the hint
(4096) where the kernel indexes with 128*S: the case kinspect's hint-benchmark-tensor
finding and --fit-benchmark-tensors are for.
"""

import torch


def model(q, k):
    return torch.bmm(q, k.transpose(1, 2))


def inputs(S=100):
    return torch.randn(8, S, 128, dtype=torch.bfloat16), torch.randn(8, S, 128, dtype=torch.bfloat16)


hints = [64, 256, 4096]
workload = [{"S": s} for s in (100, 300, 2000, 4096)]
