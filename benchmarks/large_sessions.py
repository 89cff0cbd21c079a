"""Opening large legal sessions: each figure against its target.

A session within the format's limits can still be big: 300,000 measurements (a long
sweep: one variant timed per key, or a full sweep of 3 sites with every variant timed at
each of 100,000 keys and slow picks among them), a workload of 1,000,000 steps, a key
table of 1,000,000 keys, a job of 2**20 ranks. Each is written to a temporary folder and
opened as `kinspect open` does (`load`: read, checked and findings derived afresh; for
the ranks, two rank sessions merged and described); the two sweeps are also explained as
`kinspect explain FILE` does (its whole run, output to a null device).
Run: `python benchmarks/large_sessions.py`.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the repository, for tests.synthetic

from timing import best_of  # noqa: E402

from kinspect.core.ranks.merged import merge  # noqa: E402
from kinspect.core.session.format.document import dumps, session_to_json  # noqa: E402
from kinspect.core.session.runtime import Measurement  # noqa: E402
from kinspect.core.store import load  # noqa: E402
from tests.synthetic import synthetic_session  # noqa: E402

TARGETS_S = {"300k measurements": 10.0, "300k, every variant": 10.0, "1e6 workload steps": 3.0, "1e6 keys": 5.0,
             "world_size 2**20": 1.0}
"""Seconds to open each on the 2-core CI machine, against 1e6 events' 2 s."""


def documents() -> dict[str, list[dict]]:
    session = synthetic_session(sites=3, variants=3)
    base = session_to_json(session)
    m = session.measurements[0]
    session.measurements = [replace(m, key=(m.key[0], (b, *m.key[1][1:]), *m.key[2:]), variant=b % 3)
                            for b in range(2, 300_002)]
    many = session_to_json(session)
    steps = copy.deepcopy(base)
    steps["model"]["workload"] = [{"B": i % 5000 + 2} for i in range(1_000_000)]
    keys = copy.deepcopy(base)
    keys["keys"] = [[[i, 64]] for i in range(1_000_000)]
    ranks = []
    for rank in (0, 1):
        r = copy.deepcopy(base)
        r["environment"].update(rank=rank, world_size=2**20, local_rank=rank)
        ranks.append(r)
    return {"300k measurements": [many], "300k, every variant": [full_sweep()], "1e6 workload steps": [steps],
            "1e6 keys": [keys], "world_size 2**20": ranks}


def full_sweep() -> dict:
    """Every variant of every site timed at each of 100,000 keys (B from 2), each variant
    fastest over bands of B of its own, so that Inductor's pick is slower beyond noise at some."""
    session = synthetic_session(sites=3, variants=3)
    session.measurements = []
    per_site = 100_000 // len(session.sites)
    for site in session.sites:
        for b in range(2, 2 + per_site):
            key = site.runtime_key({"s0": b, "s1": 64})
            for v in site.variants:
                us = round(10.0 + (b % 97) * (1.0 + 0.3 * ((v.index + b // 500) % 3)), 3)
                session.measurements.append(Measurement(site.name, key, v.index, "cupti", us, round(us * 0.99, 3),
                                                        round(us * 1.01, 3), 50))
    return session_to_json(session)


def main() -> None:
    # On a shared machine the wall time follows the others' load; the CPU time less so.
    print("load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    with tempfile.TemporaryDirectory() as tmp:
        for name, docs in documents().items():
            paths = []
            for i, doc in enumerate(docs):
                path = Path(tmp) / f"big{i}.session.json"
                path.write_text(dumps(doc), encoding="utf-8")
                paths.append(path)

            def open_it() -> object:
                sessions = [load(p) for p in paths]
                if len(sessions) == 1:
                    return sessions[0]
                merged = merge(sessions, [str(p) for p in paths])
                return merged.describe_ranks()

            cpu = time.process_time()
            took, _ = best_of(1, open_it)
            cpu = time.process_time() - cpu
            size = sum(p.stat().st_size for p in paths) / 1e6
            verdict = "ok" if took <= TARGETS_S[name] else "OVER"
            print(f"{name:20} {size:6.1f} MB  open {took:6.2f} s (CPU {cpu:6.2f} s)  target {TARGETS_S[name]:4.1f} s  {verdict}")
            if name.startswith("300k"):
                before = os.times()
                took, _ = best_of(1, lambda: _explain(paths[0]))
                after = os.times()
                cpu = after.children_user + after.children_system - before.children_user - before.children_system
                verdict = "ok" if took <= TARGETS_S[name] else "OVER"
                print(f"{name:20} {size:6.1f} MB  explain {took:6.2f} s (CPU {cpu:6.2f} s)  target "
                      f"{TARGETS_S[name]:4.1f} s  {verdict}")


def _explain(path: Path) -> int:
    """`kinspect explain FILE` in a process of its own, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "kinspect", "explain", str(path)], stdout=subprocess.DEVNULL,
                          check=True, env={**os.environ, "PYTHONPATH": str(ROOT)}).returncode


if __name__ == "__main__":
    main()
