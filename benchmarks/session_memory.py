"""Peak memory of opening a large session, against its file's size: loading a session of
N bytes must peak below 2N of RAM (a 1 GiB session took 4.9 GB before), and the Perfetto
export of it streams (it was built as one string).

For each size it writes a session file of that size (a synthetic session's three sites,
then dispatch events until the file is large enough: a long recording's file is almost
all event columns), then in a process of its own, as a user runs it, measures the peak
resident memory of `load` (what every command does first) and of `kinspect export
--format perfetto`; it prints each peak against the file's size, both whole and less what
the same process held before, once it had done the same with a small file of the same
kind (Python, numpy, sympy and every module of kinspect the command uses loaded: some 70
MiB that a 10 MB file cannot be measured against). `--log` does the same for a
recording log (`.jsonl`) of those events.

Usage: python benchmarks/session_memory.py [--sizes 10,100] [--gib] [--log] [--dir DIR]
(`--gib` adds the 1 GiB case, its load only: some minutes and 2 GB of disk.)
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kinspect.core.session.format.document import dumps, session_to_json  # noqa: E402
from kinspect.core.session.format.log import LiveLog  # noqa: E402
from tests.synthetic import synthetic_session  # noqa: E402

TARGET = 2.0
"""Peak resident memory over the file's size."""
MiB = 1 << 20

_PEAK = """
import sys
sys.path.insert(0, {repo!r})
from kinspect.core.store import load
from kinspect import cli
import numpy, sympy, time
def peak():  # this process's own high-water mark (ru_maxrss counts the parent's, from before the exec)
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
def run(path, out):
    if sys.argv[1] == "load":
        return len(load(path).events)
    cli.main(["export", path, "--format", "perfetto", "-o", out])
    return 0
run(sys.argv[4], sys.argv[3])  # a small file of the same kind first: every module a run uses is loaded
before = peak()
start = time.perf_counter()
n = run(sys.argv[2], sys.argv[3])
print(before, peak(), n, time.perf_counter() - start)
"""

def write_session(path: Path, size: int, seed: int = 0) -> int:
    """A session file of about `size` bytes; returns its events."""
    base = synthetic_session(sites=3, variants=3, events=0, seed=seed)
    doc = session_to_json(base)
    keys = [site.runtime_key({"s0": b, "s1": 64}) for site in base.sites for b in range(1, 2049)]
    doc["keys"] = [[list(t) for t in k] for k in keys]
    head = dumps({k: v for k, v in doc.items() if k != "events"})
    per_event = 54  # bytes an event takes in the columns, about
    n = max(1, (size - len(head)) // per_event)
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as f:
        f.write(head[:-2] + ',\n"events":{\n')
        columns = ("seq", "site", "key", "picked", "predicted", "hit", "step", "t_ns", "override", "call_site")
        for c, name in enumerate(columns):
            f.write(f'"{name}":[')
            for start in range(0, n, 1 << 16):
                part = range(start, min(n, start + (1 << 16)))
                if name == "seq":
                    values = map(str, part)
                elif name == "site":
                    values = (str(i % 3) for i in part)
                elif name == "key":
                    values = (str((i % 3) * 2048 + rng.randrange(2048)) for i in part)
                elif name in ("picked", "predicted"):
                    values = ("0" for _ in part)
                elif name == "hit":
                    values = ("true" if i > 6144 else "false" for i in part)
                elif name == "step":
                    values = (str(i // 3) for i in part)
                elif name == "t_ns":
                    values = (str(1_000_000_000 + 3517 * i) for i in part)
                else:
                    values = ("null" for _ in part)
                f.write(("," if start else "") + ",".join(values))
            f.write("]" + (",\n" if c < len(columns) - 1 else "\n"))
        f.write("}}\n")
    return n


def write_log(path: Path, events: int, seed: int = 0) -> None:
    """A recording log of `events` dispatches, as a long `kinspect run` leaves it."""
    base = synthetic_session(sites=3, variants=3, events=0, seed=seed)
    log = LiveLog(path, base)
    for g in base.graphs:
        log.graph(g)
    for i, site in enumerate(base.sites):
        log.site(site)
        log.runtime_site(i, site.name)
    rng = random.Random(seed)
    keys = [site.runtime_key({"s0": b, "s1": 64}) for site in base.sites for b in range(1, 2049)]
    lines = []
    for k, key in enumerate(keys):
        log._write(b'{"type":"key","id":%d,"key":"%a"}\n' % (k, key))
    for i in range(events):
        k = (i % 3) * 2048 + rng.randrange(2048)
        lines.append(b'["d",%d,%d,0,%s,null,null,%d]\n' % (i % 3, k, b"true" if i > 6144 else b"false", 1000 * i))
        if len(lines) == 4096:
            log._write(b"".join(lines))
            lines = []
    log._write(b"".join(lines))
    log.close()


def peak(what: str, path: Path, small: Path, out: Path | None = None) -> tuple[int, int, int, float]:
    done = subprocess.run([sys.executable, "-c", _PEAK.format(repo=str(REPO)), what, str(path), str(out or os.devnull),
                           str(small)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{what} {path} failed:\n{done.stderr[-2000:]}")
    before, after, n, took = done.stdout.split()[-4:]
    return int(before), int(after), int(n), float(took)


def report(name: str, size: int, before: int, after: int, took: float) -> None:
    whole, net = after / size, (after - before) / size
    print(f"  {name}: peak RSS {after / MiB:,.0f} MiB = {whole:.2f} x the file ({net:.2f} x beyond the "
          f"{before / MiB:.0f} MiB of a process that has opened a small one), {took:.1f} s; "
          f"target below {TARGET:.0f} x: "
          f"{'met' if whole < TARGET else 'met beyond the start' if net < TARGET else 'NOT met'}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="10,100", help="session sizes in MB, comma-separated")
    p.add_argument("--gib", action="store_true", help="add the 1 GiB session")
    p.add_argument("--log", action="store_true", help="measure a recording log of the same events too")
    p.add_argument("--dir", help="where to write the files (default: a temporary folder, removed after)")
    a = p.parse_args()
    sizes = [int(x) * 1_000_000 for x in a.sizes.split(",") if x] + ([(1 << 30) - (8 << 20)] if a.gib else [])
    with tempfile.TemporaryDirectory(dir=a.dir) as tmp:
        small_session, small_log = Path(tmp) / "small.session.json", Path(tmp) / "small.session.jsonl"
        write_session(small_session, 200_000, seed=1)
        write_log(small_log, 1000, seed=1)
        for size in sizes:
            path = Path(tmp) / f"s{size}.session.json"
            n = write_session(path, size)
            actual = path.stat().st_size
            print(f"session of {actual / MiB:,.1f} MiB ({n:,} events)")
            before, after, loaded, took = peak("load", path, small_session)
            assert loaded == n, (loaded, n)
            report("load", actual, before, after, took)
            if size < 1 << 29:  # the 1 GiB session's trace would be some 10 GB
                before, after, _, took = peak("export", path, small_session, Path(tmp) / "trace.json")
                report("export --format perfetto", actual, before, after, took)
                os.unlink(Path(tmp) / "trace.json")
            os.unlink(path)
            if a.log:
                log = Path(tmp) / f"s{size}.session.jsonl"
                write_log(log, n)
                actual = log.stat().st_size
                print(f"log of {actual / MiB:,.1f} MiB ({n:,} events)")
                before, after, loaded, took = peak("load", log, small_log)
                report("load", actual, before, after, took)
                os.unlink(log)


if __name__ == "__main__":
    main()
