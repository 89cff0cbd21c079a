"""The command palette's entries: every keyed action, plus sites and heuristics.

Actions come from the app's own bindings, so a new key is in the palette without being
listed twice; actions that do not apply now (measuring a recording) are left out, as
the footer dims them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider

from kinspect.core.dispatch.heuristics import HEURISTICS
from kinspect.tui.dialogs import FORMAT_TITLES
from kinspect.tui.text import literal

if TYPE_CHECKING:
    from kinspect.tui.app import InspectorApp


class InspectorCommands(Provider):
    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        app: InspectorApp = self.app  # type: ignore[assignment]
        out: list[tuple[str, str, Callable[[], object]]] = []
        for b in app.palette_bindings():
            out.append((b.description, b.tooltip, partial(app.run_from_palette, b.action)))
        for fmt, title in FORMAT_TITLES.items():
            out.append((f"Export: {title}", f"Write the session as a {title}", partial(app.action_export, fmt)))
        for name, h in HEURISTICS.items():
            out.append((f"What-if heuristic: decide by {name} ({h.title})", h.doc,
                        partial(app.use_heuristic, name)))
        for site in app.source.session.sites:
            # help text is parsed as markup by the palette: keep session text out of it
            out.append((f"Site: {literal(site.name)}", f"Show this site ({len(site.variants)} variants)",
                        partial(app.show_site, site.name)))
        return out

    async def discover(self) -> Hits:
        for title, help, command in self._commands():
            yield DiscoveryHit(Text(title), command, text=title, help=help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help, command in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, Text(title), command, text=title, help=help)
