"""A language-model training loop with backward: a GPT-2-family model from `transformers`
(small config, random weights) trained with AdamW on batches of changing size and length
(packed sequences of a length-bucketed data loader), forward and backward compiled.

    python gpt_train.py
    kinspect run --hints 64,256 --measure gpt_train.py
"""

import torch
from transformers import GPT2Config, GPT2LMHeadModel

BATCHES = [(4, 64), (8, 128), (2, 200), (8, 64), (4, 64)]


def main() -> None:
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    config = GPT2Config(n_layer=2, n_embd=384, n_head=6, vocab_size=8192, n_positions=512, use_cache=False)
    model = GPT2LMHeadModel(config).to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    forward = torch.compile(model, dynamic=True)
    autocast = torch.autocast(device, dtype=torch.bfloat16, enabled=device == "cuda")
    for step, (batch, length) in enumerate(BATCHES):
        ids = torch.randint(0, config.vocab_size, (batch, length), device=device)
        with autocast:
            loss = forward(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        print(f"step {step}, batch {batch}x{length}: loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
