"""A mixture-of-experts layer stack serving token batches: two capacity-based MoE layers
(top-2 routing over 8 experts, GShard style: tokens dispatched into per-expert buffers of
a capacity that grows with the number of tokens), batch and sequence length dynamic. The
experts run as batched GEMMs whose rows are that capacity, and dispatch and combine are
GEMMs over the tokens.

    python moe_layers.py
    kinspect run --hints 64,256,4096 --measure moe_layers.py
"""

import torch
import torch.nn.functional as F
from torch import nn

REQUESTS = [(2, 32), (4, 64), (8, 100), (3, 256), (4, 64)]


class MoE(nn.Module):
    def __init__(self, hidden: int, ffn: int, experts: int, top_k: int = 2) -> None:
        super().__init__()
        self.top_k = top_k
        self.norm = nn.LayerNorm(hidden)
        self.router = nn.Linear(hidden, experts, bias=False)
        self.w_in = nn.Parameter(torch.randn(experts, hidden, ffn) * hidden**-0.5)
        self.w_out = nn.Parameter(torch.randn(experts, ffn, hidden) * ffn**-0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape
        tokens = self.norm(x).reshape(b * s, h)
        gates = self.router(tokens).float().softmax(-1)
        weight, chosen = gates.topk(self.top_k, dim=-1)
        experts = self.w_in.shape[0]
        capacity = (b * s * self.top_k * 5 + 4 * experts - 1) // (4 * experts)  # capacity factor 1.25
        mask = F.one_hot(chosen, experts).sum(1)  # (T, E): which experts take each token
        position = (mask.cumsum(0) - 1) * mask
        slots = torch.arange(capacity, device=x.device)
        dispatch = ((position.unsqueeze(-1) == slots) & (mask.unsqueeze(-1) > 0)).to(x.dtype)  # (T, E, C)
        share = (gates * mask).to(x.dtype)
        expert_in = torch.einsum("tec,th->ech", dispatch, tokens)
        hidden = F.gelu(torch.bmm(expert_in, self.w_in))
        expert_out = torch.bmm(hidden, self.w_out)
        out = torch.einsum("tec,ech->th", dispatch * share.unsqueeze(-1), expert_out)
        return x + out.reshape(b, s, h)


def main() -> None:
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    model = nn.Sequential(MoE(384, 1024, 8), MoE(384, 1024, 8)).to(device=device, dtype=dtype).eval()
    forward = torch.compile(model, dynamic=True)
    with torch.no_grad():
        for batch, tokens in REQUESTS:
            x = torch.randn(batch, tokens, 384, device=device, dtype=dtype)
            y = forward(x)
            print(f"batch {batch}, {tokens} tokens: {tuple(y.shape)}")


if __name__ == "__main__":
    main()
