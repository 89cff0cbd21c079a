"""How the debugger reads on screen: the current event, breakpoints and the timeline.

Like the widgets, these build Rich `Text` from session data as plain text (site names and
conditions pass through `literal`), so the widgets only place what is built here.
"""

from __future__ import annotations

from rich.text import Text

from kinspect.core.debugger.breakpoints import Breakpoint
from kinspect.core.errors import KinspectError
from kinspect.core.session.runtime import DispatchEvent
from kinspect.core.session.model import Session
from kinspect.core.dispatch.shapes import format_key
from kinspect.core.debugger.timeline import Cell, Timeline
from kinspect.core.session.timings import method_title
from kinspect.core.debugger.cursor import PAUSED, RUNNING, Current
from kinspect.tui.text import literal
from kinspect.core import numbers

VARIANT_STYLES = ("cyan", "magenta", "green", "yellow", "blue", "bright_red", "bright_cyan", "bright_magenta")
LABEL_MAX = 24


def _labels(session: Session, event: DispatchEvent) -> dict[int, str]:
    try:
        site = session.site(event.site)
    except KinspectError:  # a live site the session has not listed yet
        return {}
    return {v.index: literal(v.label) for v in site.variants}


def event_sizes(session: Session, event: DispatchEvent) -> str:
    """The user's sizes behind an event's key (`B=1000 S=128`), as far as the key tells
    them; "" when it tells none (a live site the session has not listed yet)."""
    try:
        site = session.site(event.site)
    except KinspectError:
        return ""
    values = site.symbol_values(event.key)
    return " ".join(f"{literal(session.label_of(name))}={v}" for name, v in sorted(values.items()))


def _v(labels: dict[int, str], i: int | None) -> str:
    return "none" if i is None else labels.get(i, f"v{i}")


def debugger_text(session: Session, cur: Current | None, *, live: bool, state: str,
                  pending: int | None, preparing: bool, runs: int, activity: str | None = None) -> Text:
    """The event panel: where the cursor is, what Inductor did there and why it stopped.

    `activity` is what the live model said last while running (a workload step, or a
    recompile's progress: Dynamo recompiles when a size specialises, minutes under
    max-autotune, and the panel must not just say "running" all that while)."""
    out = Text()
    if preparing:
        out.append("compiling… the debugger starts once the model has run", style="dim")
        return out
    if live and state == RUNNING:
        out.append("running the workload… ", style="bold")
        out.append("n pauses before the next dispatch", style="dim")
        if activity:
            out.append("\nnow: ", style="bold")
            out.append(literal(activity))
        return out
    if cur is None:
        if live:
            out.append("the workload ran to its end: " if runs else "the model is ready: ", style="bold")
            out.append("n steps through its workload from the first dispatch, c runs it to a breakpoint",
                       style="dim")
        elif session.events:
            out.append(f"before the first of {len(session.events)} events: ", style="bold")
            out.append("n steps to it, c continues to a breakpoint, g jumps", style="dim")
        else:
            out.append("this session recorded no dispatches", style="dim")
        return out
    e = cur.event
    labels = _labels(session, e)
    paused = live and state == PAUSED
    if paused:
        out.append(f"paused before dispatch {e.seq}", style="bold")
    else:
        out.append(f"event {e.seq}", style="bold")
        if cur.index is not None:
            out.append(f" · {cur.index + 1} of {cur.total}")
    if e.step is not None:
        out.append(f" · workload step {e.step}")
    out.append("\n")
    out.append(literal(e.site), style="bold")
    sizes = event_sizes(session, e)
    if sizes:
        out.append(f" at {sizes}")
        out.append(f" · key {format_key(e.key)}\n", style="dim")
    else:
        out.append(f" at {format_key(e.key)}\n")
    _decision_line(out, e, labels, paused)
    _measured_line(out, session, e, labels)
    if paused:
        if pending is not None:
            out.append(f"o: {_v(labels, pending)} runs instead (forced), when you step or continue\n", style="magenta")
        else:
            out.append("o then a digit forces another variant for this call\n", style="dim")
    if cur.matched:
        out.append("stopped by: " if cur.stopped else "breakpoint here: ", style="bold red" if cur.stopped else "bold")
        out.append("; ".join(literal(b.describe()) for b in cur.matched))
        out.append("\n")
    out.rstrip()
    return out


def _decision_line(out: Text, e: DispatchEvent, labels: dict[int, str], paused: bool) -> None:
    if paused and not e.cache_hit:
        out.append("cache miss: ", style="bold yellow")
        out.append(f"Inductor decides afresh; kinspect predicts {_v(labels, e.predicted)}\n")
        return
    if e.cache_hit:
        out.append("cache hit: ", style="bold")
        verb = "will run" if paused else "ran"
        out.append(f"Inductor {verb} {_v(labels, e.picked)}, its choice at this key's first call\n")
    else:
        out.append("cache miss: ", style="bold yellow")
        out.append(f"Inductor decided afresh and ran {_v(labels, e.picked)}\n")
    if e.override is not None:
        out.append(f"override: {_v(labels, e.override)} was forced for this call", style="bold magenta")
        out.append(f" (kinspect predicts {_v(labels, e.predicted)})\n")
    elif e.picked != e.predicted:
        out.append(f"! kinspect's model predicts {_v(labels, e.predicted)} here\n", style="bold red")


def _measured_line(out: Text, session: Session, e: DispatchEvent, labels: dict[int, str]) -> None:
    t = session.timings_at(e.site, e.key)
    measured = {v: t.median(v) for v in t.measured if t.median(v) is not None}
    if t.fastest is None:
        out.append("not measured at this key\n", style="dim")
        return
    out.append(f"measured ({method_title(t.method)}): ")
    out.append(", ".join(f"v{v} {numbers.us_text(ms)}" for v, ms in measured.items()))
    regret = t.regret(e.picked)
    if t.is_fastest(e.picked):
        out.append(f" — {_v(labels, e.picked)} is the fastest", style="green")
    elif t.slower(e.picked):
        out.append(f" — {_v(labels, e.picked)} takes {numbers.ratio(regret)} "
                   f"the fastest ({_v(labels, t.fastest)})", style="red")
    elif regret is not None:
        out.append(f" — {_v(labels, e.picked)} is within noise of the fastest "
                   f"({_v(labels, t.fastest)}, {numbers.ratio(regret)})", style="yellow")
    out.append("\n")


def breakpoint_prompt(bp: Breakpoint) -> Text:
    return Text(literal(bp.describe()))


# ---------------------------------------------------------------- timeline


def label_width(sites: list[str]) -> int:
    return min(LABEL_MAX, max((len(literal(s)) for s in sites), default=4))


def cell_char(c: Cell) -> str:
    if c.picked is None:
        return "·"
    return str(c.picked) if c.picked < 10 else chr(ord("a") + c.picked - 10) if c.picked < 36 else "+"


def _cell_style(c: Cell, current: bool) -> str:
    style = VARIANT_STYLES[c.picked % len(VARIANT_STYLES)] if c.picked is not None else "dim"
    if c.misses:
        style += " underline"
    if c.overrides:
        style += " reverse"
    if current:
        style += " bold on grey35"
    return style


def timeline_lines(tl: Timeline, width: int, current: int | None, selected: str | None,
                   label: str = "") -> list[Text]:
    """A marker line over the current event's column, one row per site, an axis, a legend.

    `label` names the marked event (by default "event N"); a live pause marks the last
    column recorded so far and names the dispatch it waits before."""
    lw = label_width(tl.sites)
    if not tl.total:
        return [Text("no dispatch events to draw yet", style="dim")]
    cells_width = max(1, width - lw - 1)
    cols = tl.columns(cells_width)
    cur_col = tl.column(current, cells_width) if current is not None else None
    lines = []
    marker = Text(" " * (lw + 1))
    if cur_col is not None:
        marker.append(" " * cur_col)
        marker.append("▼", style="bold")
        marker.append(" " + (label or f"event {current}"), style="dim")
    lines.append(marker)
    for site in tl.sites:
        row = Text()
        name = literal(site)
        name = name if len(name) <= lw else name[: lw - 1] + "…"
        row.append(name.ljust(lw), style="bold reverse" if site == selected else "bold")
        row.append(" ")
        for c, cell in enumerate(tl.cells(site, cells_width)):
            row.append(cell_char(cell), style=_cell_style(cell, c == cur_col))
        lines.append(row)
    axis = Text(" " * (lw + 1))
    end = str(tl.total - 1)
    axis.append("0".ljust(max(1, cols - len(end))) + end if cols > len(end) + 1 else "0", style="dim")
    lines.append(axis)
    lines.append(Text("digit: the variant run · underlined: a cache miss · reversed: an override · "
                      "·: the site did not run", style="dim"))
    lines.append(Text("←/→ or a click moves the cursor there · ↑/↓ select a site", style="dim"))
    return lines
