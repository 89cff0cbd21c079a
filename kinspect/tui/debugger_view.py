"""The debugger in the app: its two tabs, its keys and its live run, fed one `Debugger`.

The app keeps the debugger's key bindings, so the footer, the palette and the help list
them with its own, and hands each debugger action and each report of the debugger's
widgets here in one line. This object draws what the `Debugger` says into the Debugger
and Timeline tabs, and runs a live model's workload in a thread worker that only posts
messages. It follows the app's site and shape settings and never decides a site itself.

One set of keys serves both kinds of session: over a recording they move a replay cursor
both ways; over a live model they pause the model's thread before a dispatch
(`PauseGate`) and may force the variant that runs.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import TabbedContent
from textual.worker import WorkerState

from kinspect.core.errors import KinspectError
from kinspect.core.quality.explain import explain_site
from kinspect.core.session.model import DispatchEvent, Session
from kinspect.core.dispatch.shapes import FullKey
from kinspect.core.source import SteppableSource
from kinspect.core.debugger.stepping import PauseGate
from kinspect.tui.debug_text import debugger_text
from kinspect.tui.debugger import IDLE, PAUSED, RUNNING, Debugger
from kinspect.tui.dialogs import JumpScreen, OverrideScreen
from kinspect.tui.live_run import RunStop, SourceGuard
from kinspect.tui.messages import LivePaused, LiveStepDone
from kinspect.tui.text import literal
from kinspect.tui.widgets.breakpoint_list import BreakpointList
from kinspect.tui.widgets.condition_entry import ConditionEntry
from kinspect.tui.widgets.condition_input import ConditionInput
from kinspect.tui.widgets.event_panel import EventPanel
from kinspect.tui.widgets.timeline_view import TimelineView
from kinspect.tui.widgets.variants_table import VariantsTable

if TYPE_CHECKING:
    from kinspect.tui.app import InspectorApp

DEBUG_TABS = ("debugger", "timeline")

REPLAY_ONLY = {"debug_back", "debug_reverse", "debug_jump", "debug_first", "debug_last"}
DEBUG_ACTIONS = REPLAY_ONLY | {"debug_step", "debug_continue", "debug_restart", "debug_override",
                               "break_site", "break_miss", "break_not_fastest", "break_when"}


class DebuggerView:
    def __init__(self, app: InspectorApp, debugger: Debugger, steppable: SteppableSource | None,
                 guard: SourceGuard) -> None:
        self.app = app
        self.debugger = debugger
        self._steppable = steppable
        self._guard = guard
        self._run_stop: RunStop | None = None
        self._keys_state: tuple[bool | None, ...] = ()
        self._activity: str | None = None
        """What the live source last said during the run (a recompile's progress)."""

    # ------------------------------------------------------------ layout

    def compose_debugger(self) -> ComposeResult:
        with Vertical(id="debug-body"):
            yield EventPanel(id="event-panel")
            yield VariantsTable(id="debug-variants")
            with Vertical(id="breakpoints"):
                yield BreakpointList(id="breakpoint-list")
                yield ConditionEntry(id="condition")

    def compose_timeline(self) -> ComposeResult:
        with Vertical(id="timeline-box"):
            yield TimelineView(id="timeline-view")

    def mounted(self) -> None:
        self.app.query_one(BreakpointList).show(self.debugger.breakpoints)
        self._set_fields(self.debugger.session)

    def load(self, session: Session) -> None:
        """Take the app's new or grown session."""
        self.debugger.load(session)
        self._set_fields(session)

    def _set_fields(self, session: Session) -> None:
        size = next((s.label for s in session.symbols), "B")
        site = session.sites[-1].name if session.sites else "multi_kernel_0"
        example = f'{literal(size)} > 512 and miss   ·   site == "{literal(site)}"'
        self.app.query_one(ConditionEntry).set_fields(self.debugger.ctx.field_names(), example)

    # ------------------------------------------------------------ drawing

    def show(self) -> None:
        """Draw the current event: the panel, its site's variants at its key, the timeline."""
        app = self.app
        d = self.debugger
        cur = d.current
        self._show_event_panel()
        table = app.query_one("#debug-variants", VariantsTable)
        site = None
        if cur is not None:
            site = next((s for s in app.session.sites if s.name == cur.event.site), None)
        table.display = site is not None
        if site is not None and cur is not None:
            expl = explain_site(app.session, site, FullKey(cur.event.key), app.heuristic)
            table.show(expl, app.session.environment.peaks.get("tflops_bf16"), app.show_terms, app.inductor_names)
            if app.site is None or app.site.name != site.name:
                app.show_site(site.name, timeline=False)  # drawn below
        if app.query_one(TabbedContent).active == "timeline":
            self.show_timeline()

    def _show_event_panel(self) -> None:
        d = self.debugger
        self.app.query_one(EventPanel).update(debugger_text(
            self.app.session, d.current, live=d.live, state=d.state, pending=d.pending_override,
            preparing=self.app.preparing, runs=d.runs, activity=self._activity))

    def say(self, what: str) -> None:
        """The live source's progress during the run: a step, or Dynamo recompiling for one."""
        self._activity = what
        self._show_event_panel()

    def show_timeline(self) -> None:
        app = self.app
        d = self.debugger
        cur = d.current
        index, label = None, ""
        if cur is not None and cur.index is not None:
            index = cur.index
        elif cur is not None:  # a live pause, before a dispatch the session has not yet
            index, label = d.timeline.total - 1, f"paused before dispatch {cur.event.seq}"
        app.query_one(TimelineView).show(d.timeline, index, app.site.name if app.site else None,
                                         jumpable=not d.live and not app.preparing, label=label)

    def refresh_keys(self) -> None:
        """Refresh the footer when a debugger key's state changed: rebuilding it costs more
        than a step, and most steps change no key."""
        state = tuple(self.app.applies(a) for a in sorted(DEBUG_ACTIONS | {"measure"}))
        if state != self._keys_state:
            self._keys_state = state
            self.app.refresh_bindings()

    def _moved(self, moved: bool, why_not: str) -> None:
        if moved:
            self.show()
        else:
            self.app.notify(why_not, timeout=3, markup=False)
        self.refresh_keys()

    # ------------------------------------------------------------ keys

    def applies(self, action: str) -> bool:
        """Whether a debugger action can run now (the app dims it when not)."""
        d = self.debugger
        if action.startswith("break_"):
            return action != "break_site" or self.app.site is not None
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
        return not self.app.measuring

    def step(self) -> None:
        d = self.debugger
        if not d.live:
            self._moved(d.move("step"), "at the last event")
        elif d.state == IDLE:
            self._start_run(stepping=True)
        else:
            d.step()
            self._after_live_command()

    def back(self) -> None:
        self._moved(self.debugger.move("back"), "at the first event")

    def cont(self) -> None:
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

    def reverse(self) -> None:
        d = self.debugger
        why = "no breakpoint stops before this event" if d.breakpoints else "no breakpoints: b, B, f or w sets one"
        self._moved(d.move("reverse"), why)

    def first(self) -> None:
        self._moved(self.debugger.move("first"), "at the first event")

    def last(self) -> None:
        self._moved(self.debugger.move("last"), "at the last event")

    def jump(self) -> None:
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

        self.app.push_screen(JumpScreen(go, len(d.session.events)), jumped)

    def restart(self) -> None:
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

    def override(self) -> None:
        d = self.debugger
        cur = d.current
        if cur is None:
            return
        site = next((s for s in self.app.session.sites if s.name == cur.event.site), None)
        labels = [v.label for v in site.variants] if site is not None else \
            [f"v{i}" for i in range(d.ctx.variant_counts.get(cur.event.site, 0))]

        def chosen(variant: int | None) -> None:
            if variant is None:
                return
            try:
                d.override(variant)
            except KinspectError as e:
                self.app.notify(literal(str(e)), severity="error", markup=False)
                return
            self.show()

        self.app.push_screen(OverrideScreen(cur.event.site, labels), chosen)

    def timeline_jump(self, index: int) -> None:
        self._moved(self.debugger.goto_index(index), "already there")

    # ------------------------------------------------------------ breakpoints

    def break_site(self) -> None:
        site = self.app.site
        if site is not None:
            added = self.debugger.toggle_site(site.name)
            self._breakpoints_changed(f"breakpoint at {site.name}", added)

    def break_miss(self) -> None:
        self._breakpoints_changed("breakpoint on a cache miss", self.debugger.toggle_miss())

    def break_not_fastest(self) -> None:
        self._breakpoints_changed("breakpoint where the pick is slower than the fastest",
                                  self.debugger.toggle_not_fastest())

    def break_when(self) -> None:
        if self.app.query_one(TabbedContent).active != "debugger":
            self.app.action_show_tab("debugger")
        self.app.query_one(ConditionInput).focus()

    def _breakpoints_changed(self, what: str, added: bool) -> None:
        self.app.query_one(BreakpointList).show(self.debugger.breakpoints)
        if self.app.active_tab() != "debugger":  # there the list shows it
            self.app.notify(literal(f"{what} {'added' if added else 'removed'}"), timeout=3, markup=False)
        self.show()

    def breakpoint_removed(self, index: int) -> None:
        bp = self.debugger.remove(index)
        self._breakpoints_changed(f"breakpoint {bp.describe()}", False)

    def condition_typed(self, text: str) -> None:
        entry = self.app.query_one(ConditionEntry)
        if not text.strip():
            entry.error = None
            return
        try:
            self.debugger.check_condition(text)
        except KinspectError as e:
            entry.error = str(e)
        else:
            entry.error = None

    def condition_submitted(self, text: str) -> None:
        entry = self.app.query_one(ConditionEntry)
        if not text.strip():
            self.app.query_one(EventPanel).focus()
            return
        try:
            bp = self.debugger.check_condition(text)
        except KinspectError as e:
            entry.error = str(e)
            return
        self.debugger.add(bp)
        entry.clear()
        self.app.query_one(EventPanel).focus()
        self._breakpoints_changed(f"breakpoint {bp.describe()}", True)

    def condition_done(self) -> None:
        self.app.query_one(EventPanel).focus()

    # ------------------------------------------------------------ the live run

    def _start_run(self, stepping: bool) -> None:
        assert self._steppable is not None
        self._activity = None
        gate = self.debugger.start_run(stepping, lambda e: self.app.post_message(LivePaused(e)))
        self._run_stop = RunStop(gate)
        self.refresh_keys()
        self.show()
        self.app.run_worker(functools.partial(self._live_run, self._steppable, gate, self._run_stop),
                            name="live_run", group="live-run", exclusive=True, exit_on_error=False, thread=True)

    def _after_live_command(self) -> None:
        """The model runs until its next pause, usually within milliseconds: the footer
        is refreshed only if it is still running a moment later, so a step rebuilds it
        at most when something really changed."""
        self.app.set_timer(0.15, self.refresh_keys)
        self.show()

    def _live_run(self, source: SteppableSource, gate: PauseGate, stop: RunStop) -> None:
        """Run the workload with the gate installed, again after each restart; the gate
        blocks this thread at a pause (no CPU), and quitting releases it."""
        with self._guard.using():
            source.set_gate(gate.before)
            try:
                while True:
                    source.run_workload(lambda r: self.app.post_message(LiveStepDone(r.step, r.error)), stop)
                    if stop.quitting or not gate.take_restart():
                        return
            finally:
                source.set_gate(None)

    def paused(self, event: DispatchEvent) -> None:
        self.debugger.on_paused(event)
        self.refresh_keys()
        self.show()
        if self.app.query_one(TabbedContent).active not in DEBUG_TABS:
            self.app.notify(literal(f"paused before dispatch {event.seq} at {event.site} "
                                    "(6: the debugger)"), timeout=5, markup=False)

    def step_done(self, step: int | None, error: str | None) -> None:
        self._activity = None
        if error:
            self.app.notify(literal(f"workload step {step}: {error}"), severity="error", markup=False)
        self.app.reload_session()

    def run_ended(self, state: WorkerState, error: BaseException | None) -> None:
        """The live-run worker finished, or failed."""
        self._activity = None
        self.debugger.run_ended()
        self.refresh_keys()
        self.app.reload_session()
        if state == WorkerState.ERROR:
            self.app.report_failure("the workload failed", error)
        elif self._run_stop is None or not self._run_stop.quitting:
            self.app.notify(f"the workload ran to its end; {len(self.app.session.events)} dispatches recorded",
                            markup=False)

    def close(self) -> None:
        """The app is going: release a run paused at a breakpoint."""
        if self._run_stop is not None:
            self._run_stop.set()
        self.debugger.close()
