"""A 2-layer Llama from Hugging Face `transformers`, built from a small config (random
weights, no download): the second transformer `kinspect advise` is checked on over a
(B, S) grid beside samples/gpt2.py. Its GEMMs see B*S rows and its attention sees B
and S apart; the gate, up and down projections give it three MLP GEMMs."""

import torch
from transformers import LlamaConfig, LlamaModel

config = LlamaConfig(vocab_size=32000, hidden_size=512, intermediate_size=1408, num_hidden_layers=2,
                     num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=2048, use_cache=False)
model = LlamaModel(config).to(torch.bfloat16).eval()


def inputs(B=4, S=128):
    return torch.randint(0, config.vocab_size, (B, S))


workload = [{"B": b, "S": s} for b, s in ((2, 64), (4, 128), (8, 256), (4, 512), (2, 256), (8, 64))]
hints = [64, 256, 4096]
