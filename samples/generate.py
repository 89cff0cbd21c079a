"""Batched text generation with GPT-2: an ordinary script, not a kinspect model file.

A serving-style loop: each request is a batch of prompts of one length, extended token
by token, so both the batch size and the sequence length change from call to call. The
model is Hugging Face `transformers`' GPT-2 built from its config (random weights, no
download) and compiled by the script itself with dynamic shapes.

    python samples/generate.py [--tokens N]
    kinspect run --hints 64,256,4096 --measure samples/generate.py [--tokens N]

The script sets no multi_kernel_hints of its own; under `kinspect run --hints` every
compile gets them (with max-autotune and Triton GEMMs), so each GEMM becomes a size-hint
multi-kernel whose dispatch on the real request sizes the session records.
"""

import argparse
import os

import torch
from transformers import GPT2Config, GPT2LMHeadModel

REQUESTS = [(2, 16), (4, 32), (8, 64), (3, 100), (16, 24), (4, 32)]
"""(batch, prompt length) per request; the last repeats the second (a warm shape)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=4, help="tokens to generate per request (default 4)")
    args = parser.parse_args()
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    config = GPT2Config(n_layer=int(os.environ.get("GPT2_LAYERS", "2")), use_cache=False)
    model = GPT2LMHeadModel(config).to(device=device, dtype=dtype).eval()
    forward = torch.compile(model, dynamic=True)
    with torch.no_grad():
        for batch, prompt in REQUESTS:
            ids = torch.randint(0, config.vocab_size, (batch, prompt), device=device)
            for _ in range(args.tokens):
                logits = forward(input_ids=ids).logits[:, -1]
                ids = torch.cat([ids, logits.argmax(-1, keepdim=True)], dim=1)
            print(f"batch {batch}, prompt {prompt}: {ids.shape[1] - prompt} tokens generated per sequence")


if __name__ == "__main__":
    main()
