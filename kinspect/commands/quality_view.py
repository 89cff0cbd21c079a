"""The quality summary as the headless commands print it (`explain`, `sweep`), and as
JSON (`explain --json`'s top-level "quality" list)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from kinspect.core.dispatch.shapes import format_key, sizes_or_key
from kinspect.core.numbers import extra, ratio, ratio_range, share
from kinspect.core.quality.overview import ModelQuality, ShapePoint
from kinspect.core.quality.whatif import WhatIf, current, paste_line, paste_note
from kinspect.core.session.model import Session
from kinspect.core.session.timings import NOISE_RATIO


def _at(p: ShapePoint, inductor_names: bool) -> str:
    """Where a regret was measured: `B=157`, or the whole key by Inductor's names."""
    return format_key(p.key) if inductor_names else sizes_or_key(p.sizes, p.key)


def quality_table(q: ModelQuality, spread: Mapping[str, Sequence[float]] | None = None,
                  inductor_names: bool = False, heuristic: str = "inductor", whole: bool = True) -> Table:
    """`spread`: per site, each compile's geometric-mean regret (`kinspect.core.quality.variance`),
    shown beside the one compile's figure where several compiles were timed; `heuristic`: the
    rule the picks are decided by (another than Inductor's is a what-if, and says so); `whole`:
    with the whole model's row (not for one site alone)."""
    what_if = "" if heuristic == "inductor" else f", picks decided by {heuristic}: a what-if (Inductor decides by inductor)"
    t = Table(title=Text(f"dispatch quality over the measured shapes (one compile{what_if})"), title_justify="left",
              caption=Text(f"fastest picked: within noise (the pick's p20 above the fastest's p80 and ≥ {ratio(NOISE_RATIO)} "
                           "counts as slower); geomean, worst: the pick's time over the fastest variant's; "
                           f"{EXTRA}: {EXTRA_MEANS}"),
              caption_justify="left")
    for col in ("site", "shapes", "fastest picked", "geomean", "worst", EXTRA):
        t.add_column(col, justify="left" if col in ("site", "worst") else "right")
    for s in q.sites:
        if s.shapes:
            across = (spread or {}).get(s.site, ())
            geomean = ratio(s.geomean_regret) + (f" ({ratio_range(min(across), max(across))} over {len(across)} "
                                                 "compiles)" if len(across) > 1 else "")
            worst = "" if s.worst is None else f"{ratio(s.worst.regret)} at {_at(s.worst, inductor_names)}"
            t.add_row(Text(s.site), str(s.shapes), share(s.fastest_picked), geomean,
                      Text(worst, style="red" if s.worst and s.worst.slower else ""), extra(s.workload_lost))
    top = q.worst
    if not whole:
        return t
    t.add_row(Text("whole model", style="bold"), q.shapes_text, share(q.fastest_picked), ratio(q.geomean_regret),
              Text(f"{ratio(top[1].regret)} at {top[0]} {_at(top[1], inductor_names)}" if top else ""),
              extra(q.workload_lost))
    return t


def print_what_if(console: Console, results: list[WhatIf], session: Session) -> None:
    """The what-if table, then the line to paste on a line of its own (as `advise` ends)."""
    console.print(what_if_table(results, session))
    print_paste(console, results, session)


def print_paste(console: Console, results: list[WhatIf], session: Session) -> None:
    """What the best hints predict, then the line to paste, never wrapped."""
    line, note = paste_line(results), paste_note(results, session.compiled_hints, session.advisable_program)
    if line is not None and note is not None:
        console.print(Text(note))
        console.print(line, markup=False, soft_wrap=True)


EXTRA = "workload extra"
EXTRA_MEANS = ("the workload's GPU time beyond what the fastest variants would take "
               "(+100%: twice as long)")


def what_if_table(results: list[WhatIf], session: Session, rows: int = 5) -> Table:
    now = current(results, session.compiled_hints)
    shown = results[:rows] + ([now] if now is not None and now not in results[:rows] else [])
    t = Table(title=Text("what-if on these measurements (no recompile; verify by recompiling)"),
              title_justify="left")
    for col in ("heuristic", "hints", "geomean", "worst", EXTRA, ""):
        t.add_column(col, justify="right" if col in ("geomean", "worst", EXTRA) else "left")
    for w in shown:
        mark = "best" if w is results[0] else ("current" if w is now else "")
        t.add_row(Text(w.heuristic), Text(", ".join(map(str, w.hints))), ratio(w.geomean_regret),
                  ratio(w.worst_regret), extra(w.workload_lost), Text(mark, style="green" if mark == "best" else ""))
    return t
