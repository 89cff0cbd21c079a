"""The model compiled again in a process of its own, every variant timed at given sizes.

Autotuning differs between compiles, so kinspect compiles the same hints again to see the
spread (`compare --compiles N`) and compiles a proposed hint set to check a prediction
(`advise`). A fresh process is a fresh compile: Dynamo's per-code-object caches, Inductor's
in-memory autotuning state and the kinspect process's inspected compile stay apart, as for
the baselines (`kinspect.inductor.timing.baseline`). The child is the ordinary live pipeline
(compile, `measure` at each size, `save`); the parent reads the session file it wrote,
which is data: loading it executes nothing.

    python -m kinspect.inductor.jobs.recompile MODEL.py 64,256,4096 OUT.session.json '[{"B": 1000}]'
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from kinspect.core.errors import KinspectError
from kinspect.core.numbers import seconds
from kinspect.core.session.compile_changes import CompileChanges
from kinspect.core.session.runtime import Recompile
from kinspect.core.session.model import Session
from kinspect.core.quality.variance import variants_of

_TIMEOUT_S = 1800


def recompile(model: str | Path, hints: Sequence[int], sizes: Sequence[Mapping[str, int]], purpose: str,
              workdir: str | Path, progress: Callable[[str], None], timeout: float = _TIMEOUT_S,
              changes: CompileChanges = CompileChanges()) -> Recompile:
    """Compile `model` with `hints` in a child process and time every variant at `sizes`."""
    return compile_afresh(model, hints, sizes, purpose, workdir, progress, timeout, changes)[0]


def compile_afresh(model: str | Path, hints: Sequence[int], sizes: Sequence[Mapping[str, int]], purpose: str,
                   workdir: str | Path, progress: Callable[[str], None], timeout: float = _TIMEOUT_S,
                   changes: CompileChanges = CompileChanges()) -> tuple[Recompile, Session | None]:
    """`recompile`, with the child's whole session where it wrote one: its sites and
    dispatches say which keys that compile's own kernels saw at each size (a fresh compile
    may lower a GEMM with other arguments, so its keys need not be the inspected one's)."""
    from kinspect.core.store import load

    out = Path(workdir) / f"recompile-{os.getpid()}-{time.monotonic_ns()}.session.json"
    cmd = [sys.executable, "-m", "kinspect.inductor.jobs.recompile", str(model), ",".join(map(str, hints)), str(out),
           json.dumps([dict(s) for s in sizes]), *changes.flags()]
    started = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
    except subprocess.TimeoutExpired:
        tail = f"took longer than {timeout:.0f} s"
    took = time.perf_counter() - started
    if not out.exists():
        progress(f"  the compile with hints {list(hints)} failed after {seconds(took)}: {tail}")
        return Recompile(tuple(hints), purpose, {}, (), f"compile process failed: {tail}"), None
    try:
        session = load(out)
    except KinspectError as e:
        return Recompile(tuple(hints), purpose, {}, (), f"its session did not load: {e}"), None
    finally:
        out.unlink(missing_ok=True)
        out.with_suffix(".jsonl").unlink(missing_ok=True)
    progress(f"  compiled with hints {list(hints)} and timed {len(sizes)} sizes in {seconds(took)} (fresh process)")
    return Recompile(tuple(hints), purpose, variants_of(session), tuple(session.measurements)), session


def _child(model: str, hints: list[int], out: str, sizes: list[dict[str, int]], changes: CompileChanges) -> None:
    from kinspect.inductor.launch.modelfile import load_model_file
    from kinspect.inductor.recording.pipeline import LivePipeline, Options

    def say(text: str) -> None:
        print(f"kinspect (fresh compile): {text}", file=sys.stderr, flush=True)

    mf = load_model_file(model)
    with LivePipeline(mf, Options(hints=hints, progress=say, changes=changes)) as live:
        live.compile()
        for point in sizes:
            try:
                live.measure(point)
            except KinspectError as e:  # a size too large for memory: that size only
                say(f"skipped {point}: {e}")
        live.save(out)


def _main(argv: Sequence[str]) -> int:
    changes, argv = CompileChanges.from_flags(argv)
    if len(argv) != 4:
        print("usage: python -m kinspect.inductor.jobs.recompile MODEL.py HINTS OUT.json SIZES_JSON", file=sys.stderr)
        return 2
    model, hints_text, out, sizes_text = argv
    sizes = json.loads(sizes_text)
    if not isinstance(sizes, list) or not all(
            isinstance(s, dict) and all(isinstance(k, str) and type(v) is int for k, v in s.items()) for s in sizes):
        print("SIZES_JSON is a list of {name: int}", file=sys.stderr)
        return 2
    try:
        _child(model, [int(h) for h in hints_text.split(",") if h], out, sizes, changes)
    except KinspectError as e:
        print(f"kinspect: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
