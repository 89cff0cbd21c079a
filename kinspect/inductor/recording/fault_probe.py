"""Which hint and config really faulted, when a compile died of a CUDA error.

CUDA reports a fault at a later call than the one that made it: a config that faulted
while autotuning at hint 256 is reported while autotuning at 4096 (a timm ViT did that on
the H200). So the compile is rerun in a child process with launches made synchronous
(`CUDA_LAUNCH_BLOCKING=1`), where the fault raises in the launch that made it; the child
wraps `AlgorithmSelectorCache.benchmark_choice` to note the first choice that raised a
CUDA error, with the autotuning under way (site node, op, hint), and whether a benchmark
tensor of that template at that hint was shorter than its kernel reads (the known cause).
That misfit comes back whole, so the session and the reproducers hold it even where this
process died before autotuning at that hint.

This module is the parent's side; the child is `kinspect.inductor.jobs.fault_rerun`, which
prints one line: `FAULT {json}`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kinspect.core.errors import KinspectError
from kinspect.core.session.format.checks import MAX_RANK, MAX_TENSORS, a_list, a_string, an_object
from kinspect.core.session.format.benchmark_tensors import misfit_from_json, misfit_to_json
from kinspect.core.session.benchmark_tensors import Layout, TemplateMisfit
from kinspect.inductor.hooks.benchmark_tensors import Operand, Seen
from kinspect.inductor.hooks.capture import Autotuning

MARK = "FAULT "


@dataclass(frozen=True)
class Fault:
    hint: int | None
    node: str
    op: str
    config: str
    error: str
    misfit: str | None
    """The short benchmark tensor at that template and hint, in one sentence, if there was one."""
    seen: dict[str, Any] | None = None
    """That benchmark tensor's misfit as `seen_to_json` writes it."""

    def text(self) -> str:
        out = (f"rerun with CUDA_LAUNCH_BLOCKING=1, the fault is at hint {self.hint} while autotuning {self.op} "
               f"({self.node}), config {self.config or '?'}")
        if self.misfit:
            return out + f": {self.misfit}; --fit-benchmark-tensors fits it"
        return out + (": its benchmark tensors hold what the kernel reads there, so the cause is not a known one; "
                      "--fit-benchmark-tensors benchmarks each config in a child process, where a faulting one "
                      "is skipped")


def pin_down(model: str | Path, hints: Sequence[int], at: Autotuning, detail: str, fitted: bool,
             say: Callable[[str], None]) -> tuple[Autotuning, str, Seen | None]:
    """Where a compile that died of a CUDA error really faulted, the one-line error saying
    so, and the short benchmark tensor the rerun found there; unchanged inside the
    synchronous rerun itself."""
    if os.environ.get("CUDA_LAUNCH_BLOCKING") == "1":
        return at, detail, None
    say("the compile died of a CUDA error; rerunning it with synchronous launches to find the fault")
    fault = locate(model, hints)
    if fault is not None:
        seen = None
        if fault.seen is not None:
            try:
                seen = seen_from_json(fault.seen)
            except KinspectError:  # the rerun's own output; the line still names the fault
                seen = None
        return (Autotuning(fault.node, fault.op, fault.hint),
                detail + f" (reported while autotuning at {at.where}); " + fault.text(), seen)
    if not fitted:
        detail += "; --fit-benchmark-tensors gives Inductor's benchmark tensors the storage each kernel reads"
    return at, detail, None


def seen_to_json(seen: Seen, op: str) -> dict[str, Any]:
    return {"misfit": misfit_to_json(TemplateMisfit(seen.misfit, op, seen.inputs, seen.index, seen.fitted)),
            "operands": [{"base": list(o.base), "size": list(o.view.size), "stride": list(o.view.stride),
                          "offset": o.view.offset, "dtype": o.dtype} for o in seen.operands]}


def seen_from_json(d: Any) -> Seen:
    d = an_object(d, "fault.seen")
    t = misfit_from_json(d.get("misfit"), "fault.seen.misfit")
    operands = []
    for i, o in enumerate(a_list(d.get("operands", []), "fault.seen.operands", MAX_TENSORS)):
        o = an_object(o, f"fault.seen.operands[{i}]")
        texts = {k: tuple(a_string(v, f"fault.seen.operands[{i}].{k}")
                          for v in a_list(o.get(k), f"fault.seen.operands[{i}].{k}", MAX_RANK))
                 for k in ("base", "size", "stride")}
        operands.append(Operand(texts["base"], Layout(texts["size"], texts["stride"],
                                                      a_string(o.get("offset", "0"), f"fault.seen.operands[{i}].offset")),
                                a_string(o.get("dtype"), f"fault.seen.operands[{i}].dtype")))
    return Seen(t.inputs, t.index, t.misfit, t.fitted, tuple(operands))


def locate(model: str | Path, hints: Sequence[int], timeout: float = 1200) -> Fault | None:
    """The first faulting choice of a synchronous rerun, or None (it did not fault, or the
    rerun could not say)."""
    env = {**os.environ, "CUDA_LAUNCH_BLOCKING": "1"}
    try:
        done = subprocess.run([sys.executable, "-m", "kinspect.inductor.jobs.fault_rerun", str(model),
                               ",".join(map(str, hints))], env=env, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in done.stdout.splitlines():
        if line.startswith(MARK):
            with_none = json.loads(line[len(MARK):])
            return None if with_none is None else Fault(**with_none)
    return None
