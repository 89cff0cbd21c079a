"""What a recorded model did at run time: its dispatch events, the measured latency of
its variants, whole-model baselines, fresh compiles and sweeps.

Apart from the compiled facts (`kinspect.core.session.model`) because the timing rules
(`kinspect.core.session.timings`) read measurements and the session reads those rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kinspect.core.dispatch.shapes import Key


@dataclass(slots=True)
class DispatchEvent:
    """One call of a site's `run`: what Inductor did, and what kinspect predicted.

    Treated as immutable but not frozen: a frozen dataclass sets each field through
    `object.__setattr__`, which made building a 100,000-event session 80 ms slower."""

    seq: int
    site: str
    key: Key
    picked: int
    """The variant Inductor ran."""
    predicted: int
    """The variant kinspect's model of Inductor chose; differing from `picked` is a finding."""
    cache_hit: bool
    step: int | None = None
    """Index into the workload (or the `--shapes` list) that caused the call."""
    t_ns: int | None = None
    override: int | None = None
    """A variant the user forced for this call, in which case `picked` is that variant."""
    call_site: int | None = None
    """Which of the site's call sites ran it (None: recorded before call sites were told apart)."""


@dataclass(frozen=True)
class Measurement:
    """A variant's measured latency at one runtime key."""

    site: str
    key: Key
    variant: int
    method: str
    median_us: float | None
    p20_us: float | None = None
    p80_us: float | None = None
    samples: int = 0
    l2_flush: bool = False
    tflops: float | None = None
    gbps: float | None = None
    error: str | None = None


BASELINE_KINDS = ("eager", "static", "exact_hint", "hinted")
"""What a baseline can be: the file reader refuses any other kind, the live pipeline runs these."""

INSPECTED_KINDS = ("hinted", "oracle")
"""What `kinspect compare` times on the inspected compile itself, in its own process:
`hinted` (Inductor's picks) and `oracle` (the fastest measured variant forced at every site)."""


@dataclass(frozen=True)
class Baseline:
    """The whole model at one shape without size-hint dispatch (or with it, for reference):
    `eager`, `static` (compiled for exactly this shape), `exact_hint` (one hint: this size)
    or `hinted` (the session's own hints), each compiled afresh in a process of its own."""

    sizes: Mapping[str, int]
    kind: str
    wall_us: float | None = None
    """Median whole-call time by CUDA events (includes launch overhead)."""
    gpu_us: float | None = None
    """Median per call of the summed CUPTI kernel durations."""
    error: str | None = None
    inspected: bool = False
    """Timed on the inspected compile in kinspect's process (`hinted`, `oracle`), not
    compiled afresh; sessions from before `kinspect compare` have none."""

    @property
    def label(self) -> str:
        """The kind as tables name it: the inspected compile's kinds say so."""
        return f"{self.kind} (this compile)" if self.inspected else self.kind


@dataclass(frozen=True)
class Recompile:
    """The same model compiled again in a fresh process (fresh caches), and every variant of
    every site timed at a set of sizes: autotuning differs between compiles, so one
    compile's figures carry the spread of several (`kinspect compare --compiles N`), and a
    proposed hint set is checked by compiling it (`kinspect advise`)."""

    hints: tuple[int, ...]
    purpose: str
    """`variance` (the session's own hints again) or `verify` (a hint set `advise` checks)."""
    variants: Mapping[str, tuple[tuple[int | None, str], ...]]
    """Per site, each variant's hint and kernel identity (its source hash, else its name),
    in variant order: which config each hint's autotuning emitted in that compile."""
    measurements: tuple[Measurement, ...] = ()
    error: str | None = None
    """Why the compile or its timings failed, when they did."""


RECOMPILE_PURPOSES = ("variance", "verify")


@dataclass(frozen=True)
class Sweep:
    """Sizes at which every variant of every site was timed, to map dispatch quality
    across the shape space (`kinspect sweep`); the timings are ordinary measurements."""

    ranges: Mapping[str, tuple[int, int]]
    """Each swept size (the user's name) and its range, inclusive."""
    points: tuple[Mapping[str, int], ...]
    """The sizes measured, in the order they were: grid points, decision boundaries on
    both sides, the workload's sizes."""
    skipped: tuple[tuple[Mapping[str, int], str], ...] = ()
    """Sizes that were not measured, and why (too large for memory, cancelled)."""
