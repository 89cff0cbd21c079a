"""The size-hint sites of a session, one per multi-kernel, with findings marked."""

from __future__ import annotations

from collections.abc import Mapping

from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from kinspect.core.session import Site
from kinspect.tui.present import site_prompt


class SiteList(OptionList):
    BINDINGS = [
        Binding("j", "cursor_down", "Next site", show=False, id="kinspect.sites.down",
                tooltip="Move to the next site"),
        Binding("k", "cursor_up", "Previous site", show=False, id="kinspect.sites.up",
                tooltip="Move to the previous site"),
    ]

    class SiteHighlighted(Message):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    def __init__(
        self, sites: list[Site], findings: Mapping[str, int], calls: Mapping[str, int], id: str | None = None
    ) -> None:
        super().__init__(*_options(sites, findings, calls), id=id)

    def set_sites(self, sites: list[Site], findings: Mapping[str, int], calls: Mapping[str, int]) -> None:
        """Show a new list (a live session gains sites and calls as it runs)."""
        with self.prevent(OptionList.OptionHighlighted):
            self.clear_options()
            self.add_options(_options(sites, findings, calls))

    def show_site(self, name: str) -> None:
        """Highlight a site; moves made here post no SiteHighlighted, only the user's do."""
        index = self.get_option_index(name)
        if self.highlighted != index:
            with self.prevent(OptionList.OptionHighlighted):
                self.highlighted = index

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        if event.option_id is not None:
            self.post_message(self.SiteHighlighted(event.option_id))


def _options(sites: list[Site], findings: Mapping[str, int], calls: Mapping[str, int]) -> list[Option]:
    return [Option(site_prompt(s, findings.get(s.name, 0), calls.get(s.name, 0)), id=s.name) for s in sites]
