"""GPT-2 from Hugging Face `transformers`, built from its config (random weights, no
download): a real transformer whose repeated blocks share multi-kernels.

Inductor emits one size-hint multi-kernel per distinct GEMM and calls it from every
layer (`multi_kernel_0.run(...)` once per block), so the layers share one shape cache:
the first layer to meet a new shape decides the kernel for all of them. Batch B and
sequence length S are both dynamic; the GEMMs see B*S rows.

Running it live needs `transformers` (`pip install transformers`); opening its
recording (`kinspect samples/gpt2.session.json`) does not.
"""

import os

import torch
from transformers import GPT2Config, GPT2Model

LAYERS = int(os.environ.get("GPT2_LAYERS", "2"))
"""2 for the sample; 12 is GPT-2 small (benchmarks/gpt2_scale.py sets it)."""

config = GPT2Config(n_layer=LAYERS, use_cache=False)
model = GPT2Model(config).to(torch.bfloat16)


def inputs(B=4, S=128):
    return torch.randint(0, config.vocab_size, (B, S))


workload = [{"B": b, "S": s} for b, s in ((2, 32), (4, 128), (8, 128), (4, 500), (16, 256), (2, 1024), (4, 128))]
hints = [64, 256, 4096]

if __name__ == "__main__":
    with torch.no_grad():
        print(model(inputs(B=2, S=16)).last_hidden_state.shape)
