"""A plain program that compiles a model of repeated blocks with Inductor on the CPU (two
Linears without bias a block: extern matmuls only, so no C++ compiler runs for a kernel),
and says whether the compiled model computes what the eager one does. With DYNAMIC=1 it
compiles with `dynamic=True`, which torch 2.13's Dynamo cannot trace through a nested compile
region (KeyError in `stamp_out_subgraph`)."""

import os

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 32, bias=False)
        self.proj = nn.Linear(32, 16, bias=False)

    def forward(self, x):
        return self.proj(self.fc(x))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Block() for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


model = Model().eval()
every_dim = os.environ.get("DYNAMIC") == "1"
compiled = torch.compile(model, dynamic=True) if every_dim else torch.compile(model)
with torch.no_grad():
    for n in (8, 24):
        x = torch.randn(n, 16)
        if not every_dim:
            torch._dynamo.mark_dynamic(x, 0)
        print(n, "same as eager:", torch.allclose(compiled(x), model(x), atol=1e-5))
