"""The variants of one site at the current runtime key: distances, choice, latency."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from kinspect.core.quality.explain import SiteExplanation
from kinspect.tui.present import aligned_row, column_widths, variant_columns, variant_rows


class VariantsTable(DataTable):
    BINDINGS = [
        Binding("j", "cursor_down", "Next variant", show=False, id="kinspect.variants.down",
                tooltip="Select the next variant"),
        Binding("k", "cursor_up", "Previous variant", show=False, id="kinspect.variants.up",
                tooltip="Select the previous variant"),
    ]

    class VariantHighlighted(Message):
        def __init__(self, table: VariantsTable, index: int) -> None:
            super().__init__()
            self.table = table
            self.index = index

        @property
        def control(self) -> VariantsTable:
            return self.table

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.generation = 0
        """How many times the rows were rebuilt; benchmarks wait on it."""
        self._layout: tuple[object, bool, bool] | None = None
        self._widths: list[int] = []

    def show(self, expl: SiteExplanation, peak_tflops: float | None, show_terms: bool,
             inductor_names: bool = False) -> None:
        """Rebuild the rows and put the cursor on the chosen variant, if there is one.

        Each row is one cell holding the columns already aligned: a DataTable renders
        every cell through Rich (padding, styles, line splitting) again on any change,
        about 75 us a cell, and eleven columns made that 8 ms of each keystroke's frame.
        Column widths only grow while the site stays the same, so the table does not
        jitter as the user types. The app selects the chosen variant itself, so moving
        the cursor here posts no VariantHighlighted: only the user's moves do.
        """
        labels = variant_columns(show_terms)
        rows = variant_rows(expl, peak_tflops, show_terms, inductor_names)
        widths = column_widths(labels, rows)
        layout = (expl.site, show_terms, inductor_names)
        if layout == self._layout:
            widths = [max(w, have) for w, have in zip(widths, self._widths)]
        with self.app.batch_update(), self.prevent(DataTable.RowHighlighted):
            if layout != self._layout or widths != self._widths:
                self.clear(columns=True)
                self.add_column(aligned_row([Text(label) for label in labels], widths),
                                width=sum(widths) + 2 * (len(widths) - 1))
                self._layout, self._widths = layout, widths
            else:
                self.clear()
            for i, row in enumerate(rows):
                self.add_row(aligned_row(row, widths), key=str(i))
            if expl.decision is not None:
                self.move_cursor(row=expl.decision.chosen)
        self.generation += 1

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self.post_message(self.VariantHighlighted(self, event.cursor_row))
