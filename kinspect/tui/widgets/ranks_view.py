"""The Ranks tab: a torchrun job's ranks side by side, per step each rank's sizes, picks and
measured times, the step's slowest rank and how long the others wait, then where the
ranks' compiles diverge. What it shows is the core's (`kinspect.core.ranks.merged`)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from kinspect.core.ranks.merged import MergedRanks
from kinspect.tui.present import literal, plain


class RankSteps(DataTable):
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="kinspect.ranks.down",
                tooltip="Move to the next rank's row"),
        Binding("k", "cursor_up", "Up", show=False, id="kinspect.ranks.up",
                tooltip="Move to the previous rank's row"),
    ]


class RanksView(Vertical):
    def __init__(self, merged: MergedRanks, id: str | None = None) -> None:
        super().__init__(id=id)
        self.merged = merged

    def compose(self) -> ComposeResult:
        yield Static(plain("\n".join(self.merged.describe_ranks())), id="ranks-head")
        yield RankSteps(id="ranks-steps", cursor_type="row", zebra_stripes=True)
        yield Static(_divergence_text(self.merged), id="ranks-divergence")

    def on_mount(self) -> None:
        table = self.query_one(RankSteps)
        t = self.merged.table()
        for col in t.columns:
            table.add_column(plain(col))
        for row, slowest in zip(t.rows, t.slowest):
            table.add_row(*(plain(c, style="bold red" if slowest and i == len(row) - 1 else "")
                            for i, c in enumerate(row)))


def _divergence_text(merged: MergedRanks) -> Text:
    out = Text()
    if not any(s.measurements for s in merged.sessions):
        out.append("nothing measured: record with --measure for times and waits\n", style="dim")
    if not merged.divergences:
        out.append("compile divergence: none (every rank holds the same kernels for every site)\n", style="dim")
    for d in merged.divergences:
        what = ", ".join(f"v{i}" for i in d.variants) or "its variants"
        out.append(literal(f"{d.site} {what} differ:\n"), style="bold")
        for ranks, text in d.groups:
            out.append(literal(f"  rank {', '.join(map(str, ranks))}: {text}\n"))
    for f in merged.findings:
        if f.kind == "straggler":
            out.append(literal(f"straggler: {f.message}\n"), style="yellow")
    return out
