"""A decoder-only generation loop: a Llama-family model from `transformers` (small config,
random weights) extending batches of prompts token by token, without a KV cache, so the
batch and the sequence length change from call to call.

    python decoder_generate.py
    kinspect run --hints 64,256,4096 --measure decoder_generate.py
"""

import torch
from transformers import LlamaConfig, LlamaForCausalLM

REQUESTS = [(2, 16), (4, 40), (8, 64), (3, 100), (4, 40)]
TOKENS = 3


def main() -> None:
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    config = LlamaConfig(vocab_size=8192, hidden_size=512, intermediate_size=1408, num_hidden_layers=2,
                         num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=1024, use_cache=False)
    model = LlamaForCausalLM(config).to(device=device, dtype=dtype).eval()
    forward = torch.compile(model, dynamic=True)
    with torch.no_grad():
        for batch, prompt in REQUESTS:
            ids = torch.randint(0, config.vocab_size, (batch, prompt), device=device)
            for _ in range(TOKENS):
                logits = forward(input_ids=ids).logits[:, -1]
                ids = torch.cat([ids, logits.argmax(-1, keepdim=True)], dim=1)
            print(f"batch {batch}, prompt {prompt}: {ids.shape[1] - prompt} tokens generated")


if __name__ == "__main__":
    main()
