"""The stand-in kernels a plain test program dispatches through Inductor's real
SizeHintMultiKernelCall: they only log that they ran (meta tensors). The program makes
the SizeHintMultiKernelCall itself, as a loaded wrapper module does, so that its calls
are found in its own text. Imported by the programs beside it."""

import os
import types

os.environ["TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE"] = "1"  # a disk cache keyed by real kernels otherwise

HINTS = (64, 256, 4096)
ran = []
"""The names of the kernels that ran, in order."""


class Kernel:
    def __init__(self, name):
        self.inductor_meta = {"kernel_name": name}
        self.fn = types.SimpleNamespace(src=f"@triton.jit\ndef {name}(x_ptr, out_ptr):\n    pass\n")

    def run(self, *args, **kwargs):
        ran.append(self.inductor_meta["kernel_name"])


def variants(op, inner, outer):
    """A variant per hint, keyed by the sizes ((B, inner), (B, outer)) at that hint."""
    return {((h, inner), (h, outer)): Kernel(f"triton_tem_fused_{op}_{i}") for i, h in enumerate(HINTS)}


ARGS = {i: [slice(0, 2)] for i in range(len(HINTS))}
"""Each variant's arguments: the first two."""
