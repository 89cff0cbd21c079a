"""Opening large TORCH_TRACE logs: each figure against its target.

A production run's trace is hundreds of MB: most of it entries kinspect does not read
(chromium events, tensor descriptions, guards), some of it many compiles' output code (a
server that recompiles, several models). Two logs of about 300 MB are made from the mlp
fixture (tests/fixtures/traces/mlp, a real trace) in a temporary folder:

- "300 MB, one compile": the fixture's compile, then 300 MB of chromium events with their
  payloads, as a long run writes them: kinspect reads one graph and skips the rest;
- "300 MB, 1,600 compiles": the fixture's compile repeated under 1,600 frame ids, each
  with its own output code: 1,600 graphs and 3,200 sites read.

Each is opened as `kinspect open` does (`load`), in a process of its own, which reports its
time and how far opening raised its peak resident size (VmHWM) over an interpreter that has
imported kinspect: what the log costs. Run: `python benchmarks/trace_open.py` (Linux).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "traces" / "mlp" / "dedicated_log_torch_trace_fixture.log"
SIZE = 300 * 2**20

TARGETS = {"300 MB, one compile": (6.0, 100), "300 MB, 1,600 compiles": (60.0, 1500)}
"""Seconds and MB of memory to open each on the 2-core CI machine: a skipped entry costs
no memory, and a read graph about what its code and sites take in the session."""

PROBE = """
import sys, time
from kinspect.core.store import load

def peak_mb():  # the process's own peak (VmHWM): ru_maxrss would count its parent's from before exec
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024

before = peak_mb()
t = time.perf_counter()
s = load(sys.argv[1])
took = time.perf_counter() - t
print(took, peak_mb() - before, len(s.graphs), len(s.sites))
"""


def one_compile(folder: Path) -> Path:
    text = FIXTURE.read_text()
    event = 'V1204 17:13:38.327000 13463 torch/_dynamo/utils.py:2350] {"chromium_event": {}, "frame_id": 0, ' \
            '"frame_compile_id": 0, "attempt": 0, "has_payload": "0"}\n' + "".join(
                f'\t"{k}": "{k * 8}",\n' for k in ("name", "ts", "args", "fn_name", "compile_id", "ph", "cat", "tid"))
    path = folder / "dedicated_log_torch_trace_one.log"
    with open(path, "w") as f:
        f.write(text)
        f.write(event * ((SIZE - len(text)) // len(event)))
    return path


def many_compiles(folder: Path) -> Path:
    text = FIXTURE.read_text()
    path = folder / "dedicated_log_torch_trace_many.log"
    copies = SIZE // len(text)
    with open(path, "w") as f:
        for i in range(copies):
            f.write(re.sub(r'"frame_id": 0', f'"frame_id": {i}', text))
    return path


def opened(path: Path) -> tuple[float, float, int, int]:
    done = subprocess.run([sys.executable, "-c", PROBE, str(path)], cwd=ROOT, capture_output=True, text=True,
                          check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    took, grew, graphs, sites = done.stdout.split()
    return float(took), float(grew), int(graphs), int(sites)


def main() -> int:
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in (("300 MB, one compile", one_compile), ("300 MB, 1,600 compiles", many_compiles)):
            path = make(Path(tmp))
            size = path.stat().st_size
            took, grew, graphs, sites = opened(path)
            path.unlink()
            limit_s, limit_mb = TARGETS[name]
            ok = took <= limit_s and grew <= limit_mb
            failed += not ok
            print(json.dumps({"log": name, "MB": round(size / 2**20), "graphs": graphs, "sites": sites,
                              "seconds": round(took, 2), "target_s": limit_s, "memory_MB": round(grew),
                              "target_MB": limit_mb, "ok": ok}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
