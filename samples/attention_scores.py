"""Attention scores q @ k^T for 8 heads with a dynamic sequence length S (bmm).

Run it plainly with `python samples/attention_scores.py`.
"""

import torch


def model(q, k):
    return torch.bmm(q, k.transpose(1, 2)) * (128 ** -0.5)


def inputs(S=512):
    q = torch.randn(8, S, 128, dtype=torch.bfloat16)
    k = torch.randn(8, S, 128, dtype=torch.bfloat16)
    return q, k


workload = [{"S": s} for s in (64, 77, 128, 200, 256, 512, 1024, 1500, 2048, 4096)]
hints = [64, 256, 4096]

if __name__ == "__main__":
    print(model(*inputs(S=16)).shape)
