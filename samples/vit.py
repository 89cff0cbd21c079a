"""A timm ViT-Tiny/16 with the batch dynamic (random weights, no download): a second real
model family beside samples/gpt2.py, from a library nobody here wrote.

Its GEMMs see B*197 rows (197 tokens per image). Stock Inductor has faulted autotuning
its qkv projection at hint 256 with hints 64, 256, 4096; record it with
`--fit-benchmark-tensors` to get through. Running it live needs `timm`
(`pip install timm`); opening its recording (`kinspect samples/vit.session.json`) does not.
"""

import timm
import torch

model = timm.create_model("vit_tiny_patch16_224", pretrained=False).to(torch.bfloat16).eval()


def inputs(B=8):
    return torch.randn(B, 3, 224, 224, dtype=torch.bfloat16)


workload = [{"B": b} for b in (2, 8, 16, 33, 64, 128, 8)]
hints = [64, 256, 4096]

if __name__ == "__main__":
    with torch.no_grad():
        print(model(inputs(B=2)).shape)
