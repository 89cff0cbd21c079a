"""A training loop with backward: an MLP regressor trained with AdamW on batches whose
size changes from step to step (the last partial batch of an epoch, a warm-up with small
batches), forward and backward compiled by the script.

    python mlp_train.py
    kinspect run --hints 64,256,4096 --measure mlp_train.py
"""

import torch
import torch.nn.functional as F
from torch import nn

BATCHES = [64, 200, 1000, 333, 64, 2048]


def main() -> None:
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 512)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    forward = torch.compile(model)
    autocast = torch.autocast(device, dtype=torch.bfloat16, enabled=device == "cuda")
    for step, batch in enumerate(BATCHES):
        x = torch.randn(batch, 512, device=device)
        target = torch.randn(batch, 512, device=device)
        torch._dynamo.mark_dynamic(x, 0)
        with autocast:
            loss = F.mse_loss(forward(x).float(), target)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        print(f"step {step}, batch {batch}: loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
