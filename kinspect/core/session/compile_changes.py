"""What kinspect changed in a compile, as the session states it wherever it is shown.

A session records Inductor as it ran. Five opt-in switches change what Inductor did, and
a reader of the session (the banner, explain, the Markdown report) must be told: one size
per symbol at each hint (`--one-size-per-symbol`: the problem each variant is tuned and
keyed on differs from stock, the kernels' code and the runtime rule do not), each hint's
fused choice picked among its own (`--fusion-per-hint`: which config a variant runs may
differ from stock, the keys and the runtime rule do not), Inductor's benchmarks timed by the
GPU's work alone (`--autotune-device-time`: which config a variant runs may differ, the problems
and the runtime rule do not), the fit of Inductor's benchmark
tensors at each hint (`--fit-benchmark-tensors`: timings differ from stock, keys and
kernels do not) and repeated layers compiled once (`--compile-layers-once`: the program
around the size-hint sites differs at block boundaries, the sites and their keys do not).
Each is a `environment.config` entry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from kinspect.core.dispatch.hint_sizes import same_sizes

PATCH_KEY = "fit_benchmark_tensors"
"""Set when kinspect patched Inductor's hint autotuning."""

PATCH_NOTE = ("Inductor's hint autotuning was patched by kinspect (--fit-benchmark-tensors): its benchmark "
              "tensors were built with the hint substituted for each size symbol, and a config that faulted "
              "was skipped; keys and kernels are Inductor's own")

SIZES_KEY = "one_size_per_symbol"
"""Set when kinspect made Inductor tune, key and launch each hint at one size per symbol."""

SIZES_NOTE = ("Each hint was tuned, keyed and launched at one size per symbol by kinspect (--one-size-per-symbol): "
              "Inductor's kernel arguments, launch grid, keys and benchmark tensors all used the sizes each graph "
              "lists per hint (stock Inductor gives a product of sizes such as B*S the hint itself, while the kernel "
              "gets the hint for each symbol); the kernels and the runtime choice are Inductor's own")

FUSION_KEY = "fusion_per_hint"
"""Set when kinspect made each hint's epilogue-fusion benchmark compare only that hint's choices."""

FUSION_NOTE = ("Each hint's fused epilogue was picked among that hint's own choices by kinspect (--fusion-per-hint): "
               "stock Inductor's fusion benchmark at a later hint also compares the earlier hints' choices, each "
               "timed on its own smaller problem, and a larger hint's variant then runs a config tuned for a smaller "
               "one (docs/upstream/fusion-per-hint.md); the kernels, keys and the runtime choice are Inductor's own")

DEVICE_TIME_KEY = "autotune_device_time"
"""Set when kinspect held the GPU before each of Inductor's timed benchmark calls."""

DEVICE_TIME_NOTE = ("Inductor's autotune benchmarks timed the GPU's work alone by kinspect (--autotune-device-time): "
                    "a spin kernel held the GPU while the host launched each timed call, so the host's launch "
                    "latency, which stock Inductor's events take in where a launch outlasts its L2 flush, ranked no "
                    "config (docs/upstream/autotune-launch-latency.md); the problems, kernels' code and the runtime "
                    "choice are Inductor's own")

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
    if config.get(SIZES_KEY):
        out.append(("hint sizes", SIZES_NOTE))
    if config.get(FUSION_KEY):
        out.append(("fusion per hint", FUSION_NOTE))
    if config.get(DEVICE_TIME_KEY):
        out.append(("autotune timing", DEVICE_TIME_NOTE))
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


@dataclass(frozen=True)
class CompileChanges:
    """What kinspect may change in Inductor's compile, asked for by the same flags on every
    command that compiles (and passed on to the processes that compile afresh)."""

    one_size_per_symbol: bool = False
    fit_benchmark_tensors: bool = False
    layers_once: bool = False
    fusion_per_hint: bool = False
    autotune_device_time: bool = False

    @classmethod
    def stated(cls, config: Mapping[str, Any]) -> CompileChanges:
        """What a session says was changed (its `environment.config`)."""
        return cls(bool(config.get(SIZES_KEY)), bool(config.get(PATCH_KEY)), bool(_layers(config)),
                   bool(config.get(FUSION_KEY)), bool(config.get(DEVICE_TIME_KEY)))

    def flags(self) -> list[str]:
        """The command-line flags that ask for these changes."""
        return [FLAGS[f.name] for f in fields(self) if getattr(self, f.name)]

    @classmethod
    def from_flags(cls, argv: Sequence[str]) -> tuple[CompileChanges, list[str]]:
        """The changes `argv` asks for, and the rest of it."""
        by_flag = {flag: name for name, flag in FLAGS.items()}
        asked = cls(**{by_flag[a]: True for a in argv if a in by_flag})
        return asked, [a for a in argv if a not in by_flag]

    def config(self) -> dict[str, Any]:
        """The session's `environment.config` entries for the changes known before the
        compile (the blocks compiled once are stated when they are marked)."""
        return {**({SIZES_KEY: True} if self.one_size_per_symbol else {}),
                **({FUSION_KEY: True} if self.fusion_per_hint else {}),
                **({DEVICE_TIME_KEY: True} if self.autotune_device_time else {}),
                **({PATCH_KEY: True} if self.fit_benchmark_tensors else {})}

    def banner(self) -> str | None:
        """The banner's short form of `notes`: a recording's (`stated`), or what a live
        compile was asked for."""
        parts = []
        if self.one_size_per_symbol:
            parts.append("each hint tuned at one size per symbol by kinspect (--one-size-per-symbol)")
        if self.fusion_per_hint:
            parts.append("each hint's fused choice picked among its own by kinspect (--fusion-per-hint)")
        if self.autotune_device_time:
            parts.append("Inductor's benchmarks timed by the GPU's work alone by kinspect (--autotune-device-time)")
        if self.fit_benchmark_tensors:
            parts.append("Inductor's hint autotuning was patched by kinspect (--fit-benchmark-tensors)")
        if self.layers_once:
            parts.append("repeated layers compiled once by kinspect (--compile-layers-once)")
        return " · ".join(parts) or None


FLAGS = {"one_size_per_symbol": "--one-size-per-symbol", "fit_benchmark_tensors": "--fit-benchmark-tensors",
         "layers_once": "--compile-layers-once", "fusion_per_hint": "--fusion-per-hint",
         "autotune_device_time": "--autotune-device-time"}
"""Each change and the flag that asks for it."""


def tuned_lines(graphs: Sequence[Any], names: Mapping[str, str]) -> list[str]:
    """Per graph compiled at one size per symbol, the sizes each hint was tuned at, in the
    user's names: `graph_0 (inference) tuned at hint 64: B=64 S=64; hint 4096: B=512 S=512 (lowered ...)`,
    and which hints that leaves with one variant between them."""
    return [f"{g.name} tuned at " + "; ".join(a.text(names) for a in g.hint_sizes) + _shared(g.hint_sizes)
            for g in graphs if g.hint_sizes]


def _shared(assignments: Sequence[Any]) -> str:
    """Which hints share one variant, said, or a user looks for a variant that is not there."""
    return "".join(f"; hints {', '.join(map(str, hints[:-1]))} and {hints[-1]} were tuned at the same sizes, so each "
                   f"site has one variant for them, hint {hints[-1]}'s"
                   for hints in same_sizes({a.hint: a.values for a in assignments}) if len(hints) > 1)
