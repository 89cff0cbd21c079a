"""Repeated layers compiled once: a model's repeated blocks as nested compile regions.

Stock Inductor lowers, schedules and generates template choices for every layer of a
transformer although the layers share every GEMM layout, so its compile grows with the
depth (GPT-2: about twice as long at 12 layers as at 2). PyTorch's own answer is
`torch.compiler.nested_compile_region`: Dynamo traces a marked function once as an
`invoke_subgraph`, Inductor compiles that subgraph once and every layer calls it. The
size-hint multi-kernels inside it are Inductor's own (the same sites, keys and variants);
what changes is the program around them: no fusion across a block's boundary.

So this is opt-in (`--compile-layers-once`), and every session made with it says so. The
blocks are the members of an `nn.ModuleList` (or `nn.Sequential`) that are all of one
class with submodules of their own: a transformer's layers. The class's `forward` is
marked for as long as the recording lives, then put back as it was.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kinspect.core.errors import KinspectError
from kinspect.core.session.compile_changes import BlockGroup


@dataclass(frozen=True)
class _Blocks:
    group: BlockGroup
    cls: type


def repeated_blocks(model: Any) -> list[_Blocks]:
    """Each container of two or more blocks of one class, outermost first; a container
    inside a block already found is left alone (it is compiled with its block)."""
    import torch

    if not isinstance(model, torch.nn.Module):
        return []
    found: list[_Blocks] = []
    for path, module in model.named_modules():
        if not isinstance(module, (torch.nn.ModuleList, torch.nn.Sequential)):
            continue
        if any(path == f.group.module or path.startswith(f.group.module + ".") for f in found):
            continue
        members = list(module.children())
        classes = {type(m) for m in members}
        if len(members) < 2 or len(classes) != 1:
            continue
        cls = classes.pop()
        if cls.__module__.startswith("torch.") or not any(True for _ in members[0].children()):
            continue  # a list of plain Linears is not a layer: marking nn.Linear would mark every GEMM
        found.append(_Blocks(BlockGroup(path, cls.__name__, len(members)), cls))
    return found


def _region() -> Any:
    import torch

    region = getattr(getattr(torch, "compiler", None), "nested_compile_region", None)
    if region is None:
        raise KinspectError(f"--compile-layers-once needs torch.compiler.nested_compile_region, "
                            f"which torch {torch.__version__} lacks")
    return region


@contextlib.contextmanager
def compiled_once(model: Any) -> Iterator[list[BlockGroup]]:
    """Inside, each repeated block class's `forward` is a nested compile region; yields
    the groups marked (empty: the model has no repeated blocks, and compiles as it is)."""
    region = _region()
    blocks = repeated_blocks(model)
    marked: list[tuple[type, Any]] = []
    try:
        for b in blocks:
            if any(cls is b.cls for cls, _ in marked):
                continue  # one class in two containers (an encoder's and a decoder's): marked once
            marked.append((b.cls, b.cls.__dict__.get("forward")))
            b.cls.forward = region(b.cls.forward)
        yield [b.group for b in blocks]
    finally:
        for cls, own in reversed(marked):
            if own is None:
                del cls.forward
            else:
                cls.forward = own
