"""The Map tab's two-size map: a table of regret cells with a cursor on one of them.

A table of colored cells reads better than plotext's matrix plot (one thin mark per cell).
Every cell says what it holds in characters as well as in color, so NO_COLOR loses
nothing: a measured cell its regret (`1.00`), an unmeasured one `·`, the cursor's cell
brackets, and its row and column labels are reversed.
"""

from __future__ import annotations

from kinspect.core.dispatch.shapes import sizes_text

import math
from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from kinspect.core.quality.decision_map import Heatmap
from kinspect.tui.text import literal
from kinspect.core import numbers


def nearest(values: Sequence[int], x: int | None, default: int) -> int:
    """The index of the value closest to x on a log axis (default when x is not given)."""
    if not x or not values:
        return min(default, max(len(values) - 1, 0))
    return min(range(len(values)), key=lambda i: abs(math.log2(values[i]) - math.log2(max(x, 1))))


def cell_sizes(m: Heatmap, xi: int, yi: int) -> dict[str, int]:
    """The sizes a cell stands for: its two, and the others where the sweep held them."""
    return {m.x_symbol: m.xs[xi], m.y_symbol: m.ys[yi],
            **{k: v for k, v in m.fixed.items() if k not in (m.x_symbol, m.y_symbol)}}


def heat_style(r: float) -> str:
    """Green at the fastest, through yellow, to red at twice its time and beyond."""
    if r < 1.05:
        return "black on green"
    if r < 1.25:
        return "black on yellow"
    if r < 1.6:
        return "black on dark_orange"
    return "white on red"


def heatmap(m: Heatmap, xi: int, yi: int) -> RenderableType:
    return Group(_table(m, xi, yi), _caption(m, xi, yi))


def _table(m: Heatmap, xi: int, yi: int) -> Table:
    t = Table(title=Text(f"{literal(m.site)}: regret (pick / fastest) by {literal(m.x_symbol)} → and "
                         f"{literal(m.y_symbol)} ↓"),
              title_justify="left", box=None, padding=(0, 1), show_edge=False)
    t.add_column(Text(f"{literal(m.y_symbol)}\\{literal(m.x_symbol)}", style="dim"), justify="right")
    for i, x in enumerate(m.xs):
        t.add_column(Text(str(x), style="bold reverse" if i == xi else "bold"), justify="right", min_width=6)
    for j, (y, row) in enumerate(zip(m.ys, m.regret)):
        cells = []
        for i, r in enumerate(row):
            text = "·" if r is None else numbers.ratio(r)
            style = "dim" if r is None else heat_style(r)
            cells.append(Text(f"[{text}]" if (i, j) == (xi, yi) else text,
                              style=f"{style} bold reverse" if (i, j) == (xi, yi) else style))
        t.add_row(Text(str(y), style="bold reverse" if j == yi else "bold"), *cells)
    return t


def _caption(m: Heatmap, xi: int, yi: int) -> Text:
    out = Text()
    sizes = sizes_text(cell_sizes(m, xi, yi))
    out.append(f"{literal(sizes)}: ", style="bold")
    regret, picked = m.regret[yi][xi], m.picked[yi][xi]
    if regret is None:
        out.append("not measured (· cells): the Variants tab decides it, without timings")
    else:
        out.append(f"Inductor picks v{picked}" if picked is not None else "measured")
        out.append(f" — regret {numbers.ratio(regret)}", style="green" if regret < 1.05 else "yellow")
    out.append("\n")
    cells = [(r, x, y) for row, y in zip(m.regret, m.ys) for r, x in zip(row, m.xs) if r is not None]
    if cells:
        worst = max(cells)
        out.append(f"worst {numbers.ratio(worst[0])} at {literal(m.x_symbol)}={worst[1]} {literal(m.y_symbol)}={worst[2]}; ")
    out.append(f"{len(cells)} of {len(m.xs) * len(m.ys)} cells measured, · not measured\n", style="dim")
    out.append("←/→ and ↑/↓ move the cursor through both sizes (the shape follows) · one compile's timings",
               style="dim")
    return out
