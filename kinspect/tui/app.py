"""The inspector app: one session source in, every decision shown as core makes it.

State flows one way. Widgets report what the user did by message (a site highlighted,
a shape typed, a variant selected); the app asks `kinspect.core` what follows and hands
each widget what it shows. Compiling, measuring and the debugger's run of a live model
happen in thread workers that only post messages.

The app controls three features: it decides sites and runs measurements and baselines
itself, and hands the debugger (its tabs, keys and live run) to `DebuggerView`. The
debugger's keys stay bound here, so the footer shows them in the Debugger and Timeline
tabs with the app's own; each of their actions hands over in one line.
"""

from __future__ import annotations

import functools
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from rich.text import Text
from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.driver import Driver
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import reactive
from textual.widgets import DataTable, Footer, Input, Static, TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from kinspect.core.quality.comparison import comparison
from kinspect.core.errors import KinspectError
from kinspect.core.quality.explain import SiteExplanation, explain_site
from kinspect.core.quality.decision_map import DecisionMap, Heatmap, decision_map
from kinspect.core.dispatch.heuristics import HEURISTICS
from kinspect.core.quality.overview import worst_regrets
from kinspect.core.quality.variance import compiles
from kinspect.core.ranks.merged import MergedRanks
from kinspect.core.session.timings import KeyTimings
from kinspect.core.quality.whatif import what_ifs
from kinspect.core.session.model import Site
from kinspect.core.dispatch.shapes import FullKey, Key, ParsedShape, SymbolShape, format_key
from kinspect.core.source import BaselineSource, CheckedSource, SessionSource, SteppableSource
from kinspect.tui.commands import InspectorCommands
from kinspect.tui.debugger import IDLE, Debugger
from kinspect.tui.debugger_view import DEBUG_ACTIONS, DEBUG_TABS, DebuggerView
from kinspect.tui.dialogs import ExportScreen, JumpScreen, MeasuredScreen, export_stem
from kinspect.tui.help_screen import HelpScreen
from kinspect.tui.live_run import SourceGuard
from kinspect.tui.messages import (
    BaselinesFinished,
    LivePaused,
    LiveStepDone,
    MeasureFinished,
    MeasureProgress,
    PrepareProgress,
)
from kinspect.tui.observed import EventIndex
from kinspect.tui.present import SYMBOLIC_LEGEND, decision_summary, measured_shapes, runtime_env
from kinspect.tui.widgets.banner import Banner
from kinspect.tui.widgets.breakpoint_list import BreakpointList
from kinspect.tui.widgets.condition_entry import ConditionEntry
from kinspect.tui.widgets.condition_input import ConditionInput
from kinspect.tui.what_if_screen import WhatIfScreen
from kinspect.tui.widgets.decision_map_view import DecisionMapView
from kinspect.tui.widgets.decision_summary import DecisionSummary
from kinspect.tui.widgets.diff_view import DiffView
from kinspect.tui.widgets.findings_list import FindingsList
from kinspect.tui.widgets.measure_bar import MeasureBar
from kinspect.tui.widgets.ranks_view import RankSteps, RanksView
from kinspect.tui.widgets.shape_entry import ShapeEntry
from kinspect.tui.widgets.shape_input import ShapeInput
from kinspect.tui.widgets.site_list import SiteList
from kinspect.tui.widgets.source_view import SourceView
from kinspect.tui.widgets.symbolic_table import SymbolicTable
from kinspect.tui.widgets.timeline_view import TimelineView
from kinspect.tui.widgets.variants_table import VariantsTable
from kinspect.tui.text import literal

TABS = Binding.Group("Tabs", compact=True)
SITES = Binding.Group("Site", compact=True)
STEPS = Binding.Group("Step", compact=True)
CONTINUE = Binding.Group("Continue", compact=True)
ENDS = Binding.Group("First/last")
BREAKS = Binding.Group("Break", compact=True)
TAB_IDS = ("variants", "source", "diff", "symbolic", "findings", "debugger", "timeline", "map")
LIVE_ONLY = {"measure": "m (measure)", "baselines": "a (baselines)", "debug_override": "o (force a variant)"}
"""The actions a recording cannot take, as its banner and refusals name them."""
SHAPE_OPENERS = ("(", "[")


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
    HORIZONTAL_BREAKPOINTS = [(0, "-small"), (100, "-narrow"), (120, "-wide")]
    BINDINGS = [
        Binding("q", "quit", "Quit", id="kinspect.quit", tooltip="Leave the inspector"),
        Binding("question_mark", "help", "Help", id="kinspect.help",
                tooltip="Every key, and how to type a shape"),
        *(
            Binding(str(i), f"show_tab('{tab}')", tab.capitalize(), id=f"kinspect.tab.{tab}",
                    tooltip=f"Show the {tab} tab", group=TABS)
            for i, tab in enumerate(TAB_IDS, 1)
        ),
        Binding("9", "show_tab('ranks')", "Ranks", id="kinspect.tab.ranks", group=TABS,
                tooltip="Show a torchrun job's ranks side by side (sessions opened together)"),
        Binding("left_square_bracket", "step_site(-1)", "Previous site", id="kinspect.site.prev",
                tooltip="Go to the previous site", group=SITES),
        Binding("right_square_bracket", "step_site(1)", "Next site", id="kinspect.site.next",
                tooltip="Go to the next site", group=SITES),
        Binding("s", "toggle_sites", "Sites", id="kinspect.sites", show=False,
                tooltip="Show or hide the list of sites (hidden at first below 100 columns)"),
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
        Binding("b", "break_site", "Break at site", id="kinspect.break.site", group=BREAKS,
                tooltip="Add or remove a breakpoint at the selected site"),
        Binding("B", "break_miss", "Break on miss", id="kinspect.break.miss", group=BREAKS,
                tooltip="Add or remove a breakpoint on every cache miss"),
        Binding("f", "break_not_fastest", "Break if not fastest", id="kinspect.break.not_fastest", group=BREAKS,
                tooltip="Add or remove a breakpoint where the pick is slower than the fastest measured variant"),
        Binding("w", "break_when", "Break when…", id="kinspect.break.when", group=BREAKS,
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
        Binding("e", "export", "Export", id="kinspect.export",
                tooltip="Write the session as JSON, a Markdown report or a Perfetto trace"),
        Binding("l", "measured_keys", "Measured", id="kinspect.measured",
                tooltip="List the keys where this site was measured, and go to one"),
        Binding("escape", "cancel_measure", "Cancel", id="kinspect.cancel",
                tooltip="Stop the running measurement"),
        Binding("t", "toggle_terms", "Terms", id="kinspect.terms",
                tooltip="Show or hide each variant's distance per tensor dimension"),
        Binding("i", "toggle_names", "Names", id="kinspect.names",
                tooltip="Name sizes and tensors as Inductor does (s33, arg3_1) or as you do (B, x, weight)"),
        Binding("h", "what_if", "What-if", id="kinspect.heuristic",
                tooltip="Other heuristics and fewer hints on these measurements, best first; enter decides by one"),
        Binding("d", "diff_selected", "Diff", id="kinspect.diff",
                tooltip="Diff the selected variant's source against the chosen one's"),
    ]

    measuring: reactive[bool] = reactive(False, bindings=True)
    """A measurement is running; `m` is disabled and escape cancels."""
    preparing: reactive[bool] = reactive(False, bindings=True)
    """A live source is compiling; sites appear when it is done."""

    def __init__(self, source: SessionSource, driver_class: type[Driver] | None = None) -> None:
        super().__init__(driver_class=driver_class)
        self.source = source
        self.session = source.session
        self.ranks: MergedRanks | None = getattr(source, "ranks", None)
        """A torchrun job's ranks, when the session is one of several opened together."""
        self.heuristic = "inductor"
        self.show_terms = False
        self.inductor_names = False
        """Sizes and tensors by Inductor's names (`s33`, `arg3_1`) instead of the user's."""
        self.site: Site | None = self.session.sites[0] if self.session.sites else None
        self.shape: ParsedShape | None = None
        self.explanation: SiteExplanation | None = None
        self.call_site: int | None = None
        """The call site highlighted under the current site, if one is."""
        self._timings: dict[tuple[str, Key], KeyTimings] = {}
        """The measurements read by the one timing rule, per site and key."""
        self._maps: dict[str, DecisionMap | Heatmap | None] = {}
        self._fitted: dict[str, ParsedShape] = {}
        """Per site, the last shape it could take: a whole key typed for one site leaves
        the others there."""
        self._worst: dict[str, float] = {}
        """Each measured site's worst regret beyond noise, for the site list."""
        self._measured_count: Counter[str] = Counter()
        """How many keys each site was measured at, for the decision summary."""
        self._measured_changed()
        self.selected = 0
        self._events = EventIndex(self.session.events)
        self._cancel = threading.Event()
        self._quit = threading.Event()
        steppable = source if isinstance(source, SteppableSource) and source.live else None
        self.debugger = Debugger(self.session, live=steppable is not None)
        self._guard = SourceGuard(getattr(source, "close", None))
        self.debug_view = DebuggerView(self, self.debugger, steppable, self._guard)
        self._diff_pair: tuple[int, int] | None = None
        """Variants the diff tab shows next time it is shown."""

    # ------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        findings = Counter(f.site for f in self.session.findings if f.site)
        yield Banner(self.source.banner(), live=self.source.live, truncated=bool(self.session.truncated),
                     id="banner")
        with Horizontal(id="main"):
            yield SiteList(self.session.sites, findings, self._events.calls, self._events.call_sites, self._worst,
                           id="sites")
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
                    with TabPane("Debugger", id="debugger"):
                        yield from self.debug_view.compose_debugger()
                    with TabPane("Timeline", id="timeline"):
                        yield from self.debug_view.compose_timeline()
                    with TabPane("Map", id="map"):
                        yield DecisionMapView(id="map-view")
                    if self.ranks is not None:
                        with TabPane(f"Ranks ({len(self.ranks.ranks)})", id="ranks"):
                            yield RanksView(self.ranks, id="ranks-view")
        yield MeasureBar(id="measure-bar")
        yield Footer(compact=True)

    async def on_event(self, event: events.Event) -> None:
        """Keys are looked at as they arrive, before textual hands them to the focused
        widget: a shape typed in a burst (fast, or by a script) then starts in the entry and
        every later key follows it there, in order."""
        if isinstance(event, events.Key) and self._take_key(event):
            return
        if isinstance(event, events.Paste) and self._take_paste(event.text):
            return
        await super().on_event(event)

    def _take_key(self, event: events.Key) -> bool:
        """A key that starts a shape and is no key here begins one in the entry (`B=129`
        typed on the table; the digits then go to the entry, not to the tabs), and a
        live-only key pressed on a recording says why it does nothing; True when taken."""
        if self.screen.is_modal or isinstance(self.focused, Input):
            return False
        if event.key == "9" and self.ranks is None:  # no Ranks tab: say why rather than nothing
            self.notify("9 shows a torchrun job's ranks side by side; this is one session (kinspect open DIR "
                        "opens a job's rank sessions together)", timeout=4, markup=False)
            return True
        char = event.character
        live_only = self._key_actions.get(event.key) in LIVE_ONLY and not self.source.live
        if not live_only and not (char and self._starts_shape(char)):
            return False
        bound = self.screen.active_bindings.get(event.key)
        if bound is not None and bound.enabled:
            return False
        if live_only:
            self.notify(f"{LIVE_ONLY[self._key_actions[event.key]]} needs the live model on a CUDA GPU: this is "
                        "a recording (run kinspect model.py there)", severity="warning", timeout=4, markup=False)
            return True
        if bound is None and char:
            self.query_one(ShapeInput).begin(char)
            return True
        return False

    def _take_paste(self, text: str) -> bool:
        """A shape pasted on the table goes into the entry, on one line, as if typed there."""
        if self.screen.is_modal or isinstance(self.focused, Input):
            return False
        shape = " ".join(text.split())
        if not shape or not self._starts_shape(shape[0]):
            return False
        self.query_one(ShapeInput).begin(shape)
        return True

    def _starts_shape(self, char: str) -> bool:
        return char in SHAPE_OPENERS or any(name.startswith(char) for name in self.session.symbol_names())

    @functools.cached_property
    def _key_actions(self) -> dict[str, str]:
        """Each of the app's keys to its action's name."""
        return {k.strip(): b.action.split("(")[0] for b in self.BINDINGS if isinstance(b, Binding)
                for k in b.key.split(",")}

    def on_mount(self) -> None:
        entry = self.query_one(ShapeEntry)
        self.shape = entry.shape
        self.watch(entry, "shape", self._shape_typed, init=False)  # in the keystroke's call: see ShapeEntry
        self.debug_view.mounted()
        if not self.source.prepared:
            self.preparing = True
            self.query_one(MeasureBar).start("compiling…")
            self._prepare(self._quit)
        if isinstance(self.source, CheckedSource):  # after the first frame: its process takes a core
            self.call_after_refresh(self._check, self.source, self._quit)
        if self.site is None:
            self._show_no_sites()
        else:
            self.show_site(self.site.name)
        self.debug_view.show()
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

    def reload_session(self) -> None:
        """Show the source's session as it is now: compiled at last, or grown by a live run."""
        self.session = session = self.source.session
        self._events = EventIndex(session.events)
        findings = Counter(f.site for f in session.findings if f.site)
        self._measured_changed()
        self.query_one(SiteList).set_sites(session.sites, findings, self._events.calls, self._events.call_sites,
                                           self._worst)
        self.query_one(FindingsList).set_findings(session.findings)
        self.query_one(TabbedContent).get_tab("findings").label = f"Findings ({len(session.findings)})"
        self.query_one(Banner).say(self.source.banner(), bool(session.truncated))
        self.query_one(ShapeEntry).set_symbols(self._initial_shape(), self._symbol_names())
        self.debug_view.load(session)
        names = [s.name for s in session.sites]
        if self.site is not None and self.site.name in names:
            self.show_site(self.site.name)
        elif names:
            self.show_site(names[0])
        else:
            self.site = None
            self._show_no_sites()
        self.debug_view.show()

    # ------------------------------------------------------------ deciding

    def show_site(self, name: str, timeline: bool = True, call_site: int | None = None) -> None:
        self.site = self.session.site(name)
        self.call_site = call_site
        self.query_one(SiteList).show_site(name)
        i = self.session.sites.index(self.site)
        self.query_one(ShapeEntry).set_site(f"{self.site.name} ({i + 1}/{len(self.session.sites)})")
        self._redecide()
        chosen = self.explanation.decision.chosen if self.explanation and self.explanation.decision else 0
        self._diff_pair = (chosen, (chosen + 1) % len(self.site.variants))
        tab = self.query_one(TabbedContent).active
        if tab == "diff":
            self._show_diff()
        elif tab == "timeline" and timeline:
            self.debug_view.show_timeline()

    def _show_map(self) -> None:
        """The Map tab for the current site; built when shown, as the cursor follows the shape."""
        view = self.query_one(DecisionMapView)
        view.show_comparison(comparison(self.session))
        if self.site is None:
            view.show(None, "no site")
            return
        if self.site.name not in self._maps:
            self._maps[self.site.name] = decision_map(self.session, self.site, self._timings)
        sizes = self.shape.values if isinstance(self.shape, SymbolShape) else None
        view.show(self._maps[self.site.name],
                  f"{self.site.name} has fewer than two measured sizes along one size: "
                  "kinspect sweep model.py --range B=1..16384 measures a map", sizes)

    @on(DecisionMapView.SizesChosen)
    def _map_moved(self, event: DecisionMapView.SizesChosen) -> None:
        self.query_one(ShapeEntry).set_text(" ".join(f"{k}={v}" for k, v in event.sizes.items()))

    def _measured_changed(self) -> None:
        """Measurements came or went: the one timing table, the maps and regrets follow."""
        self._timings = self.session.timings()
        self._measured_count = Counter(name for name, _ in self._timings)
        self._maps = {}
        self._worst = worst_regrets(self.session, self._timings)
        self._compiles = compiles(self.session) if self.session.recompiles else []

    def _show_diff(self) -> None:
        """The diff's selectors cost a rebuild per site, so the tab fills only when shown."""
        if self.site is not None and self._diff_pair is not None:
            self.query_one(DiffView).show(self.site, *self._diff_pair)
            self._diff_pair = None

    def use_heuristic(self, name: str) -> None:
        self.heuristic = name
        self._redecide()
        self.debug_view.show()

    def _redecide(self) -> None:
        """Decide the current site for the current shape and hand every widget its part."""
        site = self.site
        if site is None or self.shape is None:
            return
        expl = explain_site(self.session, site, self.shape, self.heuristic)
        error = expl.error
        kept = self._fitted.get(site.name)
        if error is None:
            self._fitted[site.name] = self.shape
        elif isinstance(self.shape, FullKey) and kept is not None:
            expl = explain_site(self.session, site, kept, self.heuristic)
            error = f"{site.name} still shows {_shape_text(kept)}: {error}"
        self.explanation = expl
        self.query_one(ShapeEntry).site_error = error
        peak = self.session.environment.peaks.get("tflops_bf16")
        self.query_one("#variants-table", VariantsTable).show(expl, peak, self.show_terms, self.inductor_names)
        summary = self.query_one(DecisionSummary)
        if expl.decision is None or expl.runtime_key is None:
            summary.show(Text(f"{literal(site.name)} cannot be decided for this shape: {literal(str(expl.error))}",
                              style="yellow"))
        else:
            observed = self._events.at(site.name, expl.runtime_key)
            baselines = self.session.baselines_at(self.shape.values) if isinstance(self.shape, SymbolShape) else []
            decider = site.call_site(self._events.decided_by(site.name, expl.runtime_key))
            summary.show(decision_summary(expl, observed, self.source.can_measure, baselines,
                                          decider, site.call_site(self.call_site), self._measured_count[site.name],
                                          self._compiles))
            self._select(expl.decision.chosen)
        active = self.query_one(TabbedContent).active
        if active == "symbolic":
            self._show_symbolic()
        elif active == "map":
            self._show_map()

    def _show_symbolic(self) -> None:
        """Fill the symbolic tab; only while it is visible, as it changes on every keystroke."""
        if self.site is not None:
            key = self.explanation.runtime_key if self.explanation else None
            aliases = None if self.inductor_names else self.session.aliases
            self.query_one(SymbolicTable).show(self.site, runtime_env(self.session, self.shape), key, aliases)

    def _select(self, index: int) -> None:
        assert self.site is not None
        self.selected = index
        self.query_one("#source-view", SourceView).show(self.site, index)
        self.query_one("#preview", SourceView).show(self.site, index)  # shown from 120 columns

    # ------------------------------------------------------------ messages up

    @on(SiteList.SiteHighlighted)
    def _site_highlighted(self, event: SiteList.SiteHighlighted) -> None:
        if self.site is None or event.name != self.site.name:
            self.show_site(event.name, call_site=event.call_site)
        else:
            self.call_site = event.call_site
            self._redecide()

    @on(FindingsList.SiteRequested)
    def _finding_chosen(self, event: FindingsList.SiteRequested) -> None:
        self.show_site(event.site)
        self.action_show_tab("variants")

    def _shape_typed(self, shape: ParsedShape | None) -> None:
        """A valid shape re-decides; an invalid one leaves every tab on the last valid
        shape, dimmed and named, until the text is a shape again."""
        stale = shape is None
        entry = self.query_one(ShapeEntry)
        entry.showing = _shape_text(self.shape) if stale and self.shape is not None else None
        self.query_one("#decision").set_class(stale, "-stale")
        if not stale:
            self.shape = shape
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
            self.debug_view.show_timeline()
        elif event.pane.id == "map":
            self._show_map()
        elif event.pane.id == "diff":
            self._show_diff()

    @on(DataTable.RowSelected, "#variants-table")
    def _variant_opened(self, event: DataTable.RowSelected) -> None:
        self.action_show_tab("source")

    # ------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "show_tab" and parameters == ("ranks",) and self.ranks is None:
            return False  # one session: no Ranks tab, and no key for it in the footer
        if action in DEBUG_ACTIONS and self.active_tab() not in DEBUG_TABS:
            return False  # out of the debugger's tabs: out of the footer too
        if action in LIVE_ONLY and not self.source.live:
            return False  # the banner says so, and so does the key (_take_key)
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
            return True if not self.preparing and self.debug_view.applies(action) else None
        return True

    def palette_bindings(self) -> list[Binding]:
        """The app's keyed actions that apply now, for the command palette (the debugger's
        from any tab: running one shows the debugger)."""
        out = []
        for b in self.BINDINGS:
            assert isinstance(b, Binding)
            if b.id == "kinspect.tab.ranks" and self.ranks is None:
                continue
            if self.applies(b.action.split("(")[0]) is True:
                out.append(b)
        return out

    async def run_from_palette(self, action: str) -> None:
        if action.split("(")[0] in DEBUG_ACTIONS and self.active_tab() not in DEBUG_TABS:
            self.action_show_tab("debugger")
        await self.run_action(action)

    def active_tab(self) -> str:
        try:
            return self.query_one(TabbedContent).active
        except NoMatches:  # asked before the tabs exist
            return ""

    def help_bindings(self) -> Iterator[tuple[str, Binding]]:
        for where, cls in (("anywhere", InspectorApp), ("shape", ShapeInput), ("variants", VariantsTable),
                           ("sites", SiteList), ("symbolic", SymbolicTable), ("source", SourceView),
                           ("findings", FindingsList), ("breakpoints", BreakpointList), ("condition", ConditionInput),
                           ("timeline", TimelineView), ("ranks", RankSteps), ("prompts", JumpScreen),
                           ("help", HelpScreen)):
            for b in cls.BINDINGS:
                assert isinstance(b, Binding)
                debugger_key = cls is InspectorApp and b.action in DEBUG_ACTIONS
                yield ("debugger, timeline" if debugger_key else where), b

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.help_bindings()))

    def action_edit_shape(self) -> None:
        self.action_show_tab("variants")
        self.query_one(ShapeInput).focus()

    def action_show_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        focus = {"variants": "#variants-table", "symbolic": "#symbolic-table", "findings": "#findings-list",
                 "source": "#source-view", "debugger": "#event-panel", "timeline": "#timeline-view",
                 "map": "#map-view", "ranks": "#ranks-steps"}.get(tab)
        if focus is not None:
            self.query_one(focus).focus()

    def action_toggle_sites(self) -> None:
        """Below 100 columns the list starts hidden, so the variants table keeps its timings."""
        sites = self.query_one(SiteList)
        small = self.screen.has_class("-small")
        sites.set_class(not sites.has_class("-shown" if small else "-hidden"), "-shown" if small else "-hidden")

    def action_step_site(self, step: int) -> None:
        sites = self.session.sites
        if self.site is not None:
            i = sites.index(self.site)
            self.show_site(sites[(i + step) % len(sites)].name)

    def action_toggle_terms(self) -> None:
        self.show_terms = not self.show_terms
        self._redecide()
        self.debug_view.show()

    def action_measured_keys(self) -> None:
        site = self.site
        if site is None:
            return
        shapes = measured_shapes(self.session, site, self._timings)
        if not shapes:
            how = "m measures this shape" if self.source.can_measure else \
                "kinspect sweep model.py --range B=1..16384 measures many (on a CUDA GPU)"
            self.notify(f"{site.name} was not measured in this session: {how}", timeout=4, markup=False)
            return

        def chosen(shape: str | None) -> None:
            if shape is not None:
                self.query_one(ShapeEntry).set_text(shape)

        self.push_screen(MeasuredScreen(site.name, shapes), chosen)

    def action_toggle_names(self) -> None:
        self.inductor_names = not self.inductor_names
        self._redecide()
        self.debug_view.show()
        self.notify("Inductor's names (s33, arg3_1)" if self.inductor_names else "your names (B, x, weight)",
                    timeout=2, markup=False)

    def action_what_if(self) -> None:
        if not self.session.sites:
            self.notify("no size-hint sites: nothing for another heuristic to decide", timeout=3, markup=False)
            return
        hints = self.session.model.hints or sorted({v.hint for s in self.session.sites for v in s.variants
                                                    if v.hint is not None})

        def chosen(name: str | None) -> None:
            if name is not None and name != self.heuristic:
                self.use_heuristic(name)
                self.notify(f"deciding by {name}: {HEURISTICS[name].title}", timeout=3, markup=False)

        self.push_screen(WhatIfScreen(what_ifs(self.session, self._timings), hints, self.heuristic), chosen)

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
        self._measured_changed()
        self.measuring = False
        self.query_one(MeasureBar).stop()
        n = len({m.variant for m in message.measurements})  # each variant is timed by two methods
        what = "cancelled after" if message.cancelled else "measured"
        self.notify(f"{what} {n} variant{'s' if n != 1 else ''} of {literal(message.site)}", markup=False)
        self._redecide()
        self.debugger.load(self.session)  # fastest and regret changed
        self.debug_view.show()

    @on(Worker.StateChanged)
    @_while_running
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        group, state = event.worker.group, event.state
        if group == "measure" and state == WorkerState.ERROR:
            self.measuring = False
            self.query_one(MeasureBar).stop()
            self.report_failure("baselines failed" if event.worker.name == "_baselines" else "measurement failed",
                         event.worker.error)
        elif group == "prepare" and state in (WorkerState.SUCCESS, WorkerState.ERROR):
            self.preparing = False
            self.query_one(MeasureBar).stop()
            if state == WorkerState.ERROR:
                self.report_failure("compiling failed", event.worker.error)
                self.query_one(DecisionSummary).show(Text(literal(_error_text("compiling failed", event.worker.error)),
                                                          style="bold red"))
                return
            self.reload_session()
            self.notify(f"ready: {len(self.session.sites)} sites, {len(self.session.events)} dispatches recorded",
                        markup=False)
        elif group == "check" and state == WorkerState.ERROR:
            self.report_failure("checking the model file failed", event.worker.error)
            self.query_one(Banner).failed(_error_text("checking the model file failed", event.worker.error))
        elif group == "live-run" and state in (WorkerState.SUCCESS, WorkerState.ERROR):
            self.debug_view.run_ended(state, event.worker.error)

    def report_failure(self, what: str, err: BaseException | None) -> None:
        self.notify(literal(_error_text(what, err)), severity="error", markup=False, timeout=10)

    def on_unmount(self) -> None:
        self._cancel.set()
        self._quit.set()
        self.debug_view.close()
        self._guard.close()

    # ------------------------------------------------------------ compiling

    @work(thread=True, exclusive=True, group="prepare", exit_on_error=False)
    def _prepare(self, cancel: threading.Event) -> None:
        with self._guard.using():
            self.source.prepare(lambda what: self.post_message(PrepareProgress(what)), cancel)

    @work(thread=True, exclusive=True, group="check", exit_on_error=False)
    def _check(self, source: CheckedSource, cancel: threading.Event) -> None:
        source.check(cancel)

    @_while_running
    def on_prepare_progress(self, message: PrepareProgress) -> None:
        self.query_one(MeasureBar).say(message.what)
        if not self.preparing:  # the debugger's run: a step, or Dynamo recompiling for one
            self.debug_view.say(message.what)

    # ------------------------------------------------------------ the debugger (DebuggerView)

    def action_debug_step(self) -> None:
        self.debug_view.step()

    def action_debug_back(self) -> None:
        self.debug_view.back()

    def action_debug_continue(self) -> None:
        self.debug_view.cont()

    def action_debug_reverse(self) -> None:
        self.debug_view.reverse()

    def action_debug_first(self) -> None:
        self.debug_view.first()

    def action_debug_last(self) -> None:
        self.debug_view.last()

    def action_debug_jump(self) -> None:
        self.debug_view.jump()

    def action_debug_restart(self) -> None:
        self.debug_view.restart()

    def action_debug_override(self) -> None:
        self.debug_view.override()

    def action_break_site(self) -> None:
        self.debug_view.break_site()

    def action_break_miss(self) -> None:
        self.debug_view.break_miss()

    def action_break_not_fastest(self) -> None:
        self.debug_view.break_not_fastest()

    def action_break_when(self) -> None:
        self.debug_view.break_when()

    @on(BreakpointList.Removed)
    def _breakpoint_removed(self, event: BreakpointList.Removed) -> None:
        self.debug_view.breakpoint_removed(event.index)

    @on(ConditionEntry.Changed)
    def _condition_typed(self, event: ConditionEntry.Changed) -> None:
        self.debug_view.condition_typed(event.text)

    @on(ConditionEntry.Submitted)
    def _condition_submitted(self, event: ConditionEntry.Submitted) -> None:
        self.debug_view.condition_submitted(event.text)

    @on(ConditionEntry.Done)
    def _condition_done(self) -> None:
        self.debug_view.condition_done()

    @on(TimelineView.Jump)
    def _timeline_jump(self, event: TimelineView.Jump) -> None:
        self.debug_view.timeline_jump(event.index)

    @_while_running
    def on_live_paused(self, message: LivePaused) -> None:
        self.debug_view.paused(message.event)

    @_while_running
    def on_live_step_done(self, message: LiveStepDone) -> None:
        self.debug_view.step_done(message.step, message.error)

    # ------------------------------------------------------------ sites on the timeline, exports

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

        path = getattr(self.source, "path", None) or self.session.model.path
        self.push_screen(ExportScreen(self.session, export_stem(str(path) if path else None), fmt), written)


def _shape_text(shape: ParsedShape) -> str:
    if isinstance(shape, SymbolShape):
        return " ".join(f"{k}={v}" for k, v in shape.values.items())
    return format_key(shape.key)


def _error_text(what: str, err: BaseException | None) -> str:
    if isinstance(err, KinspectError):
        return str(err)
    return f"{what}: {type(err).__name__}: {err}"
