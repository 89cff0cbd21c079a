"""What kinspect changed in a compile, as the session states it wherever it is shown.

A session records Inductor as it ran. Two opt-in switches change what Inductor did, and
a reader of the session (the banner, explain, the Markdown report) must be told: the fit
of Inductor's benchmark tensors at each hint (`--fit-benchmark-tensors`: timings differ
from stock, keys and kernels do not) and repeated layers compiled once
(`--compile-layers-once`: the program around the size-hint sites differs at block
boundaries, the sites and their keys do not). Each is a `environment.config` entry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

PATCH_KEY = "fit_benchmark_tensors"
"""Set when kinspect patched Inductor's hint autotuning."""

PATCH_NOTE = ("Inductor's hint autotuning was patched by kinspect (--fit-benchmark-tensors): its benchmark "
              "tensors were built with the hint substituted for each size symbol, and a config that faulted "
              "was skipped; keys and kernels are Inductor's own")

LAYERS_KEY = "layers_compiled_once"
"""The repeated blocks kinspect compiled as nested compile regions, one text per group."""


@dataclass(frozen=True)
class BlockGroup:
    """The blocks of one container compiled once: `h`, 12 of `GPT2Block`."""

    module: str
    """The container's module path from the compiled model (`h`, `model.layers`)."""
    cls: str
    count: int

    @property
    def text(self) -> str:
        return f"{self.module or 'the model'} ({self.count} × {self.cls})"


def layers_config(groups: Sequence[BlockGroup]) -> dict[str, Any]:
    return {LAYERS_KEY: [g.text for g in groups]}


def marked_text(groups: Sequence[BlockGroup], compiled: str | None = None) -> str:
    """What a compile says as it marks the blocks of the model (or of `compiled`, the class
    of one module a program compiles), or finds none to mark."""
    where = f" in {compiled}" if compiled else ""
    if groups:
        return f"compiling the blocks of {', '.join(g.text for g in groups)}{where} once (nested compile regions)"
    if compiled:
        return (f"--compile-layers-once: {compiled} has no repeated layers (a ModuleList of blocks of one class); "
                "compiling it as it is")
    return ("--compile-layers-once: no repeated layers found (a ModuleList of blocks of one class); "
            "compiling the model as it is")


def _layers(config: Mapping[str, Any]) -> list[Any]:
    layers = config.get(LAYERS_KEY)
    return layers if isinstance(layers, list) else []


def notes(config: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(what it changed, the sentence a reader needs) for each change the session states."""
    out = []
    if config.get(PATCH_KEY):
        out.append(("hint autotuning", PATCH_NOTE))
    layers = _layers(config)
    if layers:
        out.append(("repeated layers", (
            f"Repeated layers were compiled once by kinspect (--compile-layers-once): the blocks of "
            f"{', '.join(map(str, layers))} were marked as a nested compile region, so Inductor compiled each distinct "
            "trace of a block once (the first layer's may be one of its own) and every layer calls it; nothing is "
            "fused across a block's boundary; the size-hint sites, their keys and their variants are Inductor's own")))
    return out


def stated(config: Mapping[str, Any]) -> tuple[bool, bool]:
    """Whether the session states each change: (the fit, repeated layers compiled once)."""
    return bool(config.get(PATCH_KEY)), bool(_layers(config))


def banner_note(fitted: bool, layers_once: bool) -> str | None:
    """The banner's short form of `notes`: a recording's (`stated`), or what a live compile was asked for."""
    parts = []
    if fitted:
        parts.append("Inductor's hint autotuning was patched by kinspect (--fit-benchmark-tensors)")
    if layers_once:
        parts.append("repeated layers compiled once by kinspect (--compile-layers-once)")
    return " · ".join(parts) or None
