"""One nn.Linear(1024, 4096) with bias whose batch size varies (addmm, bias epilogue).

The case from our H200 measurements where the three hints give three different kernels
and the log2-distance pick is up to 1.5x slower than the best variant just below the
hint midpoints (B=100, B=1000). Run it plainly with `python samples/linear.py`.
"""

import torch
from torch import nn

model = nn.Linear(1024, 4096).to(torch.bfloat16)


def inputs(B=1000):
    return torch.randn(B, 1024, dtype=torch.bfloat16)


workload = [{"B": b} for b in (64, 100, 128, 129, 1000, 1024, 1025, 8192)]
hints = [64, 256, 4096]

if __name__ == "__main__":
    print(model(inputs(B=8)).shape)
