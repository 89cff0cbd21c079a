"""Baselines for one shape: what the model costs without size-hint dispatch.

Three references a user compares the hinted compile against, and the hinted compile itself
timed the same way (whole-model figures, so all four are comparable):
- `eager`: the model run by PyTorch's eager mode;
- `static`: a max-autotune compile specialised to exactly this shape (no hints);
- `exact_hint`: the size-hint compile with a single hint equal to this shape's size, the
  "ground-truth hint" of the PR that introduced size-hint dispatch (with two dynamic sizes,
  both values are the hints);
- `hinted`: kinspect's own configuration, the model's hints, compiled afresh.

Each runs in a subprocess of its own: Dynamo's caches are per code object, so a second
compile of the same model in the kinspect process would share cache entries with the
hinted compile under inspection and could change which code later calls take. A
subprocess also keeps a crash or an out-of-memory in a baseline from touching the session.
The child prints one JSON line; nothing from it is executed by the parent.

    python -m kinspect.inductor.timing.baseline MODEL.py KIND 64,256,4096 B=1000
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from kinspect.core.errors import KinspectError
from kinspect.core.session.runtime import BASELINE_KINDS
_TIMEOUT_S = 900


def run_baseline(model: str, kind: str, sizes: Mapping[str, int], hints: Sequence[int],
                 timeout: float = _TIMEOUT_S) -> dict[str, Any]:
    """Run one baseline in a child process; returns {kind, wall_us, gpu_us, kernels} or {kind, error}."""
    if kind not in BASELINE_KINDS:
        raise KinspectError(f"unknown baseline {kind!r}; known: {', '.join(BASELINE_KINDS)}")
    cmd = [sys.executable, "-m", "kinspect.inductor.timing.baseline", str(model), kind,
           ",".join(str(h) for h in hints), *(f"{k}={v}" for k, v in sizes.items())]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
    except subprocess.TimeoutExpired:
        return {"kind": kind, "error": f"took longer than {timeout:.0f} s"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("{"):
            try:
                result = json.loads(line)
            except json.JSONDecodeError:
                break
            if isinstance(result, dict) and result.get("kind") == kind:
                return _clean(result, kind)
            break
    tail = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
    return {"kind": kind, "error": f"baseline process failed: {tail}"}


def _clean(result: dict[str, Any], kind: str) -> dict[str, Any]:
    """Keep only the fields and types a baseline has: the child's output is data."""
    out: dict[str, Any] = {"kind": kind}
    for name in ("wall_us", "gpu_us"):
        v = result.get(name)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[name] = float(v)
    if isinstance(result.get("error"), str):
        out["error"] = result["error"][:500]
    return out


# ---------------------------------------------------------------- the child


def time_call(fn: Any, calls: int = 20) -> tuple[float, float]:
    """(median wall us per call by CUDA events, median summed CUPTI kernel us per call)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    walls = []
    for _ in range(calls):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        walls.append(start.elapsed_time(end) * 1000.0)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    gpu = sum(
        e.time_range.elapsed_us() for e in prof.events()
        if getattr(e, "device_type", None) is not None and e.device_type.name == "CUDA"
    )
    return statistics.median(walls), gpu / calls


def _child(model_path: str, kind: str, sizes: dict[str, int], hints: Sequence[int]) -> dict[str, Any]:
    import torch
    import torch._inductor.config as cfg

    from kinspect.inductor.launch.modelfile import distinct_examples, load_model_file
    from kinspect.inductor.launch.torchrun import from_environment

    rank = from_environment()
    if rank is not None:  # a rank's baseline runs on that rank's GPU, outside the job's process group
        torch.cuda.set_device(rank.local_rank)
    mf = load_model_file(model_path)
    full = {**distinct_examples(mf.examples), **sizes}
    model = mf.model
    if isinstance(model, torch.nn.Module):
        model = model.to("cuda").eval()
    with torch.device("cuda"):
        args = tuple(t.to("cuda") if isinstance(t, torch.Tensor) else t for t in mf.build(full))
    cfg.force_disable_caches = True
    if kind == "eager":
        fn = model
    else:
        cfg.max_autotune = True
        cfg.max_autotune_gemm_backends = "TRITON"
        if kind == "static":
            cfg.multi_kernel_hints = []
            fn = torch.compile(model, dynamic=False)
        else:
            dims = mf.dynamic_dims()
            values = {n: full[n] for d in dims for n in d.names}
            exact = sorted(set(values.values()))
            cfg.multi_kernel_hints = exact if kind == "exact_hint" and exact else list(hints)
            for d in dims:
                torch._dynamo.mark_dynamic(args[d.input], d.dim)
            fn = torch.compile(model)
    with torch.no_grad():
        wall, gpu = time_call(lambda: fn(*args))
    return {"kind": kind, "wall_us": round(wall, 3), "gpu_us": round(gpu, 3)}


def _main(argv: Sequence[str]) -> int:
    if len(argv) < 3:
        print("usage: python -m kinspect.inductor.timing.baseline MODEL.py KIND HINTS NAME=SIZE ...", file=sys.stderr)
        return 2
    model, kind, hints_text, *rest = argv
    hints = [int(h) for h in hints_text.split(",") if h]
    sizes = {}
    for item in rest:
        name, _, value = item.partition("=")
        sizes[name] = int(value)
    try:
        result = _child(model, kind, sizes, hints)
    except Exception as e:  # reported to the parent as data, one line
        result = {"kind": kind, "error": f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
