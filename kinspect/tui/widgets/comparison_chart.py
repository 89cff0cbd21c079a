"""`kinspect compare`'s figures in the Map tab: each kind's geometric-mean slowdown as a
bar, and the whole model's time per shape, under the site's map.

The comparison is a whole-model figure, so it stays the same whichever site is selected;
it shows only in sessions that `kinspect compare` wrote. Bars are text cells (a second
plot would halve the map's height); every label is plain text, never markup.
"""

from __future__ import annotations

import math

from rich.console import Group
from rich.table import Table
from rich.text import Text

from kinspect.core.dispatch.shapes import sizes_text
from kinspect.core.quality.comparison import TITLES, Comparison
from kinspect.core import numbers

BAR = 30
"""Cells of the longest bar."""


def comparison_chart(c: Comparison) -> Group:
    slow = {k: c.slowdown(k) for k in c.kinds}
    worst = max((math.log(s) for s in slow.values() if s), default=0.0)
    bars = Text()
    bars.append("the whole model, five ways: geometric-mean slowdown vs the best kind per shape "
                f"({len(c.complete)} shapes; fresh compiles autotune anew)\n", style="bold")
    width = max(len(TITLES[k]) for k in c.kinds)
    for k in c.kinds:
        s = slow[k]
        cells = round(BAR * math.log(s) / worst) if s and worst > 0 else 0
        bars.append(f"{TITLES[k]:<{width}} ")
        bars.append("█" * cells + " " * (BAR - cells + 1), style="red")
        bars.append("n/a\n" if s is None else f"{numbers.ratio(s)}\n")
    table = Table(box=None, padding=(0, 1), show_edge=False)
    table.add_column("sizes")
    for k in c.kinds:
        table.add_column(k, justify="right")
    for r in c.rows:
        table.add_row(Text(sizes_text(r.sizes)), *(
            Text("-" if r.times.get(k) is None else numbers.us(r.times[k]), style="bold" if r.best == k else "")
            for k in c.kinds))
    return Group(bars, Text("GPU µs per call, best per shape in bold:", style="dim"), table)
