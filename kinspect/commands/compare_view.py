"""What `kinspect compare` and `kinspect advise` print: the comparison, the spread across
compiles, the advice and its verification, as Rich tables of plain text (session text is
never read as markup)."""

from __future__ import annotations

from collections.abc import Mapping

from rich.table import Table
from rich.text import Text

from kinspect.core.dispatch.shapes import sizes_or_key, sizes_text
from kinspect.core.numbers import US, ratio, seconds, share, us
from kinspect.core.quality.advise import spread_text
from kinspect.core.quality.comparison import TITLES, Comparison
from kinspect.core.quality.overview import SizeNamer
from kinspect.core.quality.side_by_side import Row
from kinspect.core.session.model import Session
from kinspect.core.quality.variance import UNSTABLE_RATIO, compiles, regret_spread, spreads, widest


def comparison_table(c: Comparison) -> Table:
    t = Table(title=Text(f"the whole model, GPU {US} per call (summed CUPTI kernel time); best per shape in bold"),
              title_justify="left",
              caption=Text(f"slowdown: geometric mean over the {len(c.complete)} shapes where every kind was timed, "
                           "vs the best kind at each shape. hinted and oracle are the compile under inspection; "
                           "exact_hint and static are fresh compiles, which autotune anew (compile-to-compile noise "
                           "is in their gap)"),
              caption_justify="left")
    t.add_column("sizes")
    for k in c.kinds:
        t.add_column(TITLES[k], justify="right")
    for r in c.rows:
        cells = []
        for k in c.kinds:
            v = r.times.get(k)
            if v is None:
                cells.append(Text(r.errors.get(k, "")[:40], style="red"))
            else:
                cells.append(Text(us(v), style="bold" if r.best == k else ""))
        t.add_row(Text(sizes_text(r.sizes)), *cells)
    t.add_row(Text("geomean slowdown", style="bold"),
              *(Text(ratio(c.slowdown(k))) for k in c.kinds))
    t.add_row(Text("best at"), *(Text(f"{c.wins(k)}/{len(c.complete)}") for k in c.kinds))
    return t


def spread_table(session: Session, rows: int = 12) -> Table | None:
    """Per variant, its widest spread across compiles (slowest over fastest compile at one key)."""
    runs = compiles(session)
    found = widest(spreads(session, runs))
    if not found:
        return None
    t = Table(title=Text(f"the same hints over {len(runs)} compiles (fresh caches): each variant's widest spread"),
              title_justify="left")
    namer = SizeNamer(session)
    for col in ("site", "hint", "at", f"{US} per compile", "spread", "kernels"):
        t.add_column(col, justify="right" if col in ("hint", "spread") else "left")
    for s in found[:rows]:
        times = ", ".join("-" if x is None else us(x) for x in s.times)
        kernels = len({k for k in s.kernels if k is not None})
        unstable = kernels > 1 and (s.ratio or 0) > UNSTABLE_RATIO
        at = sizes_or_key(namer(session.site(s.site), s.key), s.key)
        t.add_row(Text(s.site), str(s.hint), Text(at), Text(times),
                  Text(ratio(s.ratio), style="red" if unstable else ""),
                  Text("same" if kernels == 1 else f"{kernels} different", style="red" if kernels > 1 else ""))
    return t


def regret_lines(session: Session) -> list[str]:
    """Each site's geometric-mean regret with its spread over compiles, when several were timed."""
    return [f"{site}: geomean regret {spread_text(values)}" for site, values in regret_spread(session).items()]


def phases_line(phases: Mapping[str, float]) -> str:
    return "phases: " + ", ".join(f"{name} {seconds(secs)}" for name, secs in phases.items()) + \
        f" (total {seconds(sum(phases.values()))})"


def side_by_side_table(names: tuple[str, str], rows: list[Row], whole: Row) -> Table:
    """Two recordings' dispatch quality, site by site and for the whole model."""
    t = Table(title=Text("pick over fastest variant, over the keys each recording measured (one compile each)"),
              title_justify="left",
              caption=Text("geomean and worst over the site's measured keys; lost: GPU time over the recorded calls "
                           "beyond the fastest variant's; - where that recording has no such site or measured none"),
              caption_justify="left")
    t.add_column("site")
    for name in names:
        for what in ("keys", "geomean", "worst", "lost"):
            t.add_column(Text(f"{name}\n{what}"), justify="right")
    for r in [*rows, whole]:
        cells = []
        for side in r.sides:
            cells += [Text(str(side.shapes) if side.shapes else "-"), Text(ratio(side.geomean) if side.geomean else "-"),
                      Text(ratio(side.worst) if side.worst else "-"),
                      Text(share(side.lost) or "-")]
        t.add_row(Text(r.label, style="bold" if r is whole else ""), *cells)
    return t
