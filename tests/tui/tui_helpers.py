"""Helpers for the inspector tests: read the screen as a user sees it, fake a live source."""

from __future__ import annotations

import asyncio
import io
import threading
import time

from rich.console import Console
from rich.segment import Segment
from synthetic import synthetic_session

from kinspect.core.session.model import Finding, Measurement, Session, Site
from kinspect.core.dispatch.shapes import Key
from kinspect.core.source import ProgressCallback
from kinspect.tui.app import InspectorApp


def _render(app: InspectorApp) -> Console:
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", record=True, legacy_windows=False, safe_box=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console


def screen_text(app: InspectorApp) -> str:
    """The characters on the terminal, line by line."""
    return _render(app).export_text()


def toasts(app: InspectorApp) -> list[str]:
    """The notifications on screen, each as one string (the screen wraps them)."""
    return [t.render().plain for t in app.screen.query("Toast")]


def screen_segments(app: InspectorApp) -> list[Segment]:
    return list(_render(app)._record_buffer)


def session_with_finding(sites: int = 3, variants: int = 3, events: int = 0) -> Session:
    s = synthetic_session(sites, variants, events)
    s.findings.append(
        Finding("identical-variants", "v0 and v1 of multi_kernel_0 are the same kernel: hint 256 buys nothing.",
                "warning", "multi_kernel_0", None, (0, 1))
    )
    return s


class FakeSource:
    """A live source whose measurement sleeps per variant and reports progress, timing
    each variant by CUDA events and by CUPTI as the real pipeline does.

    While `hold` is set it stays on the first variant, so a test can look at the app
    mid-measurement without racing the worker.
    """

    live = True
    can_measure = True
    prepared = True

    def __init__(self, session: Session, step_s: float = 0.05) -> None:
        self._session = session
        self.step_s = step_s
        self.started = threading.Event()
        self.hold = threading.Event()

    @property
    def session(self) -> Session:
        return self._session

    def banner(self) -> str:
        return "Live fake session"

    def prepare(self, progress, cancel) -> None:
        raise AssertionError("a prepared source is never prepared again")

    def measure(self, site: Site, key: Key, progress: ProgressCallback, cancel: threading.Event) -> list[Measurement]:
        self.started.set()
        out = []
        total = len(site.variants)
        for v in site.variants:
            if cancel.is_set():
                break
            progress(v.index, total, f"timing {v.label}")
            time.sleep(self.step_s)
            while self.hold.is_set() and not cancel.is_set():
                time.sleep(0.01)
            # Timed both ways, as LivePipeline.measure stores it: two measurements a variant.
            out.append(Measurement(site.name, key, v.index, "cuda_events", 100.0 - 10 * v.index, 95.0 - 10 * v.index,
                                   105.0 - 10 * v.index, 10, tflops=79.0 * (v.index + 1)))
            out.append(Measurement(site.name, key, v.index, "cupti", 90.0 - 10 * v.index, 89.0 - 10 * v.index,
                                   91.0 - 10 * v.index, 10))
        self._session.measurements += out  # a source owns its session and adds what it measured
        return out


async def type_shape(pilot, text: str) -> None:
    """What a user does: `/`, clear the entry, type the shape."""
    await pilot.press("slash", "ctrl+u", *text)


async def wait_until(pilot, condition, timeout: float = 10.0) -> None:
    """Let the app run until `condition()` holds (a worker reported back); on a timeout the
    message holds the screen, so a failure far away (on the GPU machine) says what it saw."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() >= deadline:
            raise AssertionError("condition not met in time; the screen:\n" + screen_text(pilot.app))
        await pilot.pause(0.02)


def footer_dimmed(app: InspectorApp, key: str) -> bool | None:
    """Whether the footer shows `key` dimmed; None while it is not shown (mid-refresh)."""
    found = [k for k in app.screen.query("FooterKey") if k.key == key]
    return found[0].has_class("-disabled") if found else None
