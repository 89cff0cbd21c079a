"""Print a short table of recorded sessions: sites and call sites, sweeps, findings, and the
dispatch quality over the measured shapes (one line per site)."""

import sys
from collections import Counter

from kinspect.core.quality.overview import model_quality
from kinspect.core.store import load

for path in sys.argv[1:]:
    s = load(path)
    calls = sum(len(x.call_sites) for x in s.sites)
    swept = sum(len(w.points) for w in s.sweeps)
    kinds = Counter(f.kind for f in s.findings)
    print(f"{path}: {s.environment.gpu}, torch {s.environment.torch}, {len(s.sites)} sites, {calls} call sites, "
          f"{len(s.events)} dispatches, {swept} swept sizes, findings {dict(kinds)}")
    q = model_quality(s)
    for sq in q.sites:
        if not sq.points:
            continue
        w = sq.worst
        where = " ".join(f"{k}={v}" for k, v in w.sizes.items())
        lost = f"{100 * sq.workload_lost:.0f}%" if sq.workload_lost is not None else "-"
        print(f"  {sq.site}: {sq.shapes} shapes, fastest picked {100 * sq.fastest_picked:.0f}%, "
              f"geomean x{sq.geomean_regret:.2f}, worst x{w.regret:.2f} at {where}, workload lost {lost}")
    if q.shapes:
        print(f"  whole model: {q.shapes} shapes, fastest picked {100 * q.fastest_picked:.0f}%, "
              f"geomean x{q.geomean_regret:.2f} (one compile)")
