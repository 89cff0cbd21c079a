"""Each template tensor's size expressions against each hint's key and the runtime size."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from kinspect.core.session import Site
from kinspect.core.shapes import Key
from kinspect.tui.present import symbolic_columns, symbolic_rows


class SymbolicTable(DataTable):
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False, id="kinspect.symbolic.down",
                tooltip="Move to the next dimension"),
        Binding("k", "cursor_up", "Up", show=False, id="kinspect.symbolic.up",
                tooltip="Move to the previous dimension"),
    ]

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self._site: Site | None = None

    def show(self, site: Site, env: Mapping[str, int] | None, key: Key | None) -> None:
        with self.app.batch_update():
            if site is not self._site:
                self.clear(columns=True)
                for label in symbolic_columns(site):
                    self.add_column(Text(label))
                self._site = site
            else:
                self.clear()
            self.add_rows(symbolic_rows(site, env, key))
