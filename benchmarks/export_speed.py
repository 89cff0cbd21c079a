"""Exporting 100,000 dispatch events to each format; target: under 2 s each.

Run: python benchmarks/export_speed.py [EVENTS]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from bigsession import big_session

from kinspect.core.export import FORMATS, export

TARGET_S = 2.0


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    t = time.perf_counter()
    session = big_session(n)
    print(f"built {n} events in {time.perf_counter() - t:.2f} s")
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in FORMATS:
            out = Path(tmp) / f"export.{fmt}"
            t = time.perf_counter()
            export(session, fmt, out)
            took = time.perf_counter() - t
            worst = max(worst, took)
            size = out.stat().st_size / 1e6
            verdict = "ok" if took < TARGET_S else f"SLOWER than {TARGET_S:.0f} s"
            print(f"{fmt:9s} {took:6.3f} s  {size:7.1f} MB  {verdict}")
    return 0 if worst < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
