"""Replay on 100,000 events: building the cursor, stepping, and breakpoint scans.

For each breakpoint it times evaluating every event (the worst case of a `continue`
that finds nothing) and a real `continue` from the start and `reverse` from the end,
which stop at the first hit; the inspector needs scans well under 100 ms to feel
instant.

Run: python benchmarks/replay_speed.py [EVENTS]
"""

from __future__ import annotations

import sys

from bigsession import big_session
from timing import best_of

from kinspect.core.debugger.breakpoints import Breakpoint
from kinspect.core.debugger.replay import Replay
from kinspect.core.debugger.timeline import Timeline

SCANS = [
    ("miss (structured)", lambda ctx: Breakpoint.on_miss(ctx)),
    ("not fastest (structured)", lambda ctx: Breakpoint.on_not_fastest(ctx)),
    ("B > 100000", lambda ctx: Breakpoint.when("B > 100000", ctx)),
    ('site == "multi_kernel_1" and B > 100000', lambda ctx: Breakpoint.when('site == "multi_kernel_1" and B > 100000', ctx)),
    ("not hit and picked != fastest", lambda ctx: Breakpoint.when("not hit and picked != fastest", ctx)),
    ("B >= 100000 or s0 in (77, 3) or t1d1 == 5", lambda ctx: Breakpoint.when("B >= 100000 or s0 in (77, 3) or t1d1 == 5", ctx)),
    ("override != null and regret > 1.2", lambda ctx: Breakpoint.when("override != null and regret > 1.2", ctx)),
]


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    session = big_session(n)
    build, r = best_of(3, lambda: Replay(session))
    print(f"{n} events; cursor built in {build * 1e3:.1f} ms")

    def walk_forward() -> None:
        r.restart()
        while r.step() is not None:
            pass

    def walk_back() -> None:
        r.last()
        while r.back() is not None:
            pass

    fwd, _ = best_of(1, walk_forward)
    back, _ = best_of(1, walk_back)
    print(f"step forward  {fwd / n * 1e6:.2f} us/step    back  {back / n * 1e6:.2f} us/step")
    r.first()
    site_step, _ = best_of(1, lambda: [r.step(site="multi_kernel_1") for _ in range(1000)])
    print(f"step within a site  {site_step / 1000 * 1e6:.2f} us/step")

    worst = 0.0
    for label, make in SCANS:
        bp = make(r.ctx)
        r.set_breakpoints([bp])
        pred = bp.predicate(r.ctx)
        full, hits = best_of(5, lambda: sum(map(pred, session.events)))

        def forward() -> object:
            r.restart()
            return r.cont()

        def backward() -> object:
            r.last()
            return r.reverse()

        f, hit_f = best_of(5, forward)
        b, hit_b = best_of(5, backward)
        worst = max(worst, full, f, b)
        print(f"{label:44s} all events {full * 1e3:5.1f} ms ({hits} hits)  "
              f"continue {f * 1e3:5.1f} ms (to {hit_f})  reverse {b * 1e3:5.1f} ms (to {hit_b})")

    tl, t = best_of(3, lambda: Timeline(session))
    cells, _ = best_of(5, lambda: [t.cells(s, 160) for s in t.sites])
    print(f"timeline built in {tl * 1e3:.1f} ms ({sum(len(v) for v in t.spans.values())} spans); "
          f"160-column rows for {len(t.sites)} sites in {cells * 1e3:.1f} ms")
    print(f"slowest scan {worst * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
