"""Data-parallel inference whose ranks see different batch sizes each step: an MLP inside
DistributedDataParallel.

Record it on two GPUs, one session per rank, and see the ranks side by side:

    torchrun --nproc-per-node 2 -m kinspect record samples/ddp.py --measure
    kinspect explain samples/ddp.rank0.session.json samples/ddp.rank1.session.json

Under torchrun kinspect joins the process group and pins each rank's GPU before it
imports this file, so the file can build DDP here and read its rank. Run plainly
(`python samples/ddp.py`), it is one process and the MLP without DDP.
"""

import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


class MLP(nn.Module):
    # A class of your own inside DDP: Dynamo compiles the wrapped module's forward as a
    # frame of its own, and it does not start compiling in torch's files (nn.Sequential).
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(1024, 4096)
        self.down = nn.Linear(4096, 1024)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


net = MLP().to(torch.bfloat16)
if dist.is_initialized():
    model = DistributedDataParallel(net.cuda(), device_ids=[torch.cuda.current_device()])
    rank = dist.get_rank()
else:
    model = net
    rank = int(os.environ.get("RANK", 0))


def inputs(B=1000):
    return torch.randn(B, 1024, dtype=torch.bfloat16)


# Each rank its own batch per step, as a data loader of variable-length samples gives:
# at step 1 rank 0 runs B=1000 (past the hints' midpoint 128..1024, where Inductor's pick
# is often not the fastest) while rank 1 runs B=300.
workload = [{"B": b} for b in ((64, 1000, 129, 2048, 1024, 300) if rank == 0 else (100, 300, 128, 1025, 1000, 8192))]
hints = [64, 256, 4096]

if __name__ == "__main__":
    print(model(inputs(B=8)).shape)
