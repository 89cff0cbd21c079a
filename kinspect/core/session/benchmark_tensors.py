"""A benchmark tensor that did not hold what its template's kernel reads at a size hint,
as a compile saw it: the facts a session keeps so that the `hint-benchmark-tensor`
finding is derived from the session like every other finding (the tensors themselves
existed only while Inductor autotuned).

Expressions are kept as the IR's text and only ever displayed: nothing here, nor the rule
that reads them, parses them (a session file is data).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Layout:
    """The layout a template reads a tensor through (the view, not its base), as the IR
    states it (sympy's text of each expression)."""

    size: tuple[str, ...]
    stride: tuple[str, ...]
    offset: str = "0"


@dataclass(frozen=True)
class Concrete:
    """A tensor as built or as read: shape, strides, storage offset and storage (elements)."""

    size: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int
    storage: int


@dataclass(frozen=True)
class Replaced:
    """One expression whose value Inductor gave differs from its value at the hint."""

    where: str
    """`size[1]`, `stride[0]`, `offset`."""
    expr: str
    given: int
    at_hint: int


@dataclass(frozen=True)
class Misfit:
    tensor: str
    """Inductor's name for the tensor (`arg0_1`, `buf3`; `out` for the template's output)."""
    hint: int
    path: str
    """`in-process` (the hint put in for every expression) or `subprocess` (no hint at all)."""
    layout: Layout
    given: Concrete
    """The tensor Inductor built (its base, whose storage the kernel reads)."""
    needed: Concrete
    """What the kernel reads at the hint: its extent, strides and offset there, and the storage they reach."""
    replaced: tuple[Replaced, ...]

    @property
    def short(self) -> bool:
        """The kernel can read past the tensor's storage (it faults, or times other memory)."""
        return self.needed.storage > self.given.storage


PATHS = ("in-process", "subprocess")


@dataclass(frozen=True)
class TemplateMisfit:
    """A misfit with the template it was seen in: one of a graph's `misfits`."""

    misfit: Misfit
    op: str
    """The template's op (`bmm`, `addmm`; `a template` where the compile died before naming it)."""
    inputs: tuple[str, ...]
    """The template's inputs by Inductor's names (bases), which tell one layer's template from another's."""
    index: int | None
    """The tensor's place among the inputs; None: the template's output."""
    fitted: bool
    """kinspect gave the tensor the storage its kernel reads (`--fit-benchmark-tensors`)."""
    site: str | None = None
    """The site the template became (None: the compile died first)."""
