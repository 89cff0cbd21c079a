"""The inspector app: one session source in, every decision shown as core makes it.

State flows one way. The app keeps one `InspectorState` (site, shape, heuristic, names,
terms, the variant shown) and, on each change, decides the site once and hands every
tab's pane the new `View` (attributes down). Panes and widgets report what the user did
by message (a site highlighted, a shape chosen on the map, a variant selected) and the
app changes the state (messages up). The tabs come from one registry
(`kinspect.tui.panes.tabs`), which also gives their number keys, focus and help.
Compiling, measuring and the debugger's run of a live model happen in thread workers
that only post messages.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.driver import Driver
from textual.reactive import reactive, var
from textual.timer import Timer
from textual.widgets import Footer, Input, TabbedContent

from kinspect.core.dispatch.heuristics import HEURISTICS
from kinspect.core.dispatch.shapes import ParsedShape, SymbolShape, sizes_text
from kinspect.core.errors import KinspectError
from kinspect.core.quality.explain import SiteExplanation
from kinspect.core.quality.whatif import what_ifs
from kinspect.core.session.model import Session, Site
from kinspect.core.store import renamed
from kinspect.core.source import BaselineSource, CheckedSource, SessionSource, SteppableSource
from kinspect.tui.commands import InspectorCommands, PaletteCommand
from kinspect.core.debugger.cursor import IDLE, Debugger
from kinspect.tui.dialogs import FORMAT_TITLES, ExportScreen, JumpScreen, MeasuredScreen, RenameScreen, export_stem, measured_shapes
from kinspect.tui.help_screen import HelpScreen
from kinspect.tui.live_run import SourceGuard
from kinspect.tui.live_work import LiveWork, while_running
from kinspect.tui.messages import KeyPassed
from kinspect.tui.panes.base import InspectorPane, PaneContext
from kinspect.tui.panes.debug_control import DebugControl
from kinspect.tui.panes.debug_keys import DEBUG_ACTIONS, DEBUG_TABS
from kinspect.tui.panes.diff import DiffPane
from kinspect.tui.panes.requests import (
    DebuggerMoved,
    ReloadRequested,
    ShapeRequested,
    SiteRequested,
    TabRequested,
    VariantRequested,
)
from kinspect.tui.panes.tabs import TABS
from kinspect.core.inspector.state import Decider, Inspection, InspectorState, View, shape_text
from kinspect.core.inspector.typing import continued, goes_on, starts_shape
from kinspect.tui.text import literal
from kinspect.tui.widgets.banner import Banner
from kinspect.tui.widgets.measure_bar import MeasureBar
from kinspect.tui.widgets.shape_entry import ShapeEntry
from kinspect.tui.widgets.shape_input import ShapeInput
from kinspect.tui.widgets.site_list import SiteList
from kinspect.tui.what_if_screen import WhatIfScreen

SITES = Binding.Group("Site", compact=True)
LIVE_ONLY = {"measure": "m (measure)", "baselines": "a (baselines)", "debug_override": "o (force a variant)"}
"""The actions a recording cannot take, as its banner and refusals name them."""
HOLD_S = 0.3
"""How long a key that may start a size's name, and is a command too, waits for the next
key to say which it is (a command then runs this much later)."""
KEY_ROUNDS = 8
"""At most this many trips through the focused widget before the next key goes on."""
KEY_WAIT_S = 0.5
"""How long the keys after one wait for it to pass through its widget before they go on
anyway (the widget went away with it)."""


class InspectorApp(LiveWork, App[None]):
    CSS_PATH = "inspector.tcss"
    TITLE = "kinspect"
    COMMANDS = App.COMMANDS | {InspectorCommands}
    HORIZONTAL_BREAKPOINTS = [(0, "-small"), (100, "-narrow"), (120, "-wide")]
    BINDINGS = [
        Binding("q", "quit", "Quit", id="kinspect.quit", tooltip="Leave the inspector"),
        Binding("question_mark", "help", "Help", id="kinspect.help",
                tooltip="Every key, and how to type a shape"),
        Binding("ctrl+p", "command_palette", "Palette", id="kinspect.palette",
                tooltip="Search every command, site and heuristic by name"),
        *TABS.bindings(),
        Binding("left_square_bracket", "step_site(-1)", "Previous site", id="kinspect.site.prev",
                tooltip="Go to the previous site", group=SITES),
        Binding("right_square_bracket", "step_site(1)", "Next site", id="kinspect.site.next",
                tooltip="Go to the next site", group=SITES),
        Binding("s", "toggle_sites", "Sites", id="kinspect.sites", show=False,
                tooltip="Show or hide the list of sites (hidden at first below 100 columns)"),
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

    measuring: reactive[bool] = reactive(False, bindings=True, init=False)
    """A measurement is running; `m` is disabled and escape cancels."""
    preparing: reactive[bool] = reactive(False, bindings=True, init=False)
    """A live source is compiling; sites appear when it is done."""
    state: var[InspectorState] = var(InspectorState, init=False, always_update=True)
    view: var[View | None] = var(None, init=False, always_update=True)
    """What every pane draws: the state, decided (set by `watch_state` alone). Both are
    `var`s: the panes redraw what changed, and a repaint of the whole screen at every key
    took most of a keystroke's time."""

    def __init__(self, source: SessionSource, driver_class: type[Driver] | None = None) -> None:
        super().__init__(driver_class=driver_class)
        self.source = source
        self.data = Inspection(source.session)
        self._decider = Decider()
        self._failure: str | None = None
        self._cancel = threading.Event()
        self._quit = threading.Event()
        self._held: tuple[events.Key, Timer] | None = None
        """A key that may start a size's name and is a command too, until the next key says which."""
        self._key_tokens = itertools.count()
        self._in_flight: tuple[int, list[events.Key | events.Paste], Timer] | None = None
        """While a key is on its way through the focused widget: the keys that came after it."""
        steppable = source if isinstance(source, SteppableSource) and source.live else None
        self.debugger = Debugger(self.data.session, live=steppable is not None)
        self._guard = SourceGuard(getattr(source, "close", None))
        self._debug = DebugControl(self.debugger, steppable, self._guard)
        sites = self.data.session.sites
        self.set_reactive(InspectorApp.state, InspectorState(site=sites[0].name if sites else None))

    # ------------------------------------------------------------ what the tests and palette read

    @property
    def session(self) -> Session:
        return self.data.session

    @property
    def site(self) -> Site | None:
        return self.view.site if self.view is not None else None

    @property
    def explanation(self) -> SiteExplanation | None:
        return self.view.explanation if self.view is not None else None

    # ------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Banner(self.source.banner(), live=self.source.live, truncated=bool(self.session.truncated),
                     id="banner")
        ctx = PaneContext(self.data, getattr(self.source, "ranks", None), self._debug)
        with Horizontal(id="main"):
            yield self._site_list()
            with Vertical(id="work"):
                yield ShapeEntry(self._initial_shape(), self._symbol_names(), id="shape")
                with TabbedContent(id="tabs"):
                    panes = [tab.pane(tab.title, ctx, id=tab.id) for tab in TABS if tab.pane.wanted(ctx)]
                    panes[0].opened = True  # the tab on the first screen: the others open when first shown
                    yield from panes
        yield MeasureBar(id="measure-bar")
        yield Footer(compact=True, show_command_palette=False)  # docked, its cell kept a stale character

    def _site_list(self) -> SiteList:
        d = self.data
        return SiteList(d.session.sites, d.findings, d.events.calls, d.events.call_sites, d.worst, id="sites")

    def on_mount(self) -> None:
        self._panes = list(self.query(InspectorPane))
        entry = self.query_one(ShapeEntry)
        self.watch(entry, "shape", self._shape_typed, init=False)  # in the keystroke's call: see ShapeEntry
        if not self.source.prepared:
            self.set_reactive(InspectorApp.preparing, True)
            self.query_one(MeasureBar).start("compiling…")
            self._prepare(self._quit)
        if isinstance(self.source, CheckedSource):  # after the first frame: its process takes a core
            self.call_after_refresh(self._check, self.source, self._quit)
        self.state = replace(self.state, shape=entry.shape)
        self.query_one("#variants-table").focus()

    def _initial_shape(self) -> str:
        """The model's example sizes, else its workload's first, else (a program recorded
        with `kinspect run`, which has neither) the sizes of its first dispatch."""
        values = {s.label: s.example for s in self.session.symbols if s.example is not None}
        if not values and self.session.model.workload:
            values = dict(self.session.model.workload[0])
        if not values and self.session.events:
            first = self.session.events[0]
            seen = self.session.site(first.site).symbol_values(first.key)
            values = {s.label: seen[s.name] for s in self.session.symbols if s.name in seen}
        return sizes_text(values)

    def _symbol_names(self) -> list[list[str]]:
        return [[s.alias, s.name] if s.alias else [s.name] for s in self.session.symbols]

    # ------------------------------------------------------------ the state, decided

    def watch_state(self, state: InspectorState) -> None:
        self._publish()

    def watch_preparing(self) -> None:
        self._publish()

    def watch_measuring(self) -> None:
        self._publish()

    def _publish(self) -> None:
        """Decide the state (once: the decider keeps what did not change) and hand every
        pane the view; the widgets outside the tabs take their part here."""
        state, data = self.state, self.data
        site = data.session.site(state.site) if state.site is not None else None
        env, _ = self._decider.resolve(data, state.shape)
        expl, site_error = self._decider.explain(data, site, state)
        self.view = View(data, state, site, env, expl, preparing=self.preparing, measuring=self.measuring,
                         can_measure=self.source.can_measure, failure=self._failure)
        entry = self.query_one(ShapeEntry)
        entry.site_error = site_error
        if site is not None:
            self.query_one(SiteList).show_site(site.name)
            i = data.session.sites.index(site)
            entry.set_site(f"{site.name} ({i + 1}/{len(data.session.sites)})")
        for pane in self._panes:
            pane.view = self.view

    def change(self, **fields: Any) -> None:
        """A new state: the variant shown goes back to the chosen one unless given."""
        self.state = replace(self.state, **{"variant": None, **fields})

    def show_site(self, name: str, call_site: int | None = None) -> None:
        self.change(site=name, call_site=call_site)

    def use_heuristic(self, name: str) -> None:
        self.change(heuristic=name)

    def _shape_typed(self, shape: ParsedShape | None) -> None:
        """A valid shape re-decides; an invalid one leaves every tab on the last valid
        shape, dimmed and named, until the text is a shape again."""
        entry = self.query_one(ShapeEntry)
        last = self.state.shape
        entry.showing = shape_text(last) if shape is None and last is not None else None
        if shape is None:
            self.state = replace(self.state, stale=True)
        else:
            self.change(shape=shape, stale=False)

    def reload_session(self) -> None:
        """Show the source's session as it is now: compiled at last, or grown by a live run."""
        session = self.source.session
        self.data = data = Inspection(session)
        self._debug.load(session)
        self.query_one(SiteList).set_sites(session.sites, data.findings, data.events.calls, data.events.call_sites,
                                           data.worst)
        self.query_one(Banner).say(self.source.banner(), bool(session.truncated))
        self.query_one(ShapeEntry).set_symbols(self._initial_shape(), self._symbol_names())
        names = [s.name for s in session.sites]
        site = self.state.site if self.state.site in names else (names[0] if names else None)
        self.state = replace(self.state, site=site)

    # ------------------------------------------------------------ messages up

    @on(SiteList.SiteHighlighted)
    def _site_highlighted(self, event: SiteList.SiteHighlighted) -> None:
        self.show_site(event.name, event.call_site)

    @on(SiteRequested)
    async def _site_requested(self, event: SiteRequested) -> None:
        self.show_site(event.name)
        if event.tab is not None:
            await self.action_show_tab(event.tab)

    @on(ShapeRequested)
    def _shape_requested(self, event: ShapeRequested) -> None:
        self.query_one(ShapeEntry).set_shape(event.shape, event.text)

    @on(VariantRequested)
    def _variant_requested(self, event: VariantRequested) -> None:
        self.state = replace(self.state, variant=event.index)

    @on(TabRequested)
    async def _tab_requested(self, event: TabRequested) -> None:
        await self.action_show_tab(event.tab)
        if event.focus is not None:
            self.query_one(event.focus).focus()

    @on(ReloadRequested)
    @while_running
    def _reload_requested(self) -> None:
        self.reload_session()

    @on(DebuggerMoved)
    def _debugger_moved(self, event: DebuggerMoved) -> None:
        """The debugger's event is the site the other tabs show."""
        if event.site is not None and event.site != self.state.site and \
                any(s.name == event.site for s in self.session.sites):
            self.show_site(event.site)
        else:
            self._publish()

    def action_leave_shape(self) -> None:
        """Enter or escape in the shape entry."""
        self.screen.set_focus(self.query_one("#variants-table"))  # at once, for the keys typed next (on_event)

    @on(TabbedContent.TabActivated)
    def _tab_shown(self) -> None:
        """The footer follows the tab's own keys."""
        self.refresh_bindings()

    # ------------------------------------------------------------ keys

    async def on_event(self, event: events.Event) -> None:
        """Keys are looked at as they arrive, before textual hands them to the focused
        widget: a shape typed in a burst (fast, or by a script) then starts in the entry and
        every later key follows it there, in order.

        One key at a time: textual hands a key to the widget focused when it arrives, and a
        burst arrives whole before the first key is handled, so the `/` that focuses the
        entry would leave the keys after it with the table (digits pick tabs), and a key
        taken here would overtake the ones still there (`/`, ctrl+u, `B=3` typed in one go
        ended empty). Each key goes on only once the one before has passed through its
        widget (KeyPassed)."""
        if isinstance(event, (events.Key, events.Paste)) and not event.is_forwarded:
            if self._in_flight is not None:
                self._in_flight[1].append(event)
            else:
                await self._key_arrived(event)
            return
        await super().on_event(event)

    async def _key_arrived(self, event: events.Key | events.Paste) -> None:
        if isinstance(event, events.Key):
            held, self._held = self._held, None
            if held is not None:
                held[1].stop()
                if self._goes_on(held[0], event):
                    return
                await self._hand_on(held[0])  # it was a command after all: it runs, then this key
                if self._in_flight is not None:
                    self._in_flight[1].append(event)
                    return
            if self._take_key(event):
                return
        if isinstance(event, events.Paste) and self._take_paste(event.text):
            return
        await self._hand_on(event)

    async def _hand_on(self, event: events.Key | events.Paste) -> None:
        """Textual's own handling (a priority binding, else the focused widget), then the
        keys after it wait until it has passed that widget."""
        target = self.focused or self.screen
        await super().on_event(event)
        token = next(self._key_tokens)
        stuck = self.set_timer(KEY_WAIT_S, functools.partial(self._key_passed_through, token))
        self._in_flight = (token, [], stuck)
        if not target.post_message(KeyPassed(token)):
            await self._key_passed_through(token)

    @on(KeyPassed)
    async def _key_passed(self, message: KeyPassed) -> None:
        """Back from the widget; what the key made a widget post (a radio set's Changed, a
        tab's TabActivated) may still be queued: go round again until the screen is quiet."""
        message.stop()
        if self._in_flight is None or self._in_flight[0] != message.token or not self.screen_stack:
            return  # stale, or the app is closing with no screen left to pass a key to
        if message.rounds < KEY_ROUNDS and any(
                node._message_queue.qsize() for node in (self, *self.screen.walk_children(with_self=True))):
            if (self.focused or self.screen).post_message(KeyPassed(message.token, message.rounds + 1)):
                return
        await self._key_passed_through(message.token)

    async def _key_passed_through(self, token: int) -> None:
        if self._in_flight is None or self._in_flight[0] != token:
            return  # came back after its wait ran out
        _, later, stuck = self._in_flight
        self._in_flight = None
        stuck.stop()
        while later:
            await self._key_arrived(later.pop(0))
            if self._in_flight is not None:  # that one is on its way: the rest wait behind it
                self._in_flight[1].extend(later)
                return

    def _goes_on(self, held: events.Key, event: events.Key) -> bool:
        """`held` and `event` start a size's name (`s2` of `s27`, `B=`): both go to the entry."""
        typed = (held.character or "") + (event.character or "")
        if isinstance(self.focused, Input) or not goes_on(typed, self._typed_names()):
            return False
        self._begin_shape(typed)
        return True

    def _release_held(self) -> None:
        """No key came after a held one in time: it was a command (`s`, `i`, `B`), and runs."""
        held, self._held = self._held, None
        if held is None:
            return
        if self._in_flight is not None:
            self._in_flight[1].insert(0, held[0])
        else:
            self.call_next(self._hand_on, held[0])

    def _typed_names(self) -> list[str]:
        """The names a user types sizes by: theirs, Inductor's where a size has none."""
        return [s.label for s in self.session.symbols]

    def _begin_shape(self, typed: str) -> None:
        entry = self.query_one(ShapeInput)
        entry.begin(continued(entry.value, typed, self.session.symbol_names()))

    def _take_key(self, event: events.Key) -> bool:
        """A key that starts a shape, or goes on with the one entered, goes to the entry
        (`B=129` typed on the table: the digits then go to the entry, not to the tabs; `S=200`
        after it goes on with it); one that is also a key here (`s`, `B` in the debugger) is
        held back until the next key says which it was; a live-only key pressed on a
        recording says why it does nothing. True when taken."""
        if self.screen.is_modal or isinstance(self.focused, Input):
            return False
        tab = TABS.keyed(event.key)
        if tab is not None and tab.absent and not self.query(f"#{tab.id}"):  # say why rather than nothing
            self.notify(tab.absent, timeout=4, markup=False)
            return True
        char = event.character
        live_only = self._key_actions.get(event.key) in LIVE_ONLY and not self.source.live
        bound = self.screen.active_bindings.get(event.key)
        if char and bound is None and starts_shape(char, self.session.symbol_names()):
            self._begin_shape(char)
            return True
        if char and bound is not None and bound.enabled and starts_shape(char, self._typed_names()):
            self._held = (event, self.set_timer(HOLD_S, self._release_held))
            return True
        if not live_only or bound is not None and bound.enabled:
            return False
        self.notify(f"{LIVE_ONLY[self._key_actions[event.key]]} needs the live model on a CUDA GPU: this is "
                    "a recording (run kinspect model.py there)", severity="warning", timeout=4, markup=False)
        return True

    def _take_paste(self, text: str) -> bool:
        """A shape pasted on the table goes into the entry, on one line, as if typed there."""
        if self.screen.is_modal or isinstance(self.focused, Input):
            return False
        shape = " ".join(text.split())
        if not shape or not starts_shape(shape[0], self.session.symbol_names()):
            return False
        self.query_one(ShapeInput).begin(shape)
        return True

    @functools.cached_property
    def _key_actions(self) -> dict[str, str]:
        """Each key of the app and of its tabs to its action's name."""
        bindings = [b for b in self.BINDINGS if isinstance(b, Binding)] + [b for _, b in TABS.pane_bindings()]
        return {k.strip(): b.action.split("(")[0] for b in bindings for k in b.key.split(",")}

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "show_tab" and not self._has_tab(str(parameters[0])):
            return False  # one session: no Ranks tab, and no key for it in the footer
        if action in LIVE_ONLY and not self.source.live:
            return False  # the banner says so, and so does the key (_take_key)
        return self.applies(action)

    def applies(self, action: str) -> bool | None:
        """True when an action can run now, None (dimmed) when not."""
        if action in ("measure", "baselines"):
            idle = not self.measuring and not self.preparing and self.debugger.state == IDLE
            able = self.source.can_measure and (action == "measure" or isinstance(self.source, BaselineSource))
            return True if able and idle else None
        if action == "cancel_measure":
            return self.measuring
        return True

    def _has_tab(self, tab: str) -> bool:
        try:
            self.query_one(TabbedContent).get_pane(tab)
        except (NoMatches, ValueError):
            return False
        return True

    def active_tab(self) -> str:
        try:
            return self.query_one(TabbedContent).active
        except NoMatches:  # asked before the tabs exist
            return ""

    # ------------------------------------------------------------ the palette and the help

    def palette_bindings(self) -> list[Binding]:
        """The keyed actions that apply now, for the command palette: the app's, and the
        debugger's from any tab (running one shows the debugger)."""
        out = [b for b in self.BINDINGS if isinstance(b, Binding) and b.action != "command_palette"
               and self.check_action(*_action(b.action)) is True]
        debugger = self._pane("debugger")
        if debugger is not None:
            out += [b for _, b in TABS.pane_bindings() if debugger.check_action(b.action, ()) is True]
        return out

    def palette_commands(self) -> list[PaletteCommand]:
        out: list[PaletteCommand] = [(b.description, b.tooltip, functools.partial(self.run_from_palette, b.action))
                                     for b in self.palette_bindings()]
        for fmt, title in FORMAT_TITLES.items():
            out.append((f"Export: {title}", f"Write the session as a {title}", functools.partial(self.action_export, fmt)))
        for name, h in HEURISTICS.items():
            out.append((f"What-if heuristic: decide by {name} ({h.title})", h.doc,
                        functools.partial(self.use_heuristic, name)))
        for sym in self.session.symbols:
            out.append((f"Rename size: {literal(sym.label)}" + (f" ({literal(sym.name)})" if sym.alias else ""),
                        "Call this size by your name wherever a size is shown",
                        functools.partial(self.action_rename_size, sym.name)))
        for site in self.session.sites:
            # help text is parsed as markup by the palette: keep session text out of it
            out.append((f"Site: {literal(site.name)}", f"Show this site ({len(site.variants)} variants)",
                        functools.partial(self.show_site, site.name)))
        return out

    def action_rename_size(self, symbol: str) -> None:
        sym = next(s for s in self.session.symbols if s.name == symbol)
        self.push_screen(RenameScreen(sym.label, sym.name, functools.partial(self.rename_size, symbol)))

    def rename_size(self, symbol: str, name: str) -> str | None:
        """Call a size `name` everywhere (the typed shape too); why not, in one line, where it cannot be."""
        session = self.session
        was = session.label_of(symbol)
        try:
            renamed(session, {symbol: name})
        except KinspectError as e:
            return str(e)
        shape = self.state.shape
        self.reload_session()
        if isinstance(shape, SymbolShape) and was in shape.values:
            values = {name if k == was else k: v for k, v in shape.values.items()}
            self.query_one(ShapeEntry).set_shape(SymbolShape(values), sizes_text(values))
        self.notify(f"{was} is {name} now", timeout=3, markup=False)
        return None

    async def run_from_palette(self, action: str) -> None:
        if action.split("(")[0] in DEBUG_ACTIONS:
            if self.active_tab() not in DEBUG_TABS:
                await self.action_show_tab("debugger")
            await self.run_action(action, self._pane(self.active_tab()))
        else:
            await self.run_action(action)

    def _pane(self, tab: str) -> InspectorPane | None:
        try:
            return self.query_one(f"#{tab}", InspectorPane)
        except NoMatches:
            return None

    def help_bindings(self) -> Iterator[tuple[str, Binding]]:
        for b in self.BINDINGS:
            assert isinstance(b, Binding)
            yield "anywhere", b
        for where, cls in (("shape", ShapeInput), ("sites", SiteList)):
            for b in cls.BINDINGS:
                assert isinstance(b, Binding)
                yield where, b
        for tab, b in TABS.pane_bindings():
            yield ", ".join(t.id for t in TABS if b in t.pane.own_bindings()), b
        for tab in TABS:
            for where, cls in tab.pane.KEYED:
                for b in cls.BINDINGS:
                    assert isinstance(b, Binding)
                    yield where, b
        for where, cls in (("prompts", JumpScreen), ("help", HelpScreen)):
            for b in cls.BINDINGS:
                assert isinstance(b, Binding)
                yield where, b

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.help_bindings()))

    # ------------------------------------------------------------ actions

    async def action_show_tab(self, tab: str) -> None:
        """The tab's widgets are composed (the first time) while it is still hidden, so the
        frame that shows it shows it drawn."""
        pane = self._pane(tab)
        if pane is not None:
            await pane.open()
        tabs = self.query_one(TabbedContent)
        if not await self._tab_label(tabs, tab):
            return
        tabs.active = tab
        focus = TABS[tab].pane.FOCUS if tab in TABS else None
        if focus is not None:
            self.screen.set_focus(self.query_one(focus))  # at once, for the keys typed next (on_event)

    async def _tab_label(self, tabs: TabbedContent, tab: str) -> bool:
        """Wait (a second at most) for the tab bar to have the tab's label: its panes and its
        labels are mounted by two widgets of their own, and a number key typed as the
        inspector starts can come between the two (a busy machine shows it), when making
        the tab active is refused with a ValueError. True once the label is there."""
        for _ in range(100):
            try:
                tabs.get_tab(tab)
                return True
            except NoMatches:
                await asyncio.sleep(0.01)
        return False

    async def action_edit_shape(self) -> None:
        """Focus moves at once, not after a refresh (`focus()`): the keys typed right after
        `/` go on as soon as it has passed (on_event), and must find the entry focused."""
        await self.action_show_tab("variants")
        self.screen.set_focus(self.query_one(ShapeInput))

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
        self.change(show_terms=not self.state.show_terms)

    def action_toggle_names(self) -> None:
        self.change(inductor_names=not self.state.inductor_names)
        self.notify("Inductor's names (s33, arg3_1)" if self.state.inductor_names else "your names (B, x, weight)",
                    timeout=2, markup=False)

    def action_measured_keys(self) -> None:
        site = self.site
        if site is None:
            return
        shapes = measured_shapes(self.session, site, self.data.timings)
        if not shapes:
            how = "m measures this shape" if self.source.can_measure else \
                "kinspect sweep model.py --range B=1..16384 measures many (on a CUDA GPU)"
            self.notify(f"{site.name} was not measured in this session: {how}", timeout=4, markup=False)
            return

        def chosen(picked: tuple[ParsedShape, str] | None) -> None:
            if picked is not None:
                self.query_one(ShapeEntry).set_shape(*picked)

        self.push_screen(MeasuredScreen(site.name, shapes), chosen)

    def action_what_if(self) -> None:
        if not self.session.sites:
            self.notify("no size-hint sites: nothing for another heuristic to decide", timeout=3, markup=False)
            return
        hints = self.session.compiled_hints

        def chosen(name: str | None) -> None:
            if name is not None and name != self.state.heuristic:
                self.use_heuristic(name)
                self.notify(f"deciding by {name}: {HEURISTICS[name].title}", timeout=3, markup=False)

        self.push_screen(WhatIfScreen(what_ifs(self.session, self.data.timings), hints, self.state.heuristic,
                                      self.session.advisable_program), chosen)

    async def action_diff_selected(self) -> None:
        view = self.view
        if view is None or view.site is None:
            return
        a = view.chosen or 0
        b = view.selected if view.selected != a else (a + 1) % len(view.site.variants)
        self.query_one(DiffPane).compare(view.site, a, b)
        await self.action_show_tab("diff")

    def action_export(self, fmt: str = "json") -> None:
        def written(result: tuple[str, str, str] | None) -> None:
            if result is not None:
                fmt, path, beside = result
                self.notify(literal(f"wrote {path} ({fmt}, {len(self.session.events)} events)"
                                    + (f"; {beside}" if beside else "")), markup=False)

        path = getattr(self.source, "path", None) or self.session.model.path
        keep = [str(p) for p in (getattr(self.source, "path", None), self.session.model.path) if p]
        self.push_screen(ExportScreen(self.session, export_stem(str(path) if path else None), fmt, keep), written)


def _action(action: str) -> tuple[str, tuple[object, ...]]:
    """An action string's name and parameters (`show_tab('ranks')`)."""
    name, _, rest = action.partition("(")
    params = tuple(p.strip().strip("'\"") for p in rest.rstrip(")").split(",")) if rest.rstrip(")") else ()
    return name, params
