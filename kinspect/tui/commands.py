"""The command palette's entries: every keyed action, plus exports, heuristics and sites.

The app lists them (`palette_commands`), from its own bindings and its tabs', so a new
key is in the palette without being listed twice; actions that do not apply now
(measuring a recording) are left out, as the footer dims them. This provider only
offers and matches them; it needs nothing of the app but that list.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, cast

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider

PaletteCommand = tuple[str, str, Callable[[], object]]
"""A title, its help (parsed as markup by the palette: no session text), what it runs."""


class PaletteHost(Protocol):
    def palette_commands(self) -> list[PaletteCommand]: ...


class InspectorCommands(Provider):
    def _commands(self) -> list[PaletteCommand]:
        return cast(PaletteHost, self.app).palette_commands()

    async def discover(self) -> Hits:
        for title, help, command in self._commands():
            yield DiscoveryHit(Text(title), command, text=title, help=help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help, command in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, Text(title), command, text=title, help=help)
