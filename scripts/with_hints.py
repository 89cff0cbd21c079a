"""Run a program with size-hint multi-kernels and nothing of kinspect: Inductor's own
config set as a user would set it, then the program as under `python`.

    python scripts/with_hints.py [--hints 64,256,4096] PROGRAM.py ARGS...

For checking Inductor itself (a patched copy of it, say) on the same programs kinspect
records, with no kinspect code in the process.
"""

import argparse
import runpy
import sys

import torch._inductor.config as inductor_config

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--hints", default="64,256,4096")
parser.add_argument("program")
parser.add_argument("args", nargs=argparse.REMAINDER)
a = parser.parse_args()
inductor_config.multi_kernel_hints = [int(h) for h in a.hints.split(",")]
inductor_config.max_autotune = True
inductor_config.max_autotune_gemm = True
inductor_config.max_autotune_gemm_backends = "TRITON"
sys.argv = [a.program, *a.args]
runpy.run_path(a.program, run_name="__main__")
