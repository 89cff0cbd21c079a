"""The Debugger tab (6): the current event, its site's variants at its key, breakpoints.

This pane also hosts the live model's run (`DebugControl.attach`): the run's worker is
its own, so the pauses and step reports the model's thread posts arrive here.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.worker import Worker, WorkerState

from kinspect.core.dispatch.shapes import FullKey
from kinspect.core.errors import KinspectError
from kinspect.core.quality.explain import explain_site
from kinspect.core.session.model import Session
from kinspect.tui.debug_text import debugger_text
from kinspect.tui.messages import LiveActivity, LivePaused, LiveStepDone
from kinspect.tui.panes.base import PaneContext
from kinspect.tui.panes.debug_keys import DEBUG_TABS, DebugPane
from kinspect.tui.panes.requests import ReloadRequested
from kinspect.core.inspector.state import View
from kinspect.tui.text import error_text, literal
from kinspect.tui.widgets.breakpoint_list import BreakpointList
from kinspect.tui.widgets.condition_entry import ConditionEntry
from kinspect.tui.widgets.condition_input import ConditionInput
from kinspect.tui.widgets.event_panel import EventPanel
from kinspect.tui.widgets.variants_table import VariantsTable


class DebuggerPane(DebugPane):
    FOCUS = "#event-panel"
    KEYED = (("breakpoints", BreakpointList), ("condition", ConditionInput))
    SHOWS_BREAKPOINTS = True

    def __init__(self, title: str, ctx: PaneContext, *, id: str) -> None:
        super().__init__(title, ctx, id=id)
        self._drawn: tuple[object, ...] = ()
        self._fields_for: Session | None = None

    def content(self) -> ComposeResult:
        with Vertical(id="debug-body"):
            yield EventPanel(id="event-panel")
            yield VariantsTable(id="debug-variants")
            with Vertical(id="breakpoints"):
                yield BreakpointList(id="breakpoint-list")
                yield ConditionEntry(id="condition")

    def on_mount(self) -> None:
        self.debug.attach(self)

    def draw(self, view: View) -> None:
        """The current event: the panel, its site's variants at its key, the breakpoints."""
        s = view.state
        drawn = (self.debug.changes, view.data, s.heuristic, s.show_terms, s.inductor_names, view.preparing)
        if drawn == self._drawn:
            return
        self._drawn = drawn
        session = view.data.session
        if session is not self._fields_for:
            self._fields_for = session
            self._set_fields(session)
        d = self.debug.debugger
        cur = d.current
        self.query_one(EventPanel).update(debugger_text(
            session, cur, live=d.live, state=d.state, pending=d.pending_override, preparing=view.preparing,
            runs=d.runs, activity=self.debug.activity))
        table = self.query_one("#debug-variants", VariantsTable)
        site = next((x for x in session.sites if x.name == cur.event.site), None) if cur is not None else None
        table.display = site is not None
        if site is not None and cur is not None:
            expl = explain_site(session, site, FullKey(cur.event.key), s.heuristic)
            table.show(expl, view.data.peak_at(expl.site), s.show_terms, s.inductor_names)
        self.query_one(BreakpointList).show(d.breakpoints)

    def _set_fields(self, session: Session) -> None:
        size = next((s.label for s in session.symbols), "B")
        site = session.sites[-1].name if session.sites else "multi_kernel_0"
        example = f'{literal(size)} > 512 and miss   ·   site == "{literal(site)}"'
        self.query_one(ConditionEntry).set_fields(self.debug.debugger.ctx.field_names(), example)

    def action_break_when(self) -> None:
        self.query_one(ConditionInput).focus()

    # ------------------------------------------------------------ its widgets' reports

    @on(BreakpointList.Removed)
    def _breakpoint_removed(self, event: BreakpointList.Removed) -> None:
        bp = self.debug.debugger.remove(event.index)
        self.breakpoints_changed(f"breakpoint {bp.describe()}", False)

    @on(ConditionEntry.Changed)
    def _condition_typed(self, event: ConditionEntry.Changed) -> None:
        entry = self.query_one(ConditionEntry)
        if not event.text.strip():
            entry.error = None
            return
        try:
            self.debug.debugger.check_condition(event.text)
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
            bp = self.debug.debugger.check_condition(event.text)
        except KinspectError as e:
            entry.error = str(e)
            return
        self.debug.debugger.add(bp)
        entry.clear()
        self.query_one(EventPanel).focus()
        self.breakpoints_changed(f"breakpoint {bp.describe()}", True)

    @on(ConditionEntry.Done)
    def _condition_done(self) -> None:
        self.query_one(EventPanel).focus()

    # ------------------------------------------------------------ the live run's reports

    def on_live_paused(self, message: LivePaused) -> None:
        self.debug.debugger.on_paused(message.event)
        self.moved()
        if self.active_tab() not in DEBUG_TABS:
            self.notify(literal(f"paused before dispatch {message.event.seq} at {message.event.site} "
                                "(6: the debugger)"), timeout=5, markup=False)

    def on_live_activity(self, message: LiveActivity) -> None:
        self.debug.say(message.what)
        self.watch_view(self.view)  # drawn now if on screen, else when shown

    def on_live_step_done(self, message: LiveStepDone) -> None:
        self.debug.activity = None
        self.debug.changed()
        if message.error:
            self.notify(literal(f"workload step {message.step}: {message.error}"), severity="error", markup=False)
        self.post_message(ReloadRequested())

    @on(Worker.StateChanged)
    def _run_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "live-run" or event.state not in (WorkerState.SUCCESS, WorkerState.ERROR):
            return
        self.debug.run_ended()
        self.refresh_keys()
        self.post_message(ReloadRequested())
        if event.state == WorkerState.ERROR:
            self.notify(literal(error_text("the workload failed", event.worker.error)), severity="error",
                        markup=False, timeout=10)
        elif not self.debug.quitting:
            self.notify(f"the workload ran to its end; {self.debug.recorded_events} dispatches recorded",
                        markup=False)
