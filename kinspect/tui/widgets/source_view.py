"""A variant's configuration and generated Triton source, highlighted as Python."""

from __future__ import annotations

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from kinspect.core.session import Site
from kinspect.tui.present import config_text, identical_to, literal


class SourceView(VerticalScroll):
    def __init__(self, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._shown: tuple[int, int | None] | None = None

    def compose(self) -> ComposeResult:
        yield Static(classes="config")
        yield Static(classes="code")

    def show(self, site: Site, index: int) -> None:
        """Show a site's variant; the same one again is free, so callers need not check."""
        variant = site.variants[index]
        twin = identical_to(site).get(index)
        ident = (id(variant), twin)
        if ident == self._shown:
            return
        self._shown = ident
        self.query_one(".config", Static).update(config_text(site, variant, twin))
        code = self.query_one(".code", Static)
        if variant.source:
            code.update(Syntax(literal(variant.source), "python", theme="ansi_dark", line_numbers=True))
        else:
            code.update(Text("no source recorded for this variant", style="dim"))
