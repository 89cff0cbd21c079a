"""A plain program that does what real programs do to a recording: fork (a
`multiprocessing` worker and a bare `os.fork` whose child runs on to the end of the
program), dispatch from a thread that outlives its main code, change its working
directory. Dispatches go through Inductor's real SizeHintMultiKernelCall with stand-in
kernels on meta tensors (standin.py), as in serve.py.

`HOSTILE` picks what it does, comma-separated: `fork`, `thread`, `chdir`, `many` (a
dispatch per batch size from 1 to `MANY`, to fill the log), `sleep` (then wait for a
signal). Each dispatch's batch size is printed to stdout by the process that made it.
"""

import multiprocessing
import os
import sys
import threading
import time

from standin import ARGS, variants  # before torch: it sets Inductor's environment

import torch
from torch._inductor.codegen.multi_kernel import SizeHintMultiKernelCall

multi_kernel_0 = SizeHintMultiKernelCall("multi_kernel_0", variants("addmm", 1024, 4096), ARGS)


def say(line):
    """One write per line: under PYTHONUNBUFFERED, print writes its pieces apart, and a
    line of the parent's could be split by the worker's lines in the shared pipe."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def serve(batch):
    multi_kernel_0.run(torch.empty(batch, 1024, device="meta"), torch.empty(batch, 4096, device="meta"))
    say(f"{os.getpid()} {batch}")


def worker(sizes):
    """A worker that loads a graph of its own (a new multi-kernel, as a compile in the
    worker would make) and dispatches through both."""
    own = SizeHintMultiKernelCall("multi_kernel_1", variants("mm", 8, 8), ARGS)
    for b in sizes:
        serve(b)
        own.run(torch.empty(b, 8, device="meta"), torch.empty(b, 8, device="meta"))


doing = os.environ.get("HOSTILE", "").split(",")
say(f"parent {os.getpid()}")
serve(100)
if "chdir" in doing:
    os.makedirs("elsewhere", exist_ok=True)
    os.chdir("elsewhere")
if "fork" in doing:
    p = multiprocessing.get_context("fork").Process(target=worker, args=([3000, 5000] * 2000,))
    p.start()
    serve(200)
    p.join()
    if os.fork() == 0:  # the child runs on to the program's end, and back into kinspect
        serve(7)
        sys.exit(0)
    os.wait()
if "thread" in doing:
    def late():
        time.sleep(0.3)
        serve(300)

    threading.Thread(target=late).start()  # not a daemon: Python waits for it at exit
if "many" in doing:
    for b in range(1, int(os.environ.get("MANY", "1000")) + 1):
        multi_kernel_0.run(torch.empty(b, 1024, device="meta"), torch.empty(b, 4096, device="meta"))
    say("many done")
if "sleep" in doing:
    say("sleeping")
    time.sleep(60)
serve(400)
