"""The debugger's keys, bound by both tabs that show the debugger (Debugger and Timeline).

Each action works the shared `DebugControl` and then says what changed: a move that
lands on another site's event asks the app for that site (`DebuggerMoved`), a move that
cannot happen says why in a toast. Outside these two tabs the keys are not bound, so the
footer shows them only here; the palette runs them from anywhere by showing the
Debugger tab first.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding

from kinspect.core.errors import KinspectError
from kinspect.core.debugger.cursor import IDLE, PAUSED, RUNNING
from kinspect.tui.dialogs import JumpScreen, OverrideScreen
from kinspect.tui.panes.base import InspectorPane, PaneContext
from kinspect.tui.panes.requests import DebuggerMoved, TabRequested
from kinspect.tui.text import literal

STEPS = Binding.Group("Step", compact=True)
CONTINUE = Binding.Group("Continue", compact=True)
ENDS = Binding.Group("First/last")
BREAKS = Binding.Group("Break", compact=True)

REPLAY_ONLY = {"debug_back", "debug_reverse", "debug_jump", "debug_first", "debug_last"}
DEBUG_ACTIONS = REPLAY_ONLY | {"debug_step", "debug_continue", "debug_restart", "debug_override",
                               "break_site", "break_miss", "break_not_fastest", "break_when"}
DEBUG_TABS = ("debugger", "timeline")


class DebugPane(InspectorPane):
    BINDINGS = [
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
    ]
    SHOWS_BREAKPOINTS: ClassVar[bool] = False
    """The tab lists the breakpoints, so adding one needs no toast."""

    def __init__(self, title: str, ctx: PaneContext, *, id: str) -> None:
        super().__init__(title, ctx, id=id)
        self.debug = ctx.debug

    # ------------------------------------------------------------ whether a key applies

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action not in DEBUG_ACTIONS:
            return True
        if action == "debug_override" and not self.debug.debugger.live:
            return False  # the banner says so, and so does the key (the app's key check)
        view = self.view
        if view is None or view.preparing:
            return None
        return True if self._applies(action) else None

    def _applies(self, action: str) -> bool:
        d = self.debug.debugger
        view = self.view
        if action.startswith("break_"):
            return action != "break_site" or (view is not None and view.site is not None)
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
        return view is None or not view.measuring

    def refresh_keys(self) -> None:
        """Refresh the footer when a debugger key's state changed: rebuilding it costs more
        than a step, and most steps change no key."""
        state = (self.debug.debugger.state, *(self.check_action(a, ()) for a in sorted(DEBUG_ACTIONS)))
        if state != self.debug.keys_state:
            self.debug.keys_state = state
            self.refresh_bindings()

    def moved(self, moved: bool = True, why_not: str = "") -> None:
        """Tell the app the debugger changed (it shows the current event's site), or say
        why the cursor stayed."""
        if moved:
            self.debug.changed()
            cur = self.debug.debugger.current
            self.post_message(DebuggerMoved(cur.event.site if cur is not None else None))
        else:
            self.notify(why_not, timeout=3, markup=False)
        self.refresh_keys()

    # ------------------------------------------------------------ moving

    def action_debug_step(self) -> None:
        d = self.debug.debugger
        if not d.live:
            self.moved(d.move("step"), "at the last event")
        elif d.state == IDLE:
            self._start_run(stepping=True)
        else:
            d.step()
            self._after_live_command()

    def action_debug_back(self) -> None:
        self.moved(self.debug.debugger.move("back"), "at the first event")

    def action_debug_continue(self) -> None:
        d = self.debug.debugger
        if not d.live:
            why = "no breakpoint stops after this event" if d.breakpoints else \
                "no breakpoints: b, B, f or w sets one"
            self.moved(d.move("cont"), why)
        elif d.state == IDLE:
            self._start_run(stepping=False)
        else:
            d.cont()
            self._after_live_command()

    def action_debug_reverse(self) -> None:
        d = self.debug.debugger
        why = "no breakpoint stops before this event" if d.breakpoints else "no breakpoints: b, B, f or w sets one"
        self.moved(d.move("reverse"), why)

    def action_debug_first(self) -> None:
        self.moved(self.debug.debugger.move("first"), "at the first event")

    def action_debug_last(self) -> None:
        self.moved(self.debug.debugger.move("last"), "at the last event")

    def action_debug_jump(self) -> None:
        d = self.debug.debugger

        def go(seq: int) -> str | None:
            try:
                d.goto_seq(seq)
            except KinspectError as e:
                return str(e)
            return None

        def jumped(seq: int | None) -> None:
            if seq is not None:
                self.moved()

        self.app.push_screen(JumpScreen(go, len(d.session.events)), jumped)

    def action_debug_restart(self) -> None:
        d = self.debug.debugger
        if not d.live:
            assert d.replay is not None
            d.replay.restart()
            self.moved()
        elif d.state == IDLE:
            self._start_run(stepping=True)
        else:
            d.restart()
            self._after_live_command()

    def action_debug_override(self) -> None:
        d = self.debug.debugger
        cur = d.current
        if cur is None or self.view is None:
            return
        site = next((s for s in self.view.data.session.sites if s.name == cur.event.site), None)
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
            self.moved()

        self.app.push_screen(OverrideScreen(cur.event.site, labels), chosen)

    def _start_run(self, stepping: bool) -> None:
        self.debug.start_run(stepping)
        self.refresh_keys()
        self.moved()

    def _after_live_command(self) -> None:
        """The model runs until its next pause, usually within milliseconds: the footer
        is refreshed only if it is still running a moment later, so a step rebuilds it
        at most when something really changed."""
        self.set_timer(0.15, self.refresh_keys)
        self.debug.changed()
        self.post_message(DebuggerMoved(None))

    # ------------------------------------------------------------ breakpoints

    def action_break_site(self) -> None:
        site = self.view.site if self.view is not None else None
        if site is not None:
            added = self.debug.debugger.toggle_site(site.name)
            self.breakpoints_changed(f"breakpoint at {site.name}", added)

    def action_break_miss(self) -> None:
        self.breakpoints_changed("breakpoint on a cache miss", self.debug.debugger.toggle_miss())

    def action_break_not_fastest(self) -> None:
        self.breakpoints_changed("breakpoint where the pick is slower than the fastest",
                                 self.debug.debugger.toggle_not_fastest())

    def action_break_when(self) -> None:
        self.post_message(TabRequested("debugger", focus="#condition-input"))

    def breakpoints_changed(self, what: str, added: bool) -> None:
        if not self.SHOWS_BREAKPOINTS:
            self.notify(literal(f"{what} {'added' if added else 'removed'}"), timeout=3, markup=False)
        self.moved()
