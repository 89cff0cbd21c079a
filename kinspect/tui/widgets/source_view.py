"""A variant's configuration and generated Triton source, highlighted as Python.

Generated lines run past 100 columns (the launch metadata far beyond), so lines are kept
whole and the view scrolls sideways; `w` wraps them instead, to read one at a glance.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.widgets import Static

from kinspect.core.quality.findings import emitted_choice
from kinspect.core.session.model import Site, Variant
from kinspect.tui.text import literal
from kinspect.tui.widgets.variants_table import identical_to
from kinspect.core import numbers


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
            from kinspect.tui.widgets.source_syntax import python_source  # pygments: imported when first shown

            code.update(python_source(literal(variant.source), self.wrap))
            code.set_class(self.wrap, "-wrap")
        else:
            code.update(Text("no source recorded for this variant", style="dim"))

    def action_toggle_wrap(self) -> None:
        self.wrap = not self.wrap
        if self._site is not None:
            self.show(self._site, self._index)
        self.scroll_to(x=0, animate=False)


def config_text(site: Site, v: Variant, twin: int | None) -> Text:
    out = Text()
    out.append(literal(v.label), style="bold")
    out.append("  ")
    out.append(literal(v.kernel_name))
    if v.source_hash:
        out.append(f"  sha {literal(v.source_hash)}", style="dim")
    if twin is not None:
        out.append(f"  identical to v{twin}", style="magenta")
    if v.config:
        out.append("\n")
        out.append(" ".join(f"{literal(str(k))}={literal(str(val))}" for k, val in v.config.items()))
    _choice_line(out, site, v)
    if v.source_path:
        out.append("\n")
        out.append(literal(v.source_path), style="dim")
    return out


def _choice_line(out: Text, site: Site, v: Variant) -> None:
    """Which autotune choice the kernel was generated from, and whether it won at its hint."""
    c = emitted_choice(site, v)
    if c is None:
        if v.winner:
            out.append("\nautotune winner at this hint: ", style="dim")
            out.append(literal(v.winner))
        return
    out.append("\nruns autotune choice ", style="dim")
    out.append(literal(c.name))
    if c.tuned_at is not None and c.tuned_at != v.hint:
        out.append(f" (from the hint-{c.tuned_at} table)")
    winner = literal(v.winner or "")
    if c.name == v.winner:
        out.append(" — this hint's autotune winner", style="green")
    elif c.is_winner:
        out.append(f" — the same config as this hint's autotune winner {winner}", style="green")
    else:
        out.append(f" — not this hint's autotune winner {winner}", style="yellow")
        if c.tuned_at == v.hint and c.row is not None and c.winner is not None and c.row.time_us and c.winner.time_us:
            out.append(f" ({numbers.us_text(c.row.time_us)} against {numbers.us_text(c.winner.time_us)})", style="yellow")
        fused = {r.name: r.time_us for r in v.fused}
        if c.tuned_at == v.hint and fused.get(c.name) is not None:
            out.append(f"\npicked by the fusion benchmark: {numbers.us_text(fused[c.name])} fused", style="dim")
            if fused.get(v.winner or "") is not None:
                out.append(f", against {numbers.us_text(fused[v.winner or ''])} for {winner}", style="dim")
