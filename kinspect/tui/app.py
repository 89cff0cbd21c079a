"""The inspector app: one session source in, every decision shown as core makes it.

State flows one way. Widgets report what the user did by message (a site highlighted,
a shape typed, a variant selected); the app asks `kinspect.core` what follows and hands
each widget what it shows. Compiling, measuring and the debugger's run of a live model
happen in thread workers that only post messages.

The debugger has one set of keys for both kinds of session: over a recording it moves a
replay cursor both ways; over a live model it pauses the model's thread before a
dispatch (`PauseGate`) and may force the variant that runs. Its keys act in the
Debugger and Timeline tabs, where the footer shows them.
"""

from __future__ import annotations

import functools
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.driver import Driver
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import reactive
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from kinspect.core.errors import KinspectError, ShapeError
from kinspect.core.explain import SiteExplanation, explain_site
from kinspect.core.heuristics import HEURISTICS
from kinspect.core.session import Site
from kinspect.core.shapes import FullKey, Key, ParsedShape, SymbolShape, format_key, parse_shape
from kinspect.core.stepping import PauseGate
from kinspect.tui.commands import InspectorCommands
from kinspect.tui.debug_text import debugger_text
from kinspect.tui.debugger import IDLE, PAUSED, RUNNING, Debugger
from kinspect.tui.dialogs import ExportScreen, JumpScreen, OverrideScreen
from kinspect.tui.help_screen import HelpScreen
from kinspect.tui.live_run import RunStop, SourceGuard
from kinspect.tui.messages import (
    BaselinesFinished,
    LivePaused,
    LiveStepDone,
    MeasureFinished,
    MeasureProgress,
    PrepareProgress,
)
from kinspect.tui.observed import EventIndex
from kinspect.tui.present import SYMBOLIC_LEGEND, decision_summary, literal, runtime_env
from kinspect.tui.source import BaselineSource, SessionSource, SteppableSource
from kinspect.tui.widgets.banner import Banner
from kinspect.tui.widgets.debug_panel import BreakpointList, ConditionEntry, ConditionInput, EventPanel
from kinspect.tui.widgets.decision_summary import DecisionSummary
from kinspect.tui.widgets.diff_view import DiffView
from kinspect.tui.widgets.findings_list import FindingsList
from kinspect.tui.widgets.measure_bar import MeasureBar
from kinspect.tui.widgets.shape_entry import ShapeEntry, ShapeInput
from kinspect.tui.widgets.site_list import SiteList
from kinspect.tui.widgets.source_view import SourceView
from kinspect.tui.widgets.symbolic_table import SymbolicTable
from kinspect.tui.widgets.timeline_view import TimelineView
from kinspect.tui.widgets.variants_table import VariantsTable

TABS = Binding.Group("Tabs", compact=True)
SITES = Binding.Group("Site", compact=True)
STEPS = Binding.Group("Step", compact=True)
CONTINUE = Binding.Group("Continue", compact=True)
ENDS = Binding.Group("First/last")
BREAKS = Binding.Group("Break", compact=True)
TAB_IDS = ("variants", "source", "diff", "symbolic", "findings", "debugger", "timeline")
DEBUG_TABS = ("debugger", "timeline")

REPLAY_ONLY = {"debug_back", "debug_reverse", "debug_jump", "debug_first", "debug_last"}
DEBUG_ACTIONS = REPLAY_ONLY | {"debug_step", "debug_continue", "debug_restart", "debug_override",
                               "break_site", "break_miss", "break_not_fastest", "break_when"}


_Handler = TypeVar("_Handler", bound=Callable[..., Any])


def _while_running(handler: _Handler) -> _Handler:
    """For what a worker reports: a report can arrive while the app shuts down (a compile
    that ends as the user quits), when the widgets it would update are already gone."""

    @functools.wraps(handler)
    def guarded(self: InspectorApp, *args: Any) -> Any:
        if self.is_running:
            return handler(self, *args)
        return None

    return guarded  # type: ignore[return-value]


class InspectorApp(App[None]):
    CSS_PATH = "inspector.tcss"
    TITLE = "kinspect"
    COMMANDS = App.COMMANDS | {InspectorCommands}
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    BINDINGS = [
        Binding("q", "quit", "Quit", id="kinspect.quit", tooltip="Leave the inspector"),
        Binding("question_mark", "help", "Help", id="kinspect.help",
                tooltip="Every key, and how to type a shape"),
        Binding("n,f10", "debug_step", "Step", id="kinspect.debug.step", group=STEPS,
                tooltip="Go to the next event; live: run the paused dispatch and pause before the next "
                        "(the first press starts the workload paused at its first dispatch)"),
        Binding("p", "debug_back", "Back", id="kinspect.debug.back", group=STEPS,
                tooltip="Go to the previous event (recordings)"),
        Binding("c,f5", "debug_continue", "Continue", id="kinspect.debug.continue", group=CONTINUE,
                tooltip="Go on to the next event where a breakpoint stops; live: run the model until one does"),
        Binding("C", "debug_reverse", "Reverse", id="kinspect.debug.reverse", group=CONTINUE,
                tooltip="Go back to the previous event where a breakpoint stops (recordings)"),
        Binding("R", "debug_restart", "Restart", id="kinspect.debug.restart",
                tooltip="Live: rerun the workload and pause at its first dispatch; "
                        "recordings: go back to before the first event"),
        Binding("o", "debug_override", "Override", id="kinspect.debug.override",
                tooltip="Live, paused: then its number: run that variant for this call instead of Inductor's pick"),
        Binding("b", "break_site", "At site", id="kinspect.break.site", group=BREAKS,
                tooltip="Add or remove a breakpoint at the selected site"),
        Binding("B", "break_miss", "On miss", id="kinspect.break.miss", group=BREAKS,
                tooltip="Add or remove a breakpoint on every cache miss"),
        Binding("f", "break_not_fastest", "Not fastest", id="kinspect.break.not_fastest", group=BREAKS,
                tooltip="Add or remove a breakpoint where the pick is slower than the fastest measured variant"),
        Binding("w", "break_when", "When…", id="kinspect.break.when", group=BREAKS,
                tooltip="Type a condition (B > 512 and miss) to break on"),
        Binding("g", "debug_jump", "Jump", id="kinspect.debug.jump",
                tooltip="Go to an event by number: type it, then enter (recordings)"),
        Binding("home", "debug_first", "First", id="kinspect.debug.first", group=ENDS,
                tooltip="Go to the first event (recordings)"),
        Binding("end", "debug_last", "Last", id="kinspect.debug.last", group=ENDS,
                tooltip="Go to the last event (recordings)"),
        Binding("slash", "edit_shape", "Shape", id="kinspect.shape",
                tooltip="Type a runtime shape such as B=1000 N=64"),
        Binding("m", "measure", "Measure", id="kinspect.measure",
                tooltip="Time every variant of this site at the current shape (live sessions only)"),
        Binding("a", "baselines", "Baselines", id="kinspect.baselines",
                tooltip="Live: time the whole model at this shape eager, compiled static, with this size as "
                        "its only hint, and hinted (minutes: each compiles afresh in a process of its own)"),
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
        Binding("e", "export", "Export", id="kinspect.export",
                tooltip="Write the session as JSON, a Markdown report or a Perfetto trace"),
    ]

    measuring: reactive[bool] = reactive(False, bindings=True)
    """A measurement is running; `m` is disabled and escape cancels."""
    preparing: reactive[bool] = reactive(False, bindings=True)
    """A live source is compiling; sites appear when it is done."""

    def __init__(self, source: SessionSource, driver_class: type[Driver] | None = None) -> None:
        super().__init__(driver_class=driver_class)
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
        self._quit = threading.Event()
        self._steppable = source if isinstance(source, SteppableSource) and source.live else None
        self.debugger = Debugger(self.session, live=self._steppable is not None)
        self._run_stop: RunStop | None = None
        self._guard = SourceGuard(getattr(source, "close", None))
        self._activity: str | None = None
        """What the live source last said during the debugger's run (a recompile's progress)."""
        self._keys_state: tuple[bool | None, ...] = ()
        self._diff_pair: tuple[int, int] | None = None
        """Variants the diff tab shows next time it is shown."""

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
                    with TabPane("Debugger", id="debugger"), Vertical(id="debug-body"):
                        yield EventPanel(id="event-panel")
                        yield VariantsTable(id="debug-variants")
                        with Vertical(id="breakpoints"):
                            yield BreakpointList(id="breakpoint-list")
                            yield ConditionEntry(id="condition")
                    with TabPane("Timeline", id="timeline"):
                        with Vertical(id="timeline-box"):
                            yield TimelineView(id="timeline-view")
        yield MeasureBar(id="measure-bar")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        try:
            self.shape = parse_shape(self.query_one(ShapeEntry).text)
        except ShapeError:
            self.shape = None
        self.query_one(BreakpointList).show(self.debugger.breakpoints)
        self.query_one(ConditionEntry).set_fields(self.debugger.ctx.field_names())
        if not self.source.prepared:
            self.preparing = True
            self.query_one(MeasureBar).start("compiling…")
            self._prepare(self._quit)
        if self.site is None:
            self._show_no_sites()
        else:
            self.show_site(self.site.name)
        self._show_debugger()
        self.query_one("#variants-table", VariantsTable).focus()

    def _initial_shape(self) -> str:
        values = {s.label: s.example for s in self.session.symbols if s.example is not None}
        if not values and self.session.model.workload:
            values = dict(self.session.model.workload[0])
        return " ".join(f"{k}={v}" for k, v in values.items())

    def _symbol_names(self) -> list[list[str]]:
        return [[s.alias, s.name] if s.alias else [s.name] for s in self.session.symbols]

    def _show_no_sites(self) -> None:
        if self.preparing:
            self.query_one(DecisionSummary).show(
                Text("compiling… the sites appear when the model has compiled and run", style="dim"))
            return
        reasons = [f"{literal(g.name)}: {literal(g.no_site_reason)}" for g in self.session.graphs if g.no_site_reason]
        text = "This session has no size-hint multi-kernel sites."
        if reasons:
            text += "\n" + "\n".join(reasons)
        self.query_one(DecisionSummary).show(Text(text))

    def _reload_session(self) -> None:
        """Show the source's session as it is now: compiled at last, or grown by a live run."""
        self.session = session = self.source.session
        self._events = EventIndex(session.events)
        findings = Counter(f.site for f in session.findings if f.site)
        self.query_one(SiteList).set_sites(session.sites, findings, self._events.calls)
        self.query_one(FindingsList).set_findings(session.findings)
        self.query_one(TabbedContent).get_tab("findings").label = f"Findings ({len(session.findings)})"
        self.query_one(Banner).say(self.source.banner(), bool(session.truncated))
        self.query_one(ShapeEntry).set_symbols(self._initial_shape(), self._symbol_names())
        self.debugger.load(session)
        self.query_one(ConditionEntry).set_fields(self.debugger.ctx.field_names())
        names = [s.name for s in session.sites]
        if self.site is not None and self.site.name in names:
            self.show_site(self.site.name)
        elif names:
            self.show_site(names[0])
        else:
            self.site = None
            self._show_no_sites()
        self._show_debugger()

    # ------------------------------------------------------------ deciding

    def show_site(self, name: str, timeline: bool = True) -> None:
        self.site = self.session.site(name)
        self.query_one(SiteList).show_site(name)
        self._redecide()
        chosen = self.explanation.decision.chosen if self.explanation and self.explanation.decision else 0
        self._diff_pair = (chosen, (chosen + 1) % len(self.site.variants))
        tab = self.query_one(TabbedContent).active
        if tab == "diff":
            self._show_diff()
        elif tab == "timeline" and timeline:
            self._show_timeline()

    def _show_diff(self) -> None:
        """The diff's selectors cost a rebuild per site, so the tab fills only when shown."""
        if self.site is not None and self._diff_pair is not None:
            self.query_one(DiffView).show(self.site, *self._diff_pair)
            self._diff_pair = None

    def use_heuristic(self, name: str) -> None:
        self.heuristic = name
        self._redecide()
        self._show_debugger()

    def _redecide(self) -> None:
        """Decide the current site for the current shape and hand every widget its part."""
        site = self.site
        if site is None or self.shape is None:
            return
        expl = explain_site(self.session, site, self.shape, self.heuristic)
        self.explanation = expl
        self.query_one(ShapeEntry).site_error = expl.error
        peak = self.session.environment.peaks.get("tflops_bf16")
        self.query_one("#variants-table", VariantsTable).show(expl, peak, self.show_terms)
        summary = self.query_one(DecisionSummary)
        if expl.decision is None or expl.runtime_key is None:
            summary.show(Text(f"{literal(site.name)} cannot be decided for this shape: {literal(str(expl.error))}",
                              style="yellow"))
        else:
            observed = self._events.at(site.name, expl.runtime_key)
            baselines = self.session.baselines_at(self.shape.values) if isinstance(self.shape, SymbolShape) else []
            summary.show(decision_summary(expl, observed, self.source.can_measure, baselines))
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
        self.query_one("#source-view", SourceView).show(self.site, index)
        self.query_one("#preview", SourceView).show(self.site, index)  # shown from 120 columns

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

    @on(VariantsTable.VariantHighlighted, "#variants-table")
    def _variant_highlighted(self, event: VariantsTable.VariantHighlighted) -> None:
        if self.site is not None and 0 <= event.index < len(self.site.variants):
            self._select(event.index)

    @on(TabbedContent.TabActivated, pane="#symbolic")
    def _symbolic_shown(self) -> None:
        self._show_symbolic()

    @on(TabbedContent.TabActivated)
    def _tab_shown(self, event: TabbedContent.TabActivated) -> None:
        """The footer shows the debugger's keys in its tabs only: refresh it on every switch."""
        self.refresh_bindings()
        if event.pane.id == "timeline":
            self._show_timeline()
        elif event.pane.id == "diff":
            self._show_diff()

    @on(DataTable.RowSelected, "#variants-table")
    def _variant_opened(self, event: DataTable.RowSelected) -> None:
        self.action_show_tab("source")

    # ------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in DEBUG_ACTIONS and self._active_tab() not in DEBUG_TABS:
            return False  # out of the debugger's tabs: out of the footer too
        return self.applies(action)

    def applies(self, action: str) -> bool | None:
        """True when an action can run now, None (dimmed) when not, whichever tab is shown."""
        if action in ("measure", "baselines"):
            idle = not self.measuring and not self.preparing and self.debugger.state == IDLE
            able = self.source.can_measure and (action == "measure" or isinstance(self.source, BaselineSource))
            return True if able and idle else None
        if action == "cancel_measure":
            return self.measuring
        if action in DEBUG_ACTIONS:
            return True if not self.preparing and self._debug_applies(action) else None
        return True

    def _debug_applies(self, action: str) -> bool:
        d = self.debugger
        if action.startswith("break_"):
            return action != "break_site" or self.site is not None
        if not d.live:
            assert d.replay is not None
            if action in ("debug_step", "debug_last"):
                return d.replay.index < len(d.replay.events) - 1
            if action in ("debug_back", "debug_first"):
                return d.replay.index > 0
            return action != "debug_override" and bool(d.replay.events)
        if action in REPLAY_ONLY:
            return False
        if action == "debug_override":
            return d.state == PAUSED
        if action == "debug_continue":
            return d.state != RUNNING
        return not self.measuring

    def palette_bindings(self) -> list[Binding]:
        """The app's keyed actions that apply now, for the command palette (the debugger's
        from any tab: running one shows the debugger)."""
        out = []
        for b in self.BINDINGS:
            assert isinstance(b, Binding)
            if self.applies(b.action.split("(")[0]) is True:
                out.append(b)
        return out

    async def run_from_palette(self, action: str) -> None:
        if action.split("(")[0] in DEBUG_ACTIONS and self._active_tab() not in DEBUG_TABS:
            self.action_show_tab("debugger")
        await self.run_action(action)

    def _active_tab(self) -> str:
        try:
            return self.query_one(TabbedContent).active
        except NoMatches:  # asked before the tabs exist
            return ""

    def help_bindings(self) -> Iterator[tuple[str, Binding]]:
        for where, cls in (("anywhere", InspectorApp), ("shape", ShapeInput), ("variants", VariantsTable),
                           ("sites", SiteList), ("symbolic", SymbolicTable), ("findings", FindingsList),
                           ("breakpoints", BreakpointList), ("condition", ConditionInput),
                           ("timeline", TimelineView), ("prompts", JumpScreen), ("help", HelpScreen)):
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
        focus = {"variants": "#variants-table", "symbolic": "#symbolic-table", "findings": "#findings-list",
                 "source": "#source-view", "debugger": "#event-panel", "timeline": "#timeline-view"}.get(tab)
        if focus is not None:
            self.query_one(focus).focus()

    def action_step_site(self, step: int) -> None:
        sites = self.session.sites
        if self.site is not None:
            i = sites.index(self.site)
            self.show_site(sites[(i + step) % len(sites)].name)

    def action_toggle_terms(self) -> None:
        self.show_terms = not self.show_terms
        self._redecide()
        self._show_debugger()

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
        self._diff_pair = (a, b)
        self._show_diff()
        self.action_show_tab("diff")

    # ------------------------------------------------------------ measuring

    def action_measure(self) -> None:
        target = self._start_timing(lambda site, key: f"measuring {site.name} at {format_key(key)}")
        if target is not None:
            self._measure(*target, self._cancel)

    def action_baselines(self) -> None:
        target = self._start_timing(lambda site, key: "whole-model baselines: eager, static, exact hint, "
                                                      "hinted (each compiles afresh: minutes)")
        if target is not None:
            self._baselines(*target, self._cancel)

    def _start_timing(self, say: Callable[[Site, Key], str]) -> tuple[Site, Key] | None:
        """The site and runtime key to time now, with the measure bar started; None (and a
        warning) when the shape does not decide this site."""
        expl = self.explanation
        if self.site is None or expl is None or expl.runtime_key is None:
            self.notify("type a shape this site accepts first", severity="warning")
            return None
        self._cancel = threading.Event()
        self.measuring = True
        self.query_one(MeasureBar).start(say(self.site, expl.runtime_key))
        return self.site, expl.runtime_key

    @work(thread=True, exclusive=True, group="measure", exit_on_error=False)
    def _baselines(self, site: Site, key: Key, cancel: threading.Event) -> None:
        assert isinstance(self.source, BaselineSource)
        with self._guard.using():
            found = self.source.baselines(site, key, lambda what: self.post_message(PrepareProgress(what)), cancel)
        self.post_message(BaselinesFinished(list(found), cancel.is_set()))

    @_while_running
    def on_baselines_finished(self, message: BaselinesFinished) -> None:
        self.session.baselines.extend(message.baselines)
        self.measuring = False
        self.query_one(MeasureBar).stop()
        failed = sum(b.error is not None for b in message.baselines)
        what = "cancelled after" if message.cancelled else "timed"
        self.notify(f"{what} {len(message.baselines)} baselines" + (f", {failed} failed" if failed else ""),
                    severity="warning" if failed else "information", markup=False)
        self._redecide()

    def action_cancel_measure(self) -> None:
        self._cancel.set()
        self.query_one(MeasureBar).cancelling()

    @work(thread=True, exclusive=True, group="measure", exit_on_error=False)
    def _measure(self, site: Site, key: Key, cancel: threading.Event) -> None:
        def progress(done: int, total: int, what: str) -> None:
            self.post_message(MeasureProgress(done, total, what))

        with self._guard.using():
            found = self.source.measure(site, key, progress, cancel)
        self.post_message(MeasureFinished(site.name, key, list(found), cancel.is_set()))

    @_while_running
    def on_measure_progress(self, message: MeasureProgress) -> None:
        self.query_one(MeasureBar).advance(message.done, message.total, message.what)

    @_while_running
    def on_measure_finished(self, message: MeasureFinished) -> None:
        self.session.measurements.extend(message.measurements)
        self.measuring = False
        self.query_one(MeasureBar).stop()
        n = len({m.variant for m in message.measurements})  # each variant is timed by two methods
        what = "cancelled after" if message.cancelled else "measured"
        self.notify(f"{what} {n} variant{'s' if n != 1 else ''} of {literal(message.site)}", markup=False)
        self._redecide()
        self.debugger.load(self.session)  # fastest and regret changed
        self._show_debugger()

    @on(Worker.StateChanged)
    @_while_running
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        group, state = event.worker.group, event.state
        if group == "measure" and state == WorkerState.ERROR:
            self.measuring = False
            self.query_one(MeasureBar).stop()
            self._failed("baselines failed" if event.worker.name == "_baselines" else "measurement failed",
                         event.worker.error)
        elif group == "prepare" and state in (WorkerState.SUCCESS, WorkerState.ERROR):
            self.preparing = False
            self.query_one(MeasureBar).stop()
            if state == WorkerState.ERROR:
                self._failed("compiling failed", event.worker.error)
                self.query_one(DecisionSummary).show(Text(literal(_error_text("compiling failed", event.worker.error)),
                                                          style="bold red"))
                return
            self._reload_session()
            self.notify(f"ready: {len(self.session.sites)} sites, {len(self.session.events)} dispatches recorded",
                        markup=False)
        elif group == "live-run" and state in (WorkerState.SUCCESS, WorkerState.ERROR):
            self._activity = None
            self.debugger.run_ended()
            self._refresh_keys()
            self._reload_session()
            if state == WorkerState.ERROR:
                self._failed("the workload failed", event.worker.error)
            elif not self._quit.is_set():
                self.notify(f"the workload ran to its end; {len(self.session.events)} dispatches recorded",
                            markup=False)

    def _failed(self, what: str, err: BaseException | None) -> None:
        self.notify(literal(_error_text(what, err)), severity="error", markup=False, timeout=10)

    def on_unmount(self) -> None:
        self._cancel.set()
        self._quit.set()
        if self._run_stop is not None:
            self._run_stop.set()
        self.debugger.close()
        self._guard.close()

    # ------------------------------------------------------------ compiling

    @work(thread=True, exclusive=True, group="prepare", exit_on_error=False)
    def _prepare(self, cancel: threading.Event) -> None:
        with self._guard.using():
            self.source.prepare(lambda what: self.post_message(PrepareProgress(what)), cancel)

    @_while_running
    def on_prepare_progress(self, message: PrepareProgress) -> None:
        self.query_one(MeasureBar).say(message.what)
        if not self.preparing:  # the debugger's run: a step, or Dynamo recompiling for one
            self._activity = message.what
            self._show_event_panel()

    # ------------------------------------------------------------ the debugger's view

    def _show_debugger(self) -> None:
        """Draw the current event: the panel, its site's variants at its key, the timeline."""
        d = self.debugger
        cur = d.current
        self._show_event_panel()
        table = self.query_one("#debug-variants", VariantsTable)
        site = None
        if cur is not None:
            site = next((s for s in self.session.sites if s.name == cur.event.site), None)
        table.display = site is not None
        if site is not None and cur is not None:
            expl = explain_site(self.session, site, FullKey(cur.event.key), self.heuristic)
            table.show(expl, self.session.environment.peaks.get("tflops_bf16"), self.show_terms)
            if self.site is None or self.site.name != site.name:
                self.show_site(site.name, timeline=False)  # drawn below
        if self.query_one(TabbedContent).active == "timeline":
            self._show_timeline()

    def _show_event_panel(self) -> None:
        d = self.debugger
        self.query_one(EventPanel).update(debugger_text(
            self.session, d.current, live=d.live, state=d.state, pending=d.pending_override,
            preparing=self.preparing, runs=d.runs, activity=self._activity))

    def _show_timeline(self) -> None:
        d = self.debugger
        cur = d.current
        index, label = None, ""
        if cur is not None and cur.index is not None:
            index = cur.index
        elif cur is not None:  # a live pause, before a dispatch the session has not yet
            index, label = d.timeline.total - 1, f"paused before dispatch {cur.event.seq}"
        self.query_one(TimelineView).show(d.timeline, index, self.site.name if self.site else None,
                                          jumpable=not d.live and not self.preparing, label=label)

    def _refresh_keys(self) -> None:
        """Refresh the footer when a debugger key's state changed: rebuilding it costs more
        than a step, and most steps change no key."""
        state = tuple(self.applies(a) for a in sorted(DEBUG_ACTIONS | {"measure"}))
        if state != self._keys_state:
            self._keys_state = state
            self.refresh_bindings()

    def _moved(self, moved: bool, why_not: str) -> None:
        if moved:
            self._show_debugger()
        else:
            self.notify(why_not, timeout=3, markup=False)
        self._refresh_keys()

    # ------------------------------------------------------------ debugger keys

    def action_debug_step(self) -> None:
        d = self.debugger
        if not d.live:
            self._moved(d.move("step"), "at the last event")
        elif d.state == IDLE:
            self._start_run(stepping=True)
        else:
            d.step()
            self._after_live_command()

    def action_debug_back(self) -> None:
        self._moved(self.debugger.move("back"), "at the first event")

    def action_debug_continue(self) -> None:
        d = self.debugger
        if not d.live:
            why = "no breakpoint stops after this event" if d.breakpoints else \
                "no breakpoints: b, B, f or w sets one"
            self._moved(d.move("cont"), why)
        elif d.state == IDLE:
            self._start_run(stepping=False)
        else:
            d.cont()
            self._after_live_command()

    def action_debug_reverse(self) -> None:
        d = self.debugger
        why = "no breakpoint stops before this event" if d.breakpoints else "no breakpoints: b, B, f or w sets one"
        self._moved(d.move("reverse"), why)

    def action_debug_first(self) -> None:
        self._moved(self.debugger.move("first"), "at the first event")

    def action_debug_last(self) -> None:
        self._moved(self.debugger.move("last"), "at the last event")

    def action_debug_jump(self) -> None:
        d = self.debugger

        def go(seq: int) -> str | None:
            try:
                d.goto_seq(seq)
            except KinspectError as e:
                return str(e)
            return None

        def jumped(seq: int | None) -> None:
            if seq is not None:
                self._moved(True, "")

        self.push_screen(JumpScreen(go, len(d.session.events)), jumped)

    def action_debug_restart(self) -> None:
        d = self.debugger
        if not d.live:
            assert d.replay is not None
            d.replay.restart()
            self._moved(True, "")
        elif d.state == IDLE:
            self._start_run(stepping=True)
        else:
            d.restart()
            self._after_live_command()

    def action_debug_override(self) -> None:
        d = self.debugger
        cur = d.current
        if cur is None:
            return
        site = next((s for s in self.session.sites if s.name == cur.event.site), None)
        labels = [v.label for v in site.variants] if site is not None else \
            [f"v{i}" for i in range(d.ctx.variant_counts.get(cur.event.site, 0))]

        def chosen(variant: int | None) -> None:
            if variant is None:
                return
            try:
                d.override(variant)
            except KinspectError as e:
                self.notify(literal(str(e)), severity="error", markup=False)
                return
            self._show_debugger()

        self.push_screen(OverrideScreen(cur.event.site, labels), chosen)

    def action_break_site(self) -> None:
        if self.site is not None:
            added = self.debugger.toggle_site(self.site.name)
            self._breakpoints_changed(f"breakpoint at {self.site.name}", added)

    def action_break_miss(self) -> None:
        self._breakpoints_changed("breakpoint on a cache miss", self.debugger.toggle_miss())

    def action_break_not_fastest(self) -> None:
        self._breakpoints_changed("breakpoint where the pick is slower than the fastest",
                                  self.debugger.toggle_not_fastest())

    def action_break_when(self) -> None:
        if self.query_one(TabbedContent).active != "debugger":
            self.action_show_tab("debugger")
        self.query_one(ConditionInput).focus()

    def _breakpoints_changed(self, what: str, added: bool) -> None:
        self.query_one(BreakpointList).show(self.debugger.breakpoints)
        if self._active_tab() != "debugger":  # there the list shows it
            self.notify(literal(f"{what} {'added' if added else 'removed'}"), timeout=3, markup=False)
        self._show_debugger()

    @on(BreakpointList.Removed)
    def _breakpoint_removed(self, event: BreakpointList.Removed) -> None:
        bp = self.debugger.remove(event.index)
        self._breakpoints_changed(f"breakpoint {bp.describe()}", False)

    @on(ConditionEntry.Changed)
    def _condition_typed(self, event: ConditionEntry.Changed) -> None:
        entry = self.query_one(ConditionEntry)
        if not event.text.strip():
            entry.error = None
            return
        try:
            self.debugger.check_condition(event.text)
        except KinspectError as e:
            entry.error = str(e)
        else:
            entry.error = None

    @on(ConditionEntry.Submitted)
    def _condition_submitted(self, event: ConditionEntry.Submitted) -> None:
        entry = self.query_one(ConditionEntry)
        if not event.text.strip():
            self.query_one(EventPanel).focus()
            return
        try:
            bp = self.debugger.check_condition(event.text)
        except KinspectError as e:
            entry.error = str(e)
            return
        self.debugger.add(bp)
        entry.clear()
        self.query_one(EventPanel).focus()
        self._breakpoints_changed(f"breakpoint {bp.describe()}", True)

    @on(ConditionEntry.Done)
    def _condition_done(self) -> None:
        self.query_one(EventPanel).focus()

    @on(TimelineView.Jump)
    def _timeline_jump(self, event: TimelineView.Jump) -> None:
        self._moved(self.debugger.goto_index(event.index), "already there")

    @on(TimelineView.SiteChosen)
    def _timeline_site(self, event: TimelineView.SiteChosen) -> None:
        if self.site is None or self.site.name != event.name:
            if any(s.name == event.name for s in self.session.sites):
                self.show_site(event.name)

    def action_export(self, fmt: str = "json") -> None:
        def written(result: tuple[str, str] | None) -> None:
            if result is not None:
                self.notify(literal(f"wrote {result[1]} ({result[0]}, {len(self.session.events)} events)"),
                            markup=False)

        self.push_screen(ExportScreen(self.session, fmt), written)

    # ------------------------------------------------------------ the live run

    def _start_run(self, stepping: bool) -> None:
        assert self._steppable is not None
        self._activity = None
        gate = self.debugger.start_run(stepping, lambda e: self.post_message(LivePaused(e)))
        self._run_stop = RunStop(gate)
        self._refresh_keys()
        self._show_debugger()
        self._live_run(self._steppable, gate, self._run_stop)

    def _after_live_command(self) -> None:
        """The model runs until its next pause, usually within milliseconds: the footer
        is refreshed only if it is still running a moment later, so a step rebuilds it
        at most when something really changed."""
        self.set_timer(0.15, self._refresh_keys)
        self._show_debugger()

    @work(thread=True, exclusive=True, group="live-run", exit_on_error=False)
    def _live_run(self, source: SteppableSource, gate: PauseGate, stop: RunStop) -> None:
        """Run the workload with the gate installed, again after each restart; the gate
        blocks this thread at a pause (no CPU), and quitting releases it."""
        with self._guard.using():
            source.set_gate(gate.before)
            try:
                while True:
                    source.run_workload(lambda r: self.post_message(LiveStepDone(r.step, r.error)), stop)
                    if stop.quitting or not gate.take_restart():
                        return
            finally:
                source.set_gate(None)

    @_while_running
    def on_live_paused(self, message: LivePaused) -> None:
        self.debugger.on_paused(message.event)
        self._refresh_keys()
        self._show_debugger()
        if self.query_one(TabbedContent).active not in DEBUG_TABS:
            self.notify(literal(f"paused before dispatch {message.event.seq} at {message.event.site} "
                                "(6: the debugger)"), timeout=5, markup=False)

    @_while_running
    def on_live_step_done(self, message: LiveStepDone) -> None:
        self._activity = None
        if message.error:
            self.notify(literal(f"workload step {message.step}: {message.error}"), severity="error", markup=False)
        self._reload_session()


def _error_text(what: str, err: BaseException | None) -> str:
    if isinstance(err, KinspectError):
        return str(err)
    return f"{what}: {type(err).__name__}: {err}"
