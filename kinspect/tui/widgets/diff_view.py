"""A unified diff between any two variants of a site, with identical ones said so."""

from __future__ import annotations

import difflib

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Select, Static

from kinspect.core.session.model import Site, Variant
from kinspect.tui.text import literal


class DiffView(Vertical):
    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self._site: Site | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(classes="pick"):
            yield Select([], allow_blank=True, prompt="from", id="diff-a")
            yield Select([], allow_blank=True, prompt="to", id="diff-b")
        with VerticalScroll():
            yield Static(id="diff-text")

    def show(self, site: Site, a: int, b: int) -> None:
        """Compare variants `a` and `b` of `site`; the selectors follow."""
        if site is not self._site:
            self._site = site
            options = [(Text(literal(v.label)), v.index) for v in site.variants]
            for sel in self.query(Select):
                with sel.prevent(Select.Changed):
                    sel.set_options(options)
        for sel, value in ((self.query_one("#diff-a", Select), a), (self.query_one("#diff-b", Select), b)):
            with sel.prevent(Select.Changed):
                sel.value = value
        self._render_diff()

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        self._render_diff()

    def _render_diff(self) -> None:
        out = self.query_one("#diff-text", Static)
        a, b = self.query_one("#diff-a", Select).value, self.query_one("#diff-b", Select).value
        if self._site is None or not isinstance(a, int) or not isinstance(b, int):
            out.update(Text("choose two variants", style="dim"))
            return
        text, why = variant_diff(self._site.variants[a], self._site.variants[b])
        if why is not None:
            out.update(Text(why, style="bold magenta"))
        else:
            from rich.syntax import Syntax  # pygments with it: a tenth of a second the first screen need not wait for

            out.update(Syntax(text, "diff", theme="ansi_dark"))


def variant_diff(a: Variant, b: Variant) -> tuple[str, str | None]:
    """The unified diff of two sources, and why it is empty when it is."""
    if a.index == b.index:
        return "", f"{a.label} compared with itself"
    if (a.source_hash and a.source_hash == b.source_hash) or (a.source and a.source == b.source):
        return "", f"{a.label} and {b.label} are identical: same generated source"
    if not a.source or not b.source:
        return "", "no source recorded for " + (a.label if not a.source else b.label)
    lines = difflib.unified_diff(
        literal(a.source).splitlines(keepends=True),
        literal(b.source).splitlines(keepends=True),
        fromfile=f"{a.label} {literal(a.kernel_name)}",
        tofile=f"{b.label} {literal(b.kernel_name)}",
    )
    return "".join(lines), None
