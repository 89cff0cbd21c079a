"""A plain program, no kinspect in it: a serving loop whose request sizes come from its
command line, dispatching through Inductor's real SizeHintMultiKernelCall as a loaded
wrapper module does (stand-in kernels that log which of them ran, meta tensors).

`ENDING` picks how it ends: normally, `raise`, `exit3`, `interrupt`, `kill` (SIGKILL,
`KILL_AFTER_S` after its last dispatch) or `term` (SIGTERM)."""

import os
import signal
import sys
import time
import types

os.environ["TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE"] = "1"  # a disk cache keyed by real kernels otherwise

import torch  # noqa: E402
from torch._inductor.codegen.multi_kernel import SizeHintMultiKernelCall  # noqa: E402

ran = []


class Kernel:
    def __init__(self, name):
        self.inductor_meta = {"kernel_name": name}
        self.fn = types.SimpleNamespace(src=f"@triton.jit\ndef {name}(x_ptr, out_ptr):\n    pass\n")

    def run(self, *args, **kwargs):
        ran.append(self.inductor_meta["kernel_name"])


HINTS = (64, 256, 4096)
multi_kernel_0 = SizeHintMultiKernelCall(
    "multi_kernel_0", {((h, 1024), (h, 4096)): Kernel(f"triton_tem_fused_addmm_{i}") for i, h in enumerate(HINTS)},
    {i: [slice(0, 2)] for i in range(len(HINTS))})


def serve(batch):
    multi_kernel_0.run(torch.empty(batch, 1024, device="meta"), torch.empty(batch, 4096, device="meta"))


print(f"argv={sys.argv[1:]} name={__name__} path0={sys.path[0] == os.path.dirname(os.path.abspath(__file__))}")
print(f"stdin={sys.stdin.readline().strip()!r}")
for b in [a for a in sys.argv[1:] if a.isdigit()]:
    serve(int(b))
print("ran", " ".join(name.rsplit("_", 1)[1] for name in ran), flush=True)
ending = os.environ.get("ENDING", "")
if ending == "raise":
    raise ValueError("request too large")
if ending == "exit3":
    sys.exit(3)
if ending == "interrupt":
    raise KeyboardInterrupt
if ending == "kill":
    time.sleep(float(os.environ.get("KILL_AFTER_S", "0")))
    os.kill(os.getpid(), signal.SIGKILL)
if ending == "term":
    os.kill(os.getpid(), signal.SIGTERM)
