"""A two-layer MLP whose batch size varies at run time (nn.Linear: addmm with a bias).

Run it plainly with `python samples/mlp.py`; inspect it with `kinspect samples/mlp.py`.
"""

import torch
from torch import nn

model = nn.Sequential(
    nn.Linear(1024, 4096),
    nn.ReLU(),
    nn.Linear(4096, 1024),
).to(torch.bfloat16)


def inputs(B=1000):
    return torch.randn(B, 1024, dtype=torch.bfloat16)


# Batch sizes on both sides of the hints' geometric midpoints (128 and 1024).
workload = [{"B": b} for b in (64, 100, 128, 129, 300, 1000, 1024, 1025, 2048, 8192, 1000)]
hints = [64, 256, 4096]

if __name__ == "__main__":
    print(model(inputs(B=8)).shape)
