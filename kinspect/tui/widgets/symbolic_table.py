"""Each template tensor's size expressions against each hint's key and the runtime size."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from kinspect.core.session.model import Site
from kinspect.core.dispatch.shapes import Key
from kinspect.tui.present import column_widths, symbolic_columns, symbolic_rows


class SymbolicTable(DataTable):
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="kinspect.symbolic.down",
                tooltip="Move to the next dimension"),
        Binding("k", "cursor_up", "Up", show=False, id="kinspect.symbolic.up",
                tooltip="Move to the previous dimension"),
    ]

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)

    def show(self, site: Site, env: Mapping[str, int] | None, key: Key | None,
             aliases: Mapping[str, str] | None) -> None:
        """`aliases`: the user's names for Inductor's symbols; None shows Inductor's names."""
        labels = symbolic_columns(site)
        rows = symbolic_rows(site, env, key, aliases)
        with self.app.batch_update():
            self.clear(columns=True)
            for label, width in zip(labels, column_widths(labels, rows)):
                self.add_column(Text(label), width=width)
            self.add_rows(rows)
