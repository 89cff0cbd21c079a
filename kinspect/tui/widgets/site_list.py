"""The size-hint sites of a session, one per multi-kernel, with findings marked and the
places the model calls each from listed under it (a transformer's layers)."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from kinspect.core.session.model import CallSite, Site
from kinspect.tui.text import literal
from kinspect.core import numbers


class SiteList(OptionList):
    BINDINGS = [
        Binding("j", "cursor_down", "Next site", show=False, id="kinspect.sites.down",
                tooltip="Move to the next site"),
        Binding("k", "cursor_up", "Previous site", show=False, id="kinspect.sites.up",
                tooltip="Move to the previous site"),
    ]

    class SiteHighlighted(Message):
        """The user moved to a site, or to one of its call sites (`call_site`)."""

        def __init__(self, name: str, call_site: int | None = None) -> None:
            super().__init__()
            self.name = name
            self.call_site = call_site

    def __init__(
        self, sites: list[Site], findings: Mapping[str, int], calls: Mapping[str, int],
        call_calls: Mapping[tuple[str, int], int] | None = None, worst: Mapping[str, float] | None = None,
        id: str | None = None,
    ) -> None:
        self._rows: list[tuple[str, int | None]] = []
        super().__init__(*self._build(sites, findings, calls, call_calls or {}, worst or {}), id=id)

    def set_sites(self, sites: list[Site], findings: Mapping[str, int], calls: Mapping[str, int],
                  call_calls: Mapping[tuple[str, int], int] | None = None,
                  worst: Mapping[str, float] | None = None) -> None:
        """Show a new list (a live session gains sites and calls as it runs; measurements
        bring each site's worst regret)."""
        with self.prevent(OptionList.OptionHighlighted):
            self.clear_options()
            self.add_options(self._build(sites, findings, calls, call_calls or {}, worst or {}))

    def show_site(self, name: str) -> None:
        """Highlight a site (unless one of its call sites is); moves made here post no
        SiteHighlighted, only the user's do."""
        current = self.highlighted
        if current is not None and current < len(self._rows) and self._rows[current][0] == name:
            return
        index = self._rows.index((name, None)) if (name, None) in self._rows else None
        if index is not None and self.highlighted != index:
            with self.prevent(OptionList.OptionHighlighted):
                self.highlighted = index

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if event.option_index < len(self._rows):
            name, call_site = self._rows[event.option_index]
            self.post_message(self.SiteHighlighted(name, call_site))

    def _build(self, sites: list[Site], findings: Mapping[str, int], calls: Mapping[str, int],
                 call_calls: Mapping[tuple[str, int], int], worst: Mapping[str, float]) -> list[Option]:
        self._rows = []
        out = []
        for k, s in enumerate(sites):
            self._rows.append((s.name, None))
            out.append(Option(site_prompt(s, findings.get(s.name, 0), calls.get(s.name, 0), worst.get(s.name)),
                              id=f"site-{k}"))
            for c in s.call_sites:
                self._rows.append((s.name, c.index))
                out.append(Option(call_site_prompt(c, call_calls.get((s.name, c.index), 0)), id=f"call-{k}-{c.index}"))
        return out


def site_prompt(site: Site, findings: int, calls: int, worst: float | None = None) -> Text:
    """Two lines: the name, marked `!` when it has findings, and its worst regret where it
    was measured (red beyond noise); its op, variants and calls (and how many places call
    it, when several share it)."""
    out = Text()
    out.append("! " if findings else "  ", style="bold yellow")
    out.append(literal(site.name))
    if worst is not None:
        out.append(" " + numbers.ratio(worst), style="bold red" if worst > 1.0 else "green")
    detail = f"{literal(site.op)} · {len(site.variants)}v"
    if len(site.call_sites) > 1:
        detail += f" · {len(site.call_sites)} callers"
    if calls:
        detail += f" · {calls} calls"
    out.append("\n  " + detail, style="dim")
    return out


def call_site_prompt(call: CallSite, calls: int) -> Text:
    """One line under its site: the user's module path (or Inductor's buffer), its calls."""
    out = Text("  └ ", style="dim")
    out.append(literal(call.label))
    if calls:
        out.append(f" {calls}", style="dim")
    return out
