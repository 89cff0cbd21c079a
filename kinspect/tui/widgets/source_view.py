"""A variant's configuration and generated Triton source, highlighted as Python.

Generated lines run past 100 columns (the launch metadata far beyond), so lines are kept
whole and the view scrolls sideways; `w` wraps them instead, to read one at a glance.
"""

from __future__ import annotations

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.widgets import Static

from kinspect.core.session.model import Site
from kinspect.tui.present import config_text, identical_to
from kinspect.tui.text import literal


class SourceView(ScrollableContainer):
    BINDINGS = [
        Binding("w", "toggle_wrap", "Wrap lines", id="kinspect.source.wrap",
                tooltip="Wrap long source lines, or keep them whole and scroll sideways (←/→)"),
    ]

    def __init__(self, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._shown: tuple[int, int | None, bool] | None = None
        self._site: Site | None = None
        self._index = 0
        self.wrap = False

    def compose(self) -> ComposeResult:
        yield Static(classes="config")
        yield Static(classes="code")

    def show(self, site: Site, index: int) -> None:
        """Show a site's variant; the same one again is free, so callers need not check."""
        variant = site.variants[index]
        twin = identical_to(site).get(index)
        ident = (id(variant), twin, self.wrap)
        if ident == self._shown:
            return
        self._shown = ident
        self._site, self._index = site, index
        self.query_one(".config", Static).update(config_text(site, variant, twin))
        code = self.query_one(".code", Static)
        if variant.source:
            code.update(Syntax(literal(variant.source), "python", theme="ansi_dark", line_numbers=True,
                               word_wrap=self.wrap))
            code.set_class(self.wrap, "-wrap")
        else:
            code.update(Text("no source recorded for this variant", style="dim"))

    def action_toggle_wrap(self) -> None:
        self.wrap = not self.wrap
        if self._site is not None:
            self.show(self._site, self._index)
        self.scroll_to(x=0, animate=False)
