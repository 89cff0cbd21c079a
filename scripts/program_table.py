"""The real-program set as tests/gpu/test_gpu_programs.py left it in a directory: per
program, stock against kinspect's fixes (`--one-size-per-symbol --fusion-per-hint`; `timed`
with `--autotune-device-time` beside them), whether it recorded (or kinspect's line saying
why not), its sites and dispatches, whether every
pick was Inductor's, the dispatch quality over the keys it ran (pick over fastest variant,
whole model and worst site; one compile each, timed while other programs compiled on the
same GPU), and how many variants run a choice autotuned at an earlier hint.

    python scripts/program_table.py DIR [DIR ...]

Several directories (two device calls' programs.tgz unpacked, say) are read as one: a
program's stock row from one and its fixed row from another.
"""

import json
import sys
from pathlib import Path

from kinspect.core.quality.findings import earlier_hints_choices
from kinspect.core.printing import say
from kinspect.core.quality.overview import model_quality
from kinspect.core.store import load


def row(d: Path, name: str, mode: str) -> str:
    session, stderr = d / f"{name}.{mode}.session.json", d / f"{name}.{mode}.stderr.txt"
    said = [line for line in stderr.read_text().splitlines() if line.startswith("kinspect:")] if stderr.exists() else []
    if not session.exists():
        return f"{name:18} {mode:6} no session: {said[-1][:150] if said else 'did not run'}"
    s = load(session)
    picks = d / f"{name}.{mode}.picks.jsonl"
    logged = [json.loads(line) for line in picks.read_text().splitlines()] if picks.exists() else []
    events = sorted(s.events, key=lambda e: e.seq)
    agree = [(list(map(list, e.key)), e.picked) for e in events] == [(k, p) for _, k, p in logged]
    q = model_quality(s)
    worst = q.worst_site
    quality = (f"x{q.geomean_regret:.2f} geomean over {q.shapes} site-keys, worst site x{worst.geomean_regret:.2f}"
               if q.shapes and worst is not None else "not measured")
    kinds = sorted({f.kind for f in s.findings if f.severity != "info"})
    borrowed = sum(len(earlier_hints_choices(site)) for site in s.sites)
    variants = sum(len(site.variants) for site in s.sites)
    return (f"{name:18} {mode:6} {len(s.sites):3} sites {len(s.events):5} dispatches, picks {'= Inductor' if agree else 'DIFFER'}"
            f", {quality}; {borrowed}/{variants} variants run an earlier hint's choice; "
            f"{', '.join(kinds) or 'no warnings'}")


dirs = [Path(a) for a in sys.argv[1:]]
names = sorted({p.name.split(".")[0] for d in dirs for p in d.glob("*.stderr.txt")})
for name in names:
    for mode in ("stock", "fixed", "timed"):
        for d in dirs:
            if (d / f"{name}.{mode}.stderr.txt").exists():
                say(row(d, name, mode))  # a program's own stderr line, escaped
