"""An encoder serving loop: a BERT-family encoder from `transformers` (built from a small
config, random weights, no download) embedding batches of requests whose batch size and
sequence length change from call to call, as a search or classification service does.

    python encoder_serve.py
    kinspect run --hints 64,256,4096 --measure encoder_serve.py
"""

import torch
from transformers import BertConfig, BertModel

REQUESTS = [(2, 16), (4, 48), (8, 128), (3, 77), (16, 32), (4, 48), (6, 200)]
"""(batch, tokens) per request; one repeats (a warm shape)."""


def main() -> None:
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    config = BertConfig(hidden_size=384, num_hidden_layers=2, num_attention_heads=6, intermediate_size=1536,
                        max_position_embeddings=512)
    model = BertModel(config, add_pooling_layer=False).to(device=device, dtype=dtype).eval()
    encode = torch.compile(model, dynamic=True)
    with torch.no_grad():
        for batch, tokens in REQUESTS:
            ids = torch.randint(0, config.vocab_size, (batch, tokens), device=device)
            mask = torch.ones_like(ids)
            emb = encode(input_ids=ids, attention_mask=mask).last_hidden_state.mean(1)
            print(f"batch {batch}, {tokens} tokens: embeddings {tuple(emb.shape)}")


if __name__ == "__main__":
    main()
