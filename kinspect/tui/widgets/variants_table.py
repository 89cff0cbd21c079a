"""The variants of one site at the current runtime key: distances, choice, latency."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from kinspect.core.explain import SiteExplanation
from kinspect.tui.present import variant_columns, variant_rows


class VariantsTable(DataTable):
    BINDINGS = [
        Binding("j", "cursor_down", "Next variant", show=False, id="kinspect.variants.down",
                tooltip="Select the next variant"),
        Binding("k", "cursor_up", "Previous variant", show=False, id="kinspect.variants.up",
                tooltip="Select the previous variant"),
    ]

    class VariantHighlighted(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.generation = 0
        """How many times the rows were rebuilt; benchmarks wait on it."""
        self._columns_for: bool | None = None

    def show(self, expl: SiteExplanation, peak_tflops: float | None, show_terms: bool) -> None:
        """Rebuild the rows and put the cursor on the chosen variant, if there is one.

        The app selects the chosen variant itself, so moving the cursor here posts no
        VariantHighlighted: only the user's moves do.
        """
        with self.app.batch_update(), self.prevent(DataTable.RowHighlighted):
            if self._columns_for != show_terms:
                self.clear(columns=True)
                for label in variant_columns(show_terms):
                    self.add_column(Text(label))
                self._columns_for = show_terms
            else:
                self.clear()
            for i, row in enumerate(variant_rows(expl, peak_tflops, show_terms)):
                self.add_row(*row, key=str(i))
            if expl.decision is not None:
                self.move_cursor(row=expl.decision.chosen)
        self.generation += 1

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self.post_message(self.VariantHighlighted(event.cursor_row))
