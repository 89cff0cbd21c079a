"""Where each config's time goes inside Inductor's autotune subprocess.

benchmarks/repeated_layers.py hands the child `timed` (with the config's own benchmark
request) in place of the request's bound `benchmark`; the child unpickles the job, which
imports this module there, and writes one JSON line per config: how long the job waited
in the pipe, and the child's wall and CPU time split into building the benchmark tensors,
loading the kernel's module and timing it, with the GPU memory free and cached around it.
The parent's profile shows only a wait per config; this says what the child did with it.

A config whose kernel the child had to compile leaves new entries in Triton's cache; for
the first few, the entry is compared with any other entry of the same Triton IR (one the
parent's precompile made), and the compile options that differ are written down: those are
why the child could not reuse it.
"""

from __future__ import annotations

import functools
import json
import os
import re
import time
from typing import Any


def _timer(clock: dict[str, float], label: str, fn: Any) -> Any:
    @functools.wraps(fn)
    def wrapped(*a: Any, **k: Any) -> Any:
        import torch

        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            torch.cuda.synchronize()
            clock[label] = clock.get(label, 0.0) + time.perf_counter() - t

    return wrapped


_TWINS_LEFT = [3]


def _entries(cache: str | None) -> set[str]:
    return set(os.listdir(cache)) if cache and os.path.isdir(cache) else set()


def _ir(cache: str, entry: str) -> tuple[str | None, dict]:
    """An entry's Triton IR without its source locations (which name the file compiled), and its metadata."""
    folder = os.path.join(cache, entry)
    ir, meta = None, {}
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if name.endswith(".ttir"):
            with open(path) as f:
                ir = re.sub(r"\s*loc\([^()]*(\([^()]*\))?[^()]*\)", "", f.read())
                ir = "\n".join(line for line in ir.splitlines() if not line.startswith("#loc"))
        elif name.endswith(".json") and not name.startswith("__grp__"):
            with open(path) as f:
                meta = json.load(f)
    return ir, meta


def _twin(cache: str, new: set[str]) -> dict[str, Any]:
    """The options that differ between the child's compile and an earlier one of the same IR,
    looked for in the child's cache directory and the compile's first one (the benchmark's)."""
    mine = [(e, *_ir(cache, e)) for e in new]
    mine = [m for m in mine if m[1]]
    if not mine:
        return {"twin": "no Triton IR in the new entries"}
    entry, ir, meta = mine[0]
    first = os.environ.get("REPEATED_LAYERS_FIRST_TRITON_DIR")
    for folder, entries in ((cache, _entries(cache) - new), (first, _entries(first) if first != cache else set())):
        for other in entries:
            their_ir, theirs = _ir(folder, other)
            if their_ir == ir:
                keys = sorted(set(meta) | set(theirs))
                return {"twin": os.path.join(folder, other), "differs": {
                    k: [meta.get(k), theirs.get(k)] for k in keys if meta.get(k) != theirs.get(k)}}
    return {"twin": None, "name": meta.get("name")}


def timed(bmreq: Any, log_path: str, sent_at: float, parent: dict[str, float]) -> float:
    """Run the request's own `benchmark`, its three steps each under a clock."""
    import torch
    from torch._inductor import autotune_process as ap

    started = time.time()
    free, _ = torch.cuda.mem_get_info()
    record: dict[str, Any] = {
        "kernel": bmreq.kernel_name, "pid": os.getpid(), "queued_s": round(started - sent_at, 4),
        "inputs": [list(m.sizes) for m in bmreq.input_tensor_meta], "out": list(bmreq.output_tensor_meta.sizes),
        "free_gb": round(free / 2**30, 2), "cached_gb": round(torch.cuda.memory_reserved() / 2**30, 2), **parent,
    }
    clock: dict[str, float] = {}
    cls = type(bmreq)
    patched = [(ap.TensorMeta, "to_tensor", "tensors_s"), (cls, "make_run_fn", "load_s"), (cls, "do_bench", "time_s")]
    saved = [(owner, name, owner.__dict__.get(name)) for owner, name, _ in patched]
    for owner, name, label in patched:
        setattr(owner, name, _timer(clock, label, getattr(owner, name)))
    cache = os.environ.get("TRITON_CACHE_DIR")
    before = _entries(cache)
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        result = bmreq.benchmark()
        record["ms"] = result
        return result
    except Exception as e:
        record["error"] = f"{type(e).__name__}: {str(e)[:200]}"
        raise
    finally:
        for owner, name, fn in saved:
            if fn is None:
                delattr(owner, name)
            else:
                setattr(owner, name, fn)
        record.update({k: round(v, 4) for k, v in clock.items()})
        record["wall_s"] = round(time.perf_counter() - wall, 4)
        record["cpu_s"] = round(time.process_time() - cpu, 4)
        record["cached_after_gb"] = round(torch.cuda.memory_reserved() / 2**30, 2)
        new = _entries(cache) - before
        record["compiled_here"] = len(new)
        if new and _TWINS_LEFT[0] > 0:
            _TWINS_LEFT[0] -= 1
            record["cache_dir"] = cache
            record["env"] = {k: v for k, v in os.environ.items() if k.startswith("TRITON_")}
            record.update(_twin(cache, new))
        with open(log_path, "a") as f:
            f.write(json.dumps(record) + "\n")


def summary(log_path: str) -> str:
    """One line for a compile's child log: the totals, then the three largest output sizes' share."""
    try:
        with open(log_path) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    except OSError:
        return "autotune child: no log (nothing was benchmarked in a subprocess)"
    if not rows:
        return "autotune child: no configs"

    def total(key: str, of: list[dict] = rows) -> float:
        return sum(r.get(key) or 0.0 for r in of)

    by_rows: dict[int, list[dict]] = {}
    for r in rows:
        by_rows.setdefault(r["out"][0] if r["out"] else 0, []).append(r)
    sizes = sorted(by_rows.items(), key=lambda kv: -sum(r["wall_s"] for r in kv[1]))[:3]
    parts = ", ".join(f"{m} rows: {len(rs)} configs {total('wall_s', rs):.1f} s (tensors {total('tensors_s', rs):.1f}, "
                      f"load {total('load_s', rs):.1f}, timing {total('time_s', rs):.1f})" for m, rs in sizes)
    errors = sum("error" in r for r in rows)
    compiled = [r for r in rows if r.get("compiled_here")]
    low = min(r["free_gb"] for r in rows)
    return (f"autotune child: {len(rows)} configs, {total('wall_s'):.1f} s wall ({total('cpu_s'):.1f} s CPU): tensors "
            f"{total('tensors_s'):.1f} s, load {total('load_s'):.1f} s, timing {total('time_s'):.1f} s; in the pipe "
            f"{total('queued_s'):.1f} s; {errors} failed; compiled in the child {len(compiled)} ({total('wall_s', compiled):.1f} s); least GPU memory free {low:.1f} GiB; by size: {parts}")
