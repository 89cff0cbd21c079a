"""The one list of tabs: each tab's id, title, number key and pane class.

The app builds its tabs, their number keys, the focus each key gives and the help from
this list alone, so a new tab is one entry here and a pane class. A tab whose id or key
another already has is refused when the list is made: a tenth tab cannot silently take
key 9 from Ranks.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from textual.binding import Binding

from kinspect.tui.panes.base import InspectorPane

TABS_GROUP = Binding.Group("Tabs", compact=True)


@dataclass(frozen=True)
class Tab:
    id: str
    title: str
    key: str
    pane: type[InspectorPane]
    tooltip: str = ""
    absent: str = ""
    """Said when the tab's key is pressed and the session has no such tab."""

    def binding(self) -> Binding:
        return Binding(self.key, f"show_tab('{self.id}')", self.title, id=f"kinspect.tab.{self.id}",
                       tooltip=self.tooltip or f"Show the {self.id} tab", group=TABS_GROUP)


class Tabs:
    def __init__(self, tabs: Iterable[Tab]) -> None:
        self._tabs: dict[str, Tab] = {}
        keys: dict[str, str] = {}
        for tab in tabs:
            if tab.id in self._tabs:
                raise ValueError(f"two tabs have the id {tab.id!r}")
            if tab.key in keys:
                raise ValueError(f"tabs {keys[tab.key]!r} and {tab.id!r} both want key {tab.key!r}")
            self._tabs[tab.id] = tab
            keys[tab.key] = tab.id

    def __iter__(self) -> Iterator[Tab]:
        return iter(self._tabs.values())

    def __getitem__(self, tab_id: str) -> Tab:
        return self._tabs[tab_id]

    def __contains__(self, tab_id: object) -> bool:
        return tab_id in self._tabs

    def keyed(self, key: str) -> Tab | None:
        return next((tab for tab in self if tab.key == key), None)

    def bindings(self) -> list[Binding]:
        """A number key per tab, in the list's order."""
        return [tab.binding() for tab in self]

    def pane_bindings(self) -> Iterator[tuple[Tab, Binding]]:
        """Each key a pane binds itself, with the first tab that binds it."""
        seen: set[str | None] = set()
        for tab in self:
            for b in tab.pane.own_bindings():
                if b.id not in seen:
                    seen.add(b.id)
                    yield tab, b
