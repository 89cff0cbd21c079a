"""The session's findings, one sentence each; choosing one goes to its site."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from kinspect.core.session.model import Finding
from kinspect.tui.text import literal


class FindingsList(OptionList):
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
        super().__init__(*_options(findings), id=id)
        self._findings = findings

    def set_findings(self, findings: list[Finding]) -> None:
        self._findings = findings
        self.clear_options()
        self.add_options(_options(findings))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_id is not None:
            site = self._findings[int(event.option_id)].site
            if site is not None:
                self.post_message(self.SiteRequested(site))


def _options(findings: list[Finding]) -> list[Option]:
    if findings:
        return [Option(finding_prompt(f), id=str(i)) for i, f in enumerate(findings)]
    return [Option(Text("No findings in this session.", style="dim"), disabled=True)]


SEVERITY_STYLE = {"info": "cyan", "warning": "yellow", "error": "bold red"}


def finding_prompt(f: Finding) -> Text:
    out = Text()
    out.append(f"{f.severity:<7} ", style=SEVERITY_STYLE.get(f.severity, ""))
    where = f.site or f.graph
    if where:
        out.append(literal(where), style="bold")
        if f.variants:
            out.append(" " + ",".join(f"v{i}" for i in f.variants))
        out.append(": ")
    out.append(literal(f.message))
    return out
