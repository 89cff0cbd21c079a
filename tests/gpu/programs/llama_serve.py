"""A decoder serving loop over a 2-layer Llama from `transformers` (small config, random
weights), batch and length dynamic: the program run under `--compile-layers-once`, where
kinspect compiles its repeated decoder layers once, as nested compile regions.

    python llama_serve.py
    kinspect run --hints 64,256 --compile-layers-once --measure llama_serve.py
"""

import torch
from transformers import LlamaConfig, LlamaModel

REQUESTS = [(2, 64), (4, 128), (8, 256), (4, 200), (2, 64)]


def main() -> None:
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    config = LlamaConfig(vocab_size=32000, hidden_size=512, intermediate_size=1408, num_hidden_layers=2,
                         num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=2048, use_cache=False)
    model = LlamaModel(config).to(device=device, dtype=dtype).eval()
    forward = torch.compile(model, dynamic=True)
    with torch.no_grad():
        for batch, length in REQUESTS:
            ids = torch.randint(0, config.vocab_size, (batch, length), device=device)
            hidden = forward(input_ids=ids).last_hidden_state
            print(f"batch {batch}, length {length}: {tuple(hidden.shape)}")


if __name__ == "__main__":
    main()
