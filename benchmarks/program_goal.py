"""The real-program set's dispatch goal, against its target, from the sessions a GPU run
saved: per session, Inductor's pick over the fastest variant at every key the program ran,
the geometric mean over the whole model (target x1.05 or less) and the worst site's (x1.15 or
less). A session of one hint has one variant per site, nothing to pick among: it is listed,
not counted. Each figure is one compile. A miss names the findings at its worst site that
say why a pick cannot be fast there (`runs-far-from-hints`: no variant tuned near the sizes it
ran; `autotune-timed-overhead`: its configs ranked on more than the kernel; `equally-near`:
Inductor's rule broke a tie between variants toward the slower; `hint-at-examples`: a hint of
its graph was tuned at the example sizes, not near the hint).

    python benchmarks/program_goal.py SESSION.json|DIR [...]

A directory is read for its `*.session.json` (a device run's programs.tgz unpacked, or
advise's verification sessions).
"""

from __future__ import annotations

import sys
from pathlib import Path

from kinspect.core.printing import say
from kinspect.core.quality.overview import model_quality
from kinspect.core.store import load

GEOMEAN_TARGET = 1.05
SITE_TARGET = 1.15
WHY = ("runs-far-from-hints", "autotune-timed-overhead", "equally-near", "hint-at-examples")
"""Findings that tell why a site's pick is slow."""


def row(path: Path) -> tuple[str, bool | None]:
    """The session's line, and whether it meets the goal (None: nothing to pick among, or
    nothing measured)."""
    s = load(path)
    hints = s.compiled_hints
    name = f"{path.name.removesuffix('.session.json'):44} {s.environment.gpu or '':22} hints {','.join(map(str, hints))}"
    q = model_quality(s)
    worst = q.worst_site
    if len(hints) < 2:
        return f"{name}: one variant per site, nothing to pick among (not counted)", None
    if worst is None or worst.geomean_regret is None or q.geomean_regret is None:
        return f"{name}: not measured", None
    met = q.geomean_regret <= GEOMEAN_TARGET and worst.geomean_regret <= SITE_TARGET
    graph = s.site(worst.site).graph
    why = sorted({f.kind for f in s.findings if f.kind in WHY
                  and (f.site == worst.site or (f.site is None and f.graph == graph))})
    return (f"{name}: x{q.geomean_regret:.3f} (target x{GEOMEAN_TARGET:.2f}), worst site {worst.site} "
            f"x{worst.geomean_regret:.3f} (target x{SITE_TARGET:.2f}): {'meets' if met else 'misses'}"
            + (f" ({', '.join(why)} there)" if why and not met else "")), met


def main(argv: list[str]) -> int:
    if not argv:
        say(__doc__.strip().splitlines()[-4].strip(), err=True)
        return 2
    paths = [p for a in map(Path, argv) for p in (sorted(a.glob("*.session.json")) if a.is_dir() else [a])]
    verdicts = []
    for p in paths:
        line, met = row(p)
        say(line)
        verdicts.append(met)
    counted = [v for v in verdicts if v is not None]
    say(f"{sum(counted)} of {len(counted)} sessions meet the goal (one compile each)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
