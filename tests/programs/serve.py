"""A plain program, no kinspect in it: a serving loop whose request sizes come from its
command line, dispatching through Inductor's real SizeHintMultiKernelCall as a loaded
wrapper module does (stand-in kernels that log which of them ran, meta tensors).

`ENDING` picks how it ends: normally, `raise`, `exit3`, `interrupt`, `kill` (SIGKILL,
`KILL_AFTER_S` after its last dispatch) or `term` (SIGTERM)."""

import os
import signal
import sys
import time

from standin import ARGS, ran, variants  # before torch: it sets Inductor's environment

import torch
from torch._inductor.codegen.multi_kernel import SizeHintMultiKernelCall

multi_kernel_0 = SizeHintMultiKernelCall("multi_kernel_0", variants("addmm", 1024, 4096), ARGS)


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
