"""The session's findings grouped by kind, one sentence each; choosing one goes to its site."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from kinspect.core.quality.finding_groups import SHOWN_GROUPS, SHOWN_MEMBERS, FindingGroup, group_findings, more_text
from kinspect.core.session.model import Finding
from kinspect.tui.text import literal


class FindingsList(OptionList):
    """Findings by kind, worst first (`group_findings`, as explain and the report show
    them): a kind found once is its one line; a kind found more often is a heading that
    enter opens and closes. Headings start open unless the session has more findings
    than fit a screen, so a 53-finding Llama reads as a handful of lines."""

    BINDINGS = [
        Binding("j", "cursor_down", "Next finding", show=False, id="kinspect.findings.down",
                tooltip="Move to the next finding"),
        Binding("k", "cursor_up", "Previous finding", show=False, id="kinspect.findings.up",
                tooltip="Move to the previous finding"),
    ]

    class SiteRequested(Message):
        def __init__(self, site: str) -> None:
            super().__init__()
            self.site = site

    def __init__(self, findings: list[Finding], id: str | None = None) -> None:
        self._take(findings)
        super().__init__(*self._entries(), id=id)

    def set_findings(self, findings: list[Finding]) -> None:
        self._take(findings)
        self._rebuild()

    def _take(self, findings: list[Finding]) -> None:
        self._findings = findings
        self._groups = group_findings(findings)
        self._open = {g.kind for g in self._groups} if len(findings) <= OPEN_UP_TO else set()

    def _rebuild(self) -> None:
        highlighted = self.highlighted
        self.clear_options()
        self.add_options(self._entries())
        if highlighted is not None and self.option_count:
            self.highlighted = min(highlighted, self.option_count - 1)

    def _entries(self) -> list[Option]:
        if not self._findings:
            return [Option(Text("No findings in this session.", style="dim"), disabled=True)]
        index = {id(f): i for i, f in enumerate(self._findings)}
        out = []
        for g in self._groups[:SHOWN_GROUPS]:
            if len(g.members) == 1:
                out.append(Option(finding_prompt(g.members[0]), id=f"f{index[id(g.members[0])]}"))
                continue
            is_open = g.kind in self._open
            out.append(Option(group_prompt(g, is_open), id=f"g{g.kind}"))
            if is_open:
                shared = g.shared
                if shared is not None:
                    out.append(Option(Text("  ").append_text(shared_prompt(g, shared)), disabled=True))
                out += [Option(Text("  ").append_text(finding_prompt(f, g.own(f))), id=f"f{index[id(f)]}")
                        for f in g.members[:SHOWN_MEMBERS]]
                more = more_text(len(g.members) - SHOWN_MEMBERS, f"{g.kind} findings")
                if more:
                    out.append(Option(Text("  " + literal(more), style="dim"), disabled=True))
        more = more_text(len(self._groups) - SHOWN_GROUPS, "kinds of finding")
        if more:
            out.append(Option(Text(literal(more), style="dim"), disabled=True))
        return out

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        chosen = event.option_id or ""
        if chosen.startswith("g"):
            self._open ^= {chosen[1:]}
            self._rebuild()
        elif chosen.startswith("f"):
            site = self._findings[int(chosen[1:])].site
            if site is not None:
                self.post_message(self.SiteRequested(site))


OPEN_UP_TO = 12
"""Findings a session may have for its headings to start open."""


SEVERITY_STYLE = {"info": "cyan", "warning": "yellow", "error": "bold red"}


def group_prompt(g: FindingGroup, is_open: bool) -> Text:
    out = Text()
    out.append(f"{g.severity:<7} ", style=SEVERITY_STYLE.get(g.severity, ""))
    out.append(("▾ " if is_open else "▸ ") + literal(g.title), style="bold")
    if not is_open:
        out.append("  enter: show them", style="dim")
    return out


def shared_prompt(g: FindingGroup, shared: str) -> Text:
    """What every member of a group says alike, once, with its sites."""
    out = Text()
    out.append(f"{g.severity:<7} ", style=SEVERITY_STYLE.get(g.severity, ""))
    out.append(literal(", ".join(g.sites) or "each"), style="bold")
    out.append(": " + literal(shared))
    return out


def finding_prompt(f: Finding, text: str | None = None) -> Text:
    """One finding: its site and variants, then `text` (its message, else what it says
    beyond its group's shared text: "" where it says nothing more)."""
    out = Text()
    out.append(f"{f.severity:<7} ", style=SEVERITY_STYLE.get(f.severity, ""))
    where = f.site or f.graph
    message = f.message if text is None else text
    if where:
        out.append(literal(where), style="bold")
        if f.variants:
            out.append(" " + ",".join(f"v{i}" for i in f.variants))
        if message:
            out.append(": ")
    if message:
        out.append(literal(message))
    elif where:
        out.append(" (as above)", style="dim")
    return out
