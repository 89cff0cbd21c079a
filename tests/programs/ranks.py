"""A plain torchrun program on the CPU: it joins its gloo process group itself, each rank
serves its own batch sizes through a compiled module (one call per request) that
dispatches through Inductor's real SizeHintMultiKernelCall (stand-in kernels, called
eagerly from the compiled forward), and the ranks all-reduce a count."""

from standin import ARGS, variants  # before torch: it sets Inductor's environment

import torch
from torch._inductor.codegen.multi_kernel import SizeHintMultiKernelCall
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
multi_kernel_0 = SizeHintMultiKernelCall("multi_kernel_0", variants("mm", 1024, 4096), ARGS)


@torch._dynamo.disable
def dispatch(b):
    multi_kernel_0.run(torch.empty(b, 1024, device="meta"), torch.empty(b, 4096, device="meta"))


class Server(torch.nn.Module):
    def forward(self, x):
        dispatch(x.shape[0])
        return x + 1


serve = torch.compile(Server(), backend="eager", dynamic=True)
for b in (64, 100, 1000):
    serve(torch.zeros(b * (1 + rank)))
count = torch.tensor([3])
dist.all_reduce(count)
print(f"rank {rank}: {int(count)} requests in all")
dist.destroy_process_group()
