"""Pausing a live workload before a dispatch: the live half of the debugger.

The recorder's thread calls `PauseGate.before(event)` just before Inductor dispatches;
when the user single-steps, or a breakpoint stops at the event, the call blocks on a
condition variable (no polling: the paused thread uses no CPU) until the UI thread
steps, continues or closes the gate. The UI may force a variant for the paused dispatch;
`before` returns it and the recorder runs that variant instead of Inductor's pick.

The gate only knows events and breakpoints, not torch, so it lives in the pure core and
is tested with plain threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from kinspect.core.debugger.breakpoints import Breakpoint, EventContext
from kinspect.core.debugger.conditions import Predicate
from kinspect.core.errors import KinspectError
from kinspect.core.session.runtime import DispatchEvent

PauseCallback = Callable[[DispatchEvent], None]


class PauseGate:
    """Shared by one recorder thread (`before`, `take_restart`) and one UI thread (the rest).

    `on_pause(event)` runs on the recorder thread each time it pauses, with no lock held
    (so it may call back into the gate); a Textual app passes a function that posts a
    message with `call_from_thread`, never one that touches widgets.
    """

    def __init__(self, on_pause: PauseCallback | None = None, *, stepping: bool = False) -> None:
        self.on_pause = on_pause
        self._cond = threading.Condition()
        self._stepping = stepping
        self._predicates: list[Predicate] = []
        self._breakpoints: tuple[Breakpoint, ...] = ()
        self._variants: dict[str, int] = {}
        self._paused: DispatchEvent | None = None
        self._pauses = 0
        self._released = 0
        self._override: int | None = None
        self._restart = False
        self._closed = False

    # ------------------------------------------------------------ recorder thread

    def before(self, event: DispatchEvent) -> int | None:
        """Block while paused at `event`; return the variant to force, or None for Inductor's."""
        with self._cond:
            if self._closed or self._restart:
                return None
            if not (self._stepping or any(p(event) for p in self._predicates)):
                return None
            self._pauses += 1
            token = self._pauses
            self._paused = event
            self._override = None
        if self.on_pause is not None:
            self.on_pause(event)
        with self._cond:
            self._cond.wait_for(lambda: self._released >= token or self._closed)
            if self._closed:
                self._paused = None
                return None
            forced, self._override = self._override, None
            return forced

    @property
    def restarting(self) -> bool:
        """A restart is asked and not yet taken: the recorder may drop the rest of its run."""
        with self._cond:
            return self._restart

    def take_restart(self) -> bool:
        """True once after the UI asked to restart; the recorder then reruns its workload."""
        with self._cond:
            asked, self._restart = self._restart, False
            return asked

    # ------------------------------------------------------------ UI thread

    @property
    def paused_at(self) -> DispatchEvent | None:
        with self._cond:
            return self._paused

    @property
    def breakpoints(self) -> tuple[Breakpoint, ...]:
        return self._breakpoints

    def set_breakpoints(self, breakpoints: Iterable[Breakpoint], ctx: EventContext) -> None:
        """Replace the breakpoints; `ctx` is the live session as it stands now."""
        bps = tuple(breakpoints)
        preds = [b.predicate(ctx) for b in bps]
        with self._cond:
            self._breakpoints = bps
            self._predicates = preds
            self._variants = dict(ctx.variant_counts)

    def step(self) -> None:
        """Run the paused dispatch and pause again before the next one."""
        with self._cond:
            self._stepping = True
            self._release()

    def cont(self) -> None:
        """Run until a breakpoint stops."""
        with self._cond:
            self._stepping = False
            self._release()

    def pause(self) -> None:
        """Pause before the next dispatch."""
        with self._cond:
            self._stepping = True

    def override(self, variant: int | None) -> None:
        """Force a variant for the paused dispatch (None: leave it to Inductor)."""
        with self._cond:
            event = self._paused
            if event is None:
                raise KinspectError("nothing is paused: an override applies to a paused dispatch")
            n = self._variants.get(event.site)
            if variant is not None and (variant < 0 or (n is not None and variant >= n)):
                raise KinspectError(f"{event.site} has no variant {variant}" + (f" (it has {n})" if n else ""))
            self._override = variant

    def restart(self) -> None:
        """Ask the recorder to rerun its workload, pausing before its first dispatch.

        Dispatches until the recorder takes the request pass without pausing, so the
        run being abandoned drains without stopping the user again.
        """
        with self._cond:
            self._restart = True
            self._stepping = True
            self._release()

    def close(self) -> None:
        """Release the recorder for good (the UI is going away)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _release(self) -> None:
        if self._paused is not None:
            self._paused = None
            self._released = self._pauses
            self._cond.notify_all()
