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


def heatmap(m: Heatmap, xi: int, yi: int, width: int = 80) -> RenderableType:
    """The map in `width` columns: where every column does not fit, the ones around the
    cursor, and the caption says which (←/→ bring the others)."""
    shown = columns_shown(m, xi, width)
    return Group(_table(m, xi, yi, shown), _caption(m, xi, yi, shown))


CELL = 6
"""A column's width: a space and `1.22` (the title says the cells are ratios), the
cursor's `[1.22]` a column one wider."""


def columns_shown(m: Heatmap, xi: int, width: int) -> range:
    """The columns of x that fit in `width`, the cursor's among them, as near the middle as
    the edges allow."""
    label = max([len(str(y)) for y in m.ys] + [len(m.y_symbol) + len(m.x_symbol) + 1])
    cell = max([CELL] + [len(str(x)) + 1 for x in m.xs])
    fit = max(1, (width - label - 2) // cell)
    if fit >= len(m.xs):
        return range(len(m.xs))
    first = min(max(0, xi - fit // 2), len(m.xs) - fit)
    return range(first, first + fit)


def _table(m: Heatmap, xi: int, yi: int, shown: range) -> Table:
    t = Table(title=Text(f"{literal(m.site)}: regret (pick / fastest) by {literal(m.x_symbol)} → and "
                         f"{literal(m.y_symbol)} ↓"),
              title_justify="left", box=None, padding=(0, 0, 0, 1), show_edge=False, collapse_padding=True)
    t.add_column(Text(f"{literal(m.y_symbol)}\\{literal(m.x_symbol)}", style="dim"), justify="right", no_wrap=True)
    for i in shown:
        t.add_column(Text(str(m.xs[i]), style="bold reverse" if i == xi else "bold"), justify="right",
                     min_width=CELL, no_wrap=True)
    for j, (y, row) in enumerate(zip(m.ys, m.regret)):
        cells = []
        for i in shown:
            r = row[i]
            text = "·" if r is None else f"{r:.2f}"
            style = "dim" if r is None else heat_style(r)
            cells.append(Text(f"[{text}]" if (i, j) == (xi, yi) else text,
                              style=f"{style} bold reverse" if (i, j) == (xi, yi) else style))
        t.add_row(Text(str(y), style="bold reverse" if j == yi else "bold"), *cells)
    return t


def _caption(m: Heatmap, xi: int, yi: int, shown: range) -> Text:
    out = Text()
    if len(shown) < len(m.xs):
        out.append(f"{literal(m.x_symbol)}={m.xs[shown[0]]}..{m.xs[shown[-1]]} shown of "
                   f"{m.xs[0]}..{m.xs[-1]} ({len(shown)} of {len(m.xs)} columns): ←/→ bring the others\n", style="yellow")
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
