"""The inspector app: one session source in, every decision shown as core makes it.

State flows one way. Widgets report what the user did by message (a site highlighted,
a shape typed, a variant selected); the app asks `kinspect.core` what follows and hands
each widget what it shows. Measuring runs in a thread worker that only posts messages.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import reactive
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from kinspect.core.errors import KinspectError, ShapeError
from kinspect.core.explain import SiteExplanation, explain_site
from kinspect.core.heuristics import HEURISTICS
from kinspect.core.session import Site
from kinspect.core.shapes import Key, ParsedShape, format_key, parse_shape
from kinspect.tui.commands import InspectorCommands
from kinspect.tui.help_screen import HelpScreen
from kinspect.tui.messages import MeasureFinished, MeasureProgress
from kinspect.tui.observed import EventIndex
from kinspect.tui.present import SYMBOLIC_LEGEND, decision_summary, identical_to, literal, runtime_env
from kinspect.tui.source import SessionSource
from kinspect.tui.widgets.banner import Banner
from kinspect.tui.widgets.decision_summary import DecisionSummary
from kinspect.tui.widgets.diff_view import DiffView
from kinspect.tui.widgets.findings_list import FindingsList
from kinspect.tui.widgets.measure_bar import MeasureBar
from kinspect.tui.widgets.shape_entry import ShapeEntry, ShapeInput
from kinspect.tui.widgets.site_list import SiteList
from kinspect.tui.widgets.source_view import SourceView
from kinspect.tui.widgets.symbolic_table import SymbolicTable
from kinspect.tui.widgets.variants_table import VariantsTable

TABS = Binding.Group("Tabs", compact=True)
SITES = Binding.Group("Site", compact=True)
TAB_IDS = ("variants", "source", "diff", "symbolic", "findings")


class InspectorApp(App[None]):
    CSS_PATH = "inspector.tcss"
    TITLE = "kinspect"
    COMMANDS = App.COMMANDS | {InspectorCommands}
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    BINDINGS = [
        Binding("q", "quit", "Quit", id="kinspect.quit", tooltip="Leave the inspector"),
        Binding("question_mark", "help", "Help", id="kinspect.help",
                tooltip="Every key, and how to type a shape"),
        Binding("slash", "edit_shape", "Shape", id="kinspect.shape",
                tooltip="Type a runtime shape such as B=1000 N=64"),
        Binding("m", "measure", "Measure", id="kinspect.measure",
                tooltip="Time every variant of this site at the current shape (live sessions only)"),
        Binding("escape", "cancel_measure", "Cancel", id="kinspect.cancel",
                tooltip="Stop the running measurement"),
        Binding("t", "toggle_terms", "Terms", id="kinspect.terms",
                tooltip="Show or hide each variant's distance per tensor dimension"),
        Binding("h", "next_heuristic", "What-if", id="kinspect.heuristic",
                tooltip="What-if: decide by the next distance heuristic"),
        Binding("d", "diff_selected", "Diff", id="kinspect.diff",
                tooltip="Diff the selected variant's source against the chosen one's"),
        Binding("left_square_bracket", "step_site(-1)", "Previous site", id="kinspect.site.prev",
                tooltip="Go to the previous site", group=SITES),
        Binding("right_square_bracket", "step_site(1)", "Next site", id="kinspect.site.next",
                tooltip="Go to the next site", group=SITES),
        *(
            Binding(str(i), f"show_tab('{tab}')", tab.capitalize(), id=f"kinspect.tab.{tab}",
                    tooltip=f"Show the {tab} tab", group=TABS)
            for i, tab in enumerate(TAB_IDS, 1)
        ),
    ]

    measuring: reactive[bool] = reactive(False, bindings=True)
    """A measurement is running; `m` is disabled and escape cancels."""

    def __init__(self, source: SessionSource) -> None:
        super().__init__()
        self.source = source
        self.session = source.session
        self.heuristic = "inductor"
        self.show_terms = False
        self.site: Site | None = self.session.sites[0] if self.session.sites else None
        self.shape: ParsedShape | None = None
        self.explanation: SiteExplanation | None = None
        self.selected = 0
        self._events = EventIndex(self.session.events)
        self._cancel = threading.Event()

    # ------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        findings = Counter(f.site for f in self.session.findings if f.site)
        yield Banner(self.source.banner(), live=self.source.live, truncated=bool(self.session.truncated),
                     id="banner")
        with Horizontal(id="main"):
            yield SiteList(self.session.sites, findings, self._events.calls, id="sites")
            with Vertical(id="work"):
                yield ShapeEntry(self._initial_shape(), self._symbol_names(), id="shape")
                with TabbedContent(id="tabs"):
                    with TabPane("Variants", id="variants"):
                        with VerticalScroll(id="decision"):
                            yield VariantsTable(id="variants-table")
                            yield DecisionSummary(id="summary")
                        yield SourceView(id="preview")
                    with TabPane("Source", id="source"):
                        yield SourceView(id="source-view")
                    with TabPane("Diff", id="diff"):
                        yield DiffView(id="diff-view")
                    with TabPane("Symbolic", id="symbolic"):
                        yield Static(Text(SYMBOLIC_LEGEND, style="dim"), id="symbolic-legend")
                        yield SymbolicTable(id="symbolic-table")
                    with TabPane(f"Findings ({len(self.session.findings)})", id="findings"):
                        yield FindingsList(self.session.findings, id="findings-list")
        yield MeasureBar(id="measure-bar")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        try:
            self.shape = parse_shape(self.query_one(ShapeEntry).text)
        except ShapeError:
            self.shape = None
        if self.site is None:
            self._show_no_sites()
        else:
            self.show_site(self.site.name)
        self.query_one(VariantsTable).focus()

    def _initial_shape(self) -> str:
        values = {s.label: s.example for s in self.session.symbols if s.example is not None}
        if not values and self.session.model.workload:
            values = dict(self.session.model.workload[0])
        return " ".join(f"{k}={v}" for k, v in values.items())

    def _symbol_names(self) -> list[list[str]]:
        return [[s.alias, s.name] if s.alias else [s.name] for s in self.session.symbols]

    def _show_no_sites(self) -> None:
        reasons = [f"{literal(g.name)}: {literal(g.no_site_reason)}" for g in self.session.graphs if g.no_site_reason]
        text = "This session has no size-hint multi-kernel sites."
        if reasons:
            text += "\n" + "\n".join(reasons)
        self.query_one(DecisionSummary).show(Text(text))

    # ------------------------------------------------------------ deciding

    def show_site(self, name: str) -> None:
        self.site = self.session.site(name)
        self.query_one(SiteList).show_site(name)
        self._redecide()
        chosen = self.explanation.decision.chosen if self.explanation and self.explanation.decision else 0
        other = (chosen + 1) % len(self.site.variants)
        self.query_one(DiffView).show(self.site, chosen, other)

    def use_heuristic(self, name: str) -> None:
        self.heuristic = name
        self._redecide()

    def _redecide(self) -> None:
        """Decide the current site for the current shape and hand every widget its part."""
        site = self.site
        if site is None or self.shape is None:
            return
        expl = explain_site(self.session, site, self.shape, self.heuristic)
        self.explanation = expl
        self.query_one(ShapeEntry).site_error = expl.error
        peak = self.session.environment.peaks.get("tflops_bf16")
        self.query_one(VariantsTable).show(expl, peak, self.show_terms)
        summary = self.query_one(DecisionSummary)
        if expl.decision is None or expl.runtime_key is None:
            summary.show(Text(f"{literal(site.name)} cannot be decided for this shape: {literal(str(expl.error))}",
                              style="yellow"))
        else:
            observed = self._events.at(site.name, expl.runtime_key)
            summary.show(decision_summary(expl, observed, self.source.can_measure))
            self._select(expl.decision.chosen)
        if self.query_one(TabbedContent).active == "symbolic":
            self._show_symbolic()

    def _show_symbolic(self) -> None:
        """Fill the symbolic tab; only while it is visible, as it changes on every keystroke."""
        if self.site is not None:
            key = self.explanation.runtime_key if self.explanation else None
            self.query_one(SymbolicTable).show(self.site, runtime_env(self.session, self.shape), key)

    def _select(self, index: int) -> None:
        assert self.site is not None
        self.selected = index
        variant = self.site.variants[index]
        twin = identical_to(self.site).get(index)
        self.query_one("#source-view", SourceView).show(variant, twin)
        self.query_one("#preview", SourceView).show(variant, twin)  # shown from 120 columns

    # ------------------------------------------------------------ messages up

    @on(SiteList.SiteHighlighted)
    def _site_highlighted(self, event: SiteList.SiteHighlighted) -> None:
        if self.site is None or event.name != self.site.name:
            self.show_site(event.name)

    @on(FindingsList.SiteRequested)
    def _finding_chosen(self, event: FindingsList.SiteRequested) -> None:
        self.show_site(event.site)
        self.action_show_tab("variants")

    @on(ShapeEntry.Changed)
    def _shape_typed(self, event: ShapeEntry.Changed) -> None:
        if event.shape is not None:
            self.shape = event.shape
            self._redecide()

    @on(ShapeEntry.Done)
    def _shape_done(self) -> None:
        self.query_one(VariantsTable).focus()

    @on(VariantsTable.VariantHighlighted)
    def _variant_highlighted(self, event: VariantsTable.VariantHighlighted) -> None:
        if self.site is not None and 0 <= event.index < len(self.site.variants):
            self._select(event.index)

    @on(TabbedContent.TabActivated, pane="#symbolic")
    def _symbolic_shown(self) -> None:
        self._show_symbolic()

    @on(DataTable.RowSelected, "#variants-table")
    def _variant_opened(self, event: DataTable.RowSelected) -> None:
        self.action_show_tab("source")

    # ------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "measure":
            return True if self.source.can_measure and not self.measuring else None
        if action == "cancel_measure":
            return self.measuring
        return True

    def palette_bindings(self) -> list[Binding]:
        """The app's keyed actions that apply now, for the command palette."""
        out = []
        for b in self.BINDINGS:
            assert isinstance(b, Binding)
            if self.check_action(b.action.split("(")[0], ()) is True:
                out.append(b)
        return out

    def help_bindings(self) -> Iterator[tuple[str, Binding]]:
        for where, cls in (("anywhere", InspectorApp), ("shape", ShapeInput), ("variants", VariantsTable),
                           ("sites", SiteList), ("symbolic", SymbolicTable), ("findings", FindingsList),
                           ("help", HelpScreen)):
            for b in cls.BINDINGS:
                assert isinstance(b, Binding)
                yield where, b

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.help_bindings()))

    def action_edit_shape(self) -> None:
        self.action_show_tab("variants")
        self.query_one(ShapeInput).focus()

    def action_show_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        focus = {"variants": VariantsTable, "symbolic": SymbolicTable, "findings": FindingsList}.get(tab)
        if focus is not None:
            self.query_one(focus).focus()
        elif tab == "source":
            self.query_one("#source-view", SourceView).focus()

    def action_step_site(self, step: int) -> None:
        sites = self.session.sites
        if self.site is not None:
            i = sites.index(self.site)
            self.show_site(sites[(i + step) % len(sites)].name)

    def action_toggle_terms(self) -> None:
        self.show_terms = not self.show_terms
        self._redecide()

    def action_next_heuristic(self) -> None:
        names = list(HEURISTICS)
        self.use_heuristic(names[(names.index(self.heuristic) + 1) % len(names)])
        self.notify(f"deciding by {self.heuristic}: {HEURISTICS[self.heuristic].title}", timeout=3, markup=False)

    def action_diff_selected(self) -> None:
        if self.site is None:
            return
        d = self.explanation.decision if self.explanation else None
        a = d.chosen if d is not None else 0
        b = self.selected if self.selected != a else (a + 1) % len(self.site.variants)
        self.query_one(DiffView).show(self.site, a, b)
        self.action_show_tab("diff")

    # ------------------------------------------------------------ measuring

    def action_measure(self) -> None:
        expl = self.explanation
        if self.site is None or expl is None or expl.runtime_key is None:
            self.notify("type a shape this site accepts first", severity="warning")
            return
        self._cancel = threading.Event()
        self.measuring = True
        self.query_one(MeasureBar).start(f"measuring {self.site.name} at {format_key(expl.runtime_key)}")
        self._measure(self.site, expl.runtime_key, self._cancel)

    def action_cancel_measure(self) -> None:
        self._cancel.set()
        self.query_one(MeasureBar).cancelling()

    @work(thread=True, exclusive=True, group="measure", exit_on_error=False)
    def _measure(self, site: Site, key: Key, cancel: threading.Event) -> None:
        def progress(done: int, total: int, what: str) -> None:
            self.post_message(MeasureProgress(done, total, what))

        found = self.source.measure(site, key, progress, cancel)
        self.post_message(MeasureFinished(site.name, key, list(found), cancel.is_set()))

    def on_measure_progress(self, message: MeasureProgress) -> None:
        self.query_one(MeasureBar).advance(message.done, message.total, message.what)

    def on_measure_finished(self, message: MeasureFinished) -> None:
        self.session.measurements.extend(message.measurements)
        self.measuring = False
        self.query_one(MeasureBar).stop()
        n = len(message.measurements)
        what = "cancelled after" if message.cancelled else "measured"
        self.notify(f"{what} {n} variant{'s' if n != 1 else ''} of {literal(message.site)}", markup=False)
        self._redecide()

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "measure" or event.state != WorkerState.ERROR:
            return
        self.measuring = False
        self.query_one(MeasureBar).stop()
        err = event.worker.error
        text = str(err) if isinstance(err, KinspectError) else f"measurement failed: {type(err).__name__}: {err}"
        self.notify(literal(text), severity="error", markup=False, timeout=10)

    def on_unmount(self) -> None:
        self._cancel.set()
