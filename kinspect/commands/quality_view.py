"""The quality summary as the headless commands print it (`explain`, `sweep`), and as
JSON (`explain --json`'s top-level "quality" list)."""

from __future__ import annotations


from collections.abc import Mapping, Sequence

from rich.table import Table
from rich.text import Text

from kinspect.core.quality.overview import ModelQuality, SiteQuality
from kinspect.core.session.model import Session
from kinspect.core.quality.whatif import WhatIf, current
from kinspect.core.dispatch.shapes import sizes_text


def _share(x: float | None) -> str:
    return "" if x is None else f"{100 * x:.0f}%"


def _times(x: float | None) -> str:
    return "" if x is None else f"×{x:.2f}"


def _worst(q: SiteQuality) -> str:
    w = q.worst
    if w is None:
        return ""
    where = sizes_text(w.sizes) or "?"
    return f"{_times(w.regret)} at {where}"


def quality_table(q: ModelQuality, spread: Mapping[str, Sequence[float]] | None = None) -> Table:
    """`spread`: per site, each compile's geometric-mean regret (`kinspect.core.quality.variance`),
    shown beside the one compile's figure where several compiles were timed."""
    t = Table(title=Text("dispatch quality over the measured shapes (one compile)"), title_justify="left",
              caption=Text("fastest picked: within noise (the pick's p20 above the fastest's p80 and ≥ ×1.05 "
                           "counts as slower); lost: GPU time lost over the workload, share of the fastest possible"),
              caption_justify="left")
    for col in ("site", "shapes", "fastest picked", "geomean", "worst", "workload lost"):
        t.add_column(col, justify="left" if col in ("site", "worst") else "right")
    for s in q.sites:
        if s.points:
            across = (spread or {}).get(s.site, ())
            geomean = _times(s.geomean_regret) + (f" (×{min(across):.2f}–×{max(across):.2f} over {len(across)} compiles)"
                                                  if len(across) > 1 else "")
            t.add_row(Text(s.site), str(s.shapes), _share(s.fastest_picked), geomean,
                      Text(_worst(s), style="red" if s.worst and s.worst.slower else ""), _share(s.workload_lost))
    worst = q.worst
    t.add_row(Text("whole model", style="bold"), str(q.shapes), _share(q.fastest_picked), _times(q.geomean_regret),
              Text(f"{_times(worst[1].regret)} at {worst[0]}" if worst else ""), _share(q.workload_lost))
    return t


def what_if_table(results: list[WhatIf], session: Session, rows: int = 5) -> Table:
    now = current(results, session.model.hints or sorted({v.hint for s in session.sites for v in s.variants
                                                          if v.hint is not None}))
    shown = results[:rows] + ([now] if now is not None and now not in results[:rows] else [])
    t = Table(title=Text("what-if on these measurements (no recompile; verify by recompiling)"),
              title_justify="left")
    for col in ("heuristic", "hints", "geomean", "worst", "workload lost", ""):
        t.add_column(col, justify="right" if col in ("geomean", "worst", "workload lost") else "left")
    for w in shown:
        mark = "best" if w is results[0] else ("current" if w is now else "")
        t.add_row(Text(w.heuristic), Text(", ".join(map(str, w.hints))), _times(w.geomean_regret),
                  _times(w.worst_regret), _share(w.workload_lost), Text(mark, style="green" if mark == "best" else ""))
    return t
