"""An encoder-decoder generation loop with three dynamic sizes: a T5-family model from
`transformers` (small config, random weights) encoding batches of source texts and
decoding greedily, so the batch, the source length and the target length all change.

    python seq2seq_generate.py
    kinspect run --hints 64,256 --measure seq2seq_generate.py
"""

import torch
from transformers import T5Config, T5ForConditionalGeneration

REQUESTS = [(2, 24), (4, 60), (8, 33), (3, 100), (4, 60)]
"""(batch, source tokens) per request."""
TOKENS = 4


def main() -> None:
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    config = T5Config(d_model=256, d_kv=32, d_ff=1024, num_layers=2, num_decoder_layers=2, num_heads=8,
                      vocab_size=8192, use_cache=False, decoder_start_token_id=0)
    model = T5ForConditionalGeneration(config).to(device=device, dtype=dtype).eval()
    step = torch.compile(model, dynamic=True)
    with torch.no_grad():
        for batch, source in REQUESTS:
            src = torch.randint(1, config.vocab_size, (batch, source), device=device)
            out = torch.zeros(batch, 1, dtype=torch.long, device=device)
            for _ in range(TOKENS):
                logits = step(input_ids=src, decoder_input_ids=out).logits[:, -1]
                out = torch.cat([out, logits.argmax(-1, keepdim=True)], dim=1)
            print(f"batch {batch}, source {source}: {out.shape[1] - 1} tokens decoded")


if __name__ == "__main__":
    main()
