"""`h`: what other heuristics and fewer hints would have cost, on this session's
measurements, best first; enter decides by the highlighted row's heuristic.

The figures are the core's (`kinspect.core.quality.whatif`): exact for the variants this compile
emitted. A row with fewer hints is a prediction only (a compile with those hints may emit
other kernels), so it is shown, not applied.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from kinspect.core.dispatch.heuristics import HEURISTICS
from kinspect.core.quality.whatif import WhatIf, paste_line, paste_note, ran_hints
from kinspect.core import numbers

ROWS = 12


def _times(x: float | None) -> str:
    return numbers.ratio(x)


class WhatIfScreen(ModalScreen[str | None]):
    BINDINGS = [
        Binding("escape,h", "dismiss(None)", "Close", id="kinspect.whatif.close", tooltip="Close the what-if table"),
    ]

    def __init__(self, results: Sequence[WhatIf], hints: Sequence[int], deciding: str,
                 program: str | None = None) -> None:
        super().__init__()
        self._compiled = tuple(sorted(hints))
        self._hints = ran_hints(results, hints) or self._compiled
        self._deciding = deciding
        full = [w for w in results if w.hints == self._hints]
        by_name = {w.heuristic: w for w in full}
        self._rows: list[tuple[str, WhatIf | None]] = [(h, by_name.get(h)) for h in HEURISTICS]
        fewer = [w for w in results if w.hints != self._hints][:ROWS]
        self._rows += [(w.heuristic, w) for w in fewer]
        self._best = results[0] if results else None
        line, note = paste_line(results), paste_note(results, self._compiled, program)
        self._paste = (note, line) if line is not None and note is not None else None
        """What the best hints under Inductor's rule predict, and the line to paste."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="what-if"):
            title = "what-if on this session's measurements (one compile)"
            yield Static(Text(title, style="bold"))
            if self._best is None:
                yield Static(Text("no key has every variant measured, so no hints can be weighed by time: the "
                                  "Map tab (8) shows which variant runs along each size for each subset of the "
                                  "compiled hints, from the compiled code; the figures here need a sweep "
                                  "(kinspect sweep PROGRAM --range ...) or m at a few shapes", style="dim"))
            else:
                yield Static(Text(f"best: {self._best.label()} at geomean {numbers.ratio(self._best.geomean_regret)} "
                                  f"over {self._best.shapes} measured keys", style="green"))
                ran = f" (their variants': {', '.join(map(str, self._hints))})" if self._hints != self._compiled else ""
                yield Static(Text(f"first, pinned: every heuristic with the compiled hints {list(self._compiled)}{ran}; "
                                  "then fewer hints, best first · a measured key is one site at one shape with "
                                  "every variant timed, counted over all sites", style="dim"))
            yield DataTable(id="what-if-table", cursor_type="row", zebra_stripes=True)
            if self._paste is not None:
                note, line = self._paste
                yield Static(Text(note, style="dim"))
                yield Static(Text(line, style="bold"), id="what-if-paste")
            yield Static(Text("enter: decide by the row's heuristic (rows with fewer hints are predictions: "
                              "recompile to verify) · h or escape: close", style="dim"), classes="status")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("heuristic", "hints", "geomean", "worst", "workload extra", "")
        for name, w in self._rows:
            note = []
            if w is not None and w is self._best:
                note.append("best")
            if name == self._deciding and (w is None or w.hints == self._hints):
                note.append("deciding now")
            if name == "inductor" and (w is None or w.hints == self._hints):
                note.append("Inductor's")
            hints = ", ".join(map(str, w.hints if w is not None else self._hints))
            lost = "" if w is None else numbers.extra(w.workload_lost)
            table.add_row(Text(name), Text(hints), _times(w.geomean_regret if w else None),
                          _times(w.worst_regret if w else None), lost,
                          Text(", ".join(note), style="green" if "best" in note else "dim"))
        table.focus()

    @on(DataTable.RowSelected)
    def _chosen(self, event: DataTable.RowSelected) -> None:
        name, w = self._rows[event.cursor_row]
        if w is not None and w.hints != self._hints:
            self.notify("that row drops hints: a prediction to verify by recompiling (kinspect advise)",
                        timeout=4, markup=False)
            return
        self.dismiss(name)
