"""A program one of whose compiles dies of a CUDA fault after another made a site, as the
2-layer Llama under `--compile-layers-once` did on the H200: a size-hint multi-kernel
dispatches (stand-in kernels, as a loaded wrapper does), then Inductor's real
`MultiTemplateBuffer.choice_timings` autotunes an mm whose benchmark at hint 4096 raises
the fault, in a graph being lowered (kinspect's capture notes it as lowering does)."""

from standin import ARGS, variants  # before torch: it sets Inductor's environment

import torch
from torch._inductor import ir
from torch._inductor.codegen.multi_kernel import SizeHintMultiKernelCall
from torch._inductor.virtualized import V

from kinspect.inductor.hooks import capture

class UpProjection:
    """What choice_timings reads of the block's mm being autotuned."""

    _choice_timings: dict = {}
    origin_node = type("Node", (), {"target": type("Op", (), {"_opname": "mm"})()})()

    def get_name(self):
        return "buf5"

    def _choice_timings_fn(self, hint):
        if hint == 4096:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        return {}


def dispatch():
    multi_kernel_0 = SizeHintMultiKernelCall("multi_kernel_0", variants("mm", 1, 64), ARGS)
    multi_kernel_0.run(torch.empty(32, 1, device="meta"), torch.empty(32, 64, device="meta"))


def die_compiling():
    block = type("GraphLowering", (), {"is_inference": True})()
    with V.set_graph_handler(block):
        capture._active()._graph_for(block).templates += 1  # as lowering the block's mm does
        for hint in (64, 256, 4096):
            ir.MultiTemplateBuffer.choice_timings(UpProjection(), hint)


if __name__ == "__main__":
    dispatch()
    die_compiling()
