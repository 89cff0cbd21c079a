"""Helpers for the inspector tests: read the screen as a user sees it, fake a live source."""

from __future__ import annotations

import asyncio
import html
import re
import threading
import time

from rich.cells import cell_len
from rich.segment import Segment
from rich.terminal_theme import SVG_EXPORT_THEME
from synthetic import synthetic_session
from textual.command import CommandList
from textual.css.query import NoMatches
from textual.geometry import Region
from textual.widget import Widget

from kinspect.core.session.model import Finding, Measurement, Session, Site
from kinspect.core.dispatch.shapes import Key
from kinspect.core.source import ProgressCallback
from kinspect.tui.app import InspectorApp


CELL_WIDTH = 12.2
"""Pixels per terminal cell in a screenshot (Rich draws cells 0.61 of its 20-pixel lines)."""

_TEXT = re.compile(r'<text class="[^"]*" x="([0-9.]+)" y="[0-9.]+" textLength="[0-9.]+" '
                   r'clip-path="url\(#[\w-]+-line-(\d+)\)">(.*?)</text>')
_FILL = re.compile(r'\.[\w-]+-r\d+ \{ fill: (#[0-9a-f]{6})|<rect fill="(#[0-9a-f]{6})"[^>]*crispEdges')


def screenshot(app: InspectorApp) -> str:
    """The screen as the user sees it, as Textual's own screenshot (SVG) draws it."""
    return app.export_screenshot()


def screen_text(app: InspectorApp) -> str:
    """The characters on the terminal, line by line, read off the screenshot."""
    width, height = app.size
    rows = [[" "] * width for _ in range(height)]
    for x, line, text in _TEXT.findall(screenshot(app)):
        row, col = rows[int(line)], round(float(x) / CELL_WIDTH)
        for ch in html.unescape(text).replace("\xa0", " "):
            if col < width:
                row[col] = ch
            col += max(cell_len(ch), 1)
    return "\n".join("".join(row) for row in rows)


def screen_colours(app: InspectorApp) -> set[str]:
    """Every colour the app sets on screen (text and cell backgrounds), as `#rrggbb`: the
    screenshot's own default foreground and background stand for none set."""
    unset = {SVG_EXPORT_THEME.foreground_color.hex, SVG_EXPORT_THEME.background_color.hex}
    return {a or b for a, b in _FILL.findall(screenshot(app))} - unset


def widget_segments(widget: Widget) -> list[Segment]:
    """What a widget paints, with its styles: its lines as Textual renders them."""
    return [seg for strip in widget.render_lines(Region(0, 0, *widget.size)) for seg in strip]


def toasts(app: InspectorApp) -> list[str]:
    """The notifications on screen, each as one string (the screen wraps them)."""
    return [t.render().plain for t in app.screen.query("Toast")]


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


async def palette_offers(pilot, title: str) -> None:
    """Wait until the command palette's first entry is `title` (its search has run)."""

    def first() -> str:
        try:
            options = pilot.app.screen.query_one(CommandList).options
        except NoMatches:
            return ""
        return str(getattr(options[0].prompt, "plain", options[0].prompt)) if options else ""

    await wait_until(pilot, lambda: first().startswith(title))


def footer_dimmed(app: InspectorApp, key: str) -> bool | None:
    """Whether the footer shows `key` dimmed; None while it is not shown (mid-refresh)."""
    found = [k for k in app.screen.query("FooterKey") if k.key == key]
    return found[0].has_class("-disabled") if found else None
