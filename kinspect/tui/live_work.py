"""The app's work on a live source, each job in a thread worker that only posts messages:
compiling the model, checking a model file behind a recording, timing a site's variants
(`m`) and timing the whole model other ways (`a`).

Mixed into `InspectorApp`; what the jobs find goes into the session the source owns,
and the app's state is published again when one ends, so every tab shows it.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from textual import work
from textual.worker import Worker, WorkerState

from kinspect.core.dispatch.shapes import Key, sizes_or_key
from kinspect.core.quality.overview import session_namer
from kinspect.core.session.model import Site
from kinspect.core.source import BaselineSource, CheckedSource
from kinspect.tui.messages import BaselinesFinished, MeasureFinished, MeasureProgress, PrepareProgress
from kinspect.tui.text import error_text, literal
from kinspect.tui.widgets.banner import Banner
from kinspect.tui.widgets.measure_bar import MeasureBar

_Handler = TypeVar("_Handler", bound=Callable[..., Any])


def while_running(handler: _Handler) -> _Handler:
    """For what a worker reports: a report can arrive while the app shuts down (a compile
    that ends as the user quits), when the widgets it would update are already gone."""

    @functools.wraps(handler)
    def guarded(self: Any, *args: Any) -> Any:
        if self.is_running:
            return handler(self, *args)
        return None

    return guarded  # type: ignore[return-value]


class LiveWork:
    """The jobs and their reports; the app supplies the source, the state and the widgets."""

    # ------------------------------------------------------------ measuring

    def action_measure(self) -> None:
        target = self._start_timing(lambda site, key: f"measuring {site.name} at "
                                                      f"{sizes_or_key(session_namer(self.session)(site, key), key)}")
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

    @while_running
    def on_baselines_finished(self, message: BaselinesFinished) -> None:
        self.query_one(MeasureBar).stop()
        failed = sum(b.error is not None for b in message.baselines)
        what = "cancelled after" if message.cancelled else "timed"
        self.notify(f"{what} {len(message.baselines)} baselines" + (f", {failed} failed" if failed else ""),
                    severity="warning" if failed else "information", markup=False)
        self.data = self.data.remeasured()  # the session holds them now
        self.measuring = False

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

    @while_running
    def on_measure_progress(self, message: MeasureProgress) -> None:
        self.query_one(MeasureBar).advance(message.done, message.total, message.what)

    @while_running
    def on_measure_finished(self, message: MeasureFinished) -> None:
        self.data = self.data.remeasured()
        self._debug.load(self.session)  # fastest and regret changed
        self.query_one(MeasureBar).stop()
        n = len({m.variant for m in message.measurements})  # each variant is timed by two methods
        what = "cancelled after" if message.cancelled else "measured"
        self.notify(f"{what} {n} variant{'s' if n != 1 else ''} of {literal(message.site)}", markup=False)
        self.measuring = False

    @while_running
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        group, state = event.worker.group, event.state
        if group == "measure" and state == WorkerState.ERROR:
            self.query_one(MeasureBar).stop()
            self.report_failure("baselines failed" if event.worker.name == "_baselines" else "measurement failed",
                                event.worker.error)
            self.measuring = False
        elif group == "prepare" and state in (WorkerState.SUCCESS, WorkerState.ERROR):
            self.query_one(MeasureBar).stop()
            if state == WorkerState.ERROR:
                self.report_failure("compiling failed", event.worker.error)
                self._failure = error_text("compiling failed", event.worker.error)
                self.preparing = False
                return
            self.preparing = False
            self.reload_session()
            self.notify(f"ready: {len(self.session.sites)} sites, {len(self.session.events)} dispatches recorded",
                        markup=False)
        elif group == "check" and state == WorkerState.ERROR:
            self.report_failure("checking the model file failed", event.worker.error)
            self.query_one(Banner).failed(error_text("checking the model file failed", event.worker.error))

    def report_failure(self, what: str, err: BaseException | None) -> None:
        self.notify(literal(error_text(what, err)), severity="error", markup=False, timeout=10)

    def on_unmount(self) -> None:
        self._cancel.set()
        self._quit.set()
        self._debug.close()
        self._guard.close()

    # ------------------------------------------------------------ compiling

    @work(thread=True, exclusive=True, group="prepare", exit_on_error=False)
    def _prepare(self, cancel: threading.Event) -> None:
        with self._guard.using():
            self.source.prepare(lambda what: self.post_message(PrepareProgress(what)), cancel)

    @work(thread=True, exclusive=True, group="check", exit_on_error=False)
    def _check(self, source: CheckedSource, cancel: threading.Event) -> None:
        source.check(cancel)

    @while_running
    def on_prepare_progress(self, message: PrepareProgress) -> None:
        self.query_one(MeasureBar).say(message.what)
        if not self.preparing:  # the debugger's run: a step, or Dynamo recompiling for one
            self._debug.report(message.what)
