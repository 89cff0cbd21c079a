"""`kinspect explain` on a torchrun job's rank sessions: the ranks, each step side by side
(the core's table), compile divergence and the job's findings, as terminal text."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from kinspect.core.numbers import US
from kinspect.core.ranks.merged import MergedRanks


def print_ranks(merged: MergedRanks, console: Console) -> None:
    for line in merged.describe_ranks():
        console.print(Text(line))
    console.print(steps_table(merged))
    if merged.divergences:
        div = Table(title=Text("compile divergence: ranks holding other kernels for one site"), title_justify="left")
        for col in ("site", "variants", "ranks", "kernels"):
            div.add_column(col)
        for d in merged.divergences:
            what = ", ".join(f"v{i}" for i in d.variants) or "all"
            for ranks, text in d.groups:
                div.add_row(Text(d.site), what, ", ".join(map(str, ranks)), Text(text))
        console.print(div)
    else:
        console.print(Text("compile divergence: none (every rank holds the same kernels for every site)"))
    for f in merged.findings:
        console.print(Text(f"{f.kind}: {f.message}", style="yellow" if f.severity != "info" else ""))


def steps_table(merged: MergedRanks) -> Table:
    t = merged.table()
    timed = any(s.measurements for s in merged.sessions)
    note = f"picks and measured {US} per site (each rank's own measurements, one compile)" if timed else \
        "picks per site (nothing measured: record with --measure for times and waits)"
    table = Table(title=Text(f"steps by rank: {note}"), title_justify="left")
    for col in t.columns:
        table.add_column(col, justify="right" if col in ("step", "rank", f"GPU {US}", f"waits {US}") else "left")
    for row, slowest in zip(t.rows, t.slowest):
        table.add_row(*(Text(c, style="bold" if slowest else "") for c in row))
    return table
