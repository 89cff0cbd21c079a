"""Stepping through a recorded session's dispatch events, forwards and backwards.

The replay cursor is the recorded-session half of the debugger (the live half is
`kinspect.core.debugger.stepping`): step, continue to a breakpoint in either direction, jump.
Sessions hold 100,000 events and the inspector moves on every keystroke, so per-site
event indices are built once, and breakpoint scans run compiled predicates under
`map`/`compress`, visiting only the sites a breakpoint can stop at.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from functools import cached_property
from itertools import compress

from kinspect.core.debugger.breakpoints import Breakpoint, EventContext
from kinspect.core.debugger.conditions import Predicate
from kinspect.core.errors import KinspectError
from kinspect.core.session.runtime import DispatchEvent
from kinspect.core.session.model import Session


def site_indices(events: Sequence[DispatchEvent]) -> dict[str, list[int]]:
    """Each site's event indices, ascending."""
    out: dict[str, list[int]] = {}
    for i, e in enumerate(events):
        out.setdefault(e.site, []).append(i)
    return out


def _any_of(preds: list[Predicate]) -> Predicate:
    if len(preds) == 1:
        return preds[0]

    def any_matches(e: DispatchEvent) -> bool:
        for p in preds:
            if p(e):
                return True
        return False
    return any_matches


class Replay:
    """A cursor over `session.events`.

    `index` is the current event's position in the list, or -1 before the first event
    (where a fresh cursor and `restart()` put it, so that `cont()` can stop at event 0).
    Every move returns the new index, or None when the cursor stays where it was (at an
    end, already there, or no breakpoint ahead), so a caller redraws only on a move.
    """

    def __init__(self, session: Session, ctx: EventContext | None = None) -> None:
        self.events: list[DispatchEvent] = session.events
        self.ctx = ctx if ctx is not None else EventContext(session)
        self.index = -1
        self.breakpoints: tuple[Breakpoint, ...] = ()
        self._predicate: Predicate | None = None
        self._sites: frozenset[str] | None = None

    # ------------------------------------------------------------ state

    @cached_property
    def by_site(self) -> dict[str, list[int]]:
        """Built on the first move, not at open: 40 ms of a 100,000-event session's first screen."""
        return site_indices(self.events)

    @cached_property
    def _by_seq(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for i, e in enumerate(self.events):
            out.setdefault(e.seq, i)
        return out

    @property
    def current(self) -> DispatchEvent | None:
        return self.events[self.index] if self.index >= 0 else None

    def set_breakpoints(self, breakpoints: Iterable[Breakpoint]) -> None:
        self.breakpoints = tuple(breakpoints)
        if not self.breakpoints:
            self._predicate, self._sites = None, None
            return
        self._predicate = _any_of([b.predicate(self.ctx) for b in self.breakpoints])
        restrictions = [b.sites() for b in self.breakpoints]
        self._sites = None if any(r is None for r in restrictions) else frozenset().union(*restrictions)

    def matching(self, index: int | None = None) -> list[Breakpoint]:
        """The breakpoints that stop at an event (the current one by default)."""
        i = self.index if index is None else index
        if not 0 <= i < len(self.events):
            return []
        e = self.events[i]
        return [b for b in self.breakpoints if b.matches(e, self.ctx)]

    # ------------------------------------------------------------ moves

    def _move(self, index: int | None) -> int | None:
        if index is None or index == self.index:
            return None
        self.index = index
        return index

    def restart(self) -> None:
        self.index = -1

    def first(self) -> int | None:
        return self._move(0 if self.events else None)

    def last(self) -> int | None:
        return self._move(len(self.events) - 1 if self.events else None)

    def goto(self, index: int) -> int | None:
        if not 0 <= index < len(self.events):
            raise KinspectError(f"no event at index {index}; this session has {len(self.events)} events")
        return self._move(index)

    def goto_seq(self, seq: int) -> int | None:
        index = self._by_seq.get(seq)
        if index is None:
            raise KinspectError(f"no event with seq {seq}")
        return self._move(index)

    def step(self, count: int = 1, site: str | None = None) -> int | None:
        """Forward by `count` events (of `site` only, if given), stopping at the last."""
        _check_count(count)
        if site is None:
            if not self.events:
                return None
            return self._move(min(self.index + count, len(self.events) - 1))
        mine = self._site_list(site)
        j = bisect_right(mine, self.index)
        if j >= len(mine):
            return None
        return self._move(mine[min(j + count - 1, len(mine) - 1)])

    def back(self, count: int = 1, site: str | None = None) -> int | None:
        """Backward by `count` events (of `site` only, if given), stopping at the first."""
        _check_count(count)
        if site is None:
            return self._move(max(self.index - count, 0)) if self.index > 0 else None
        mine = self._site_list(site)
        j = bisect_left(mine, self.index)
        if j == 0:
            return None
        return self._move(mine[max(j - count, 0)])

    def cont(self) -> int | None:
        """Forward to the next event where any breakpoint stops."""
        return self._move(self._scan(self.index + 1, forward=True))

    def reverse(self) -> int | None:
        """Backward to the previous event where any breakpoint stops."""
        return self._move(self._scan(self.index - 1, forward=False))

    # ------------------------------------------------------------ scanning

    def _site_list(self, site: str) -> list[int]:
        if site not in self.ctx.variant_counts and site not in self.by_site:
            raise KinspectError(f"no site named {site!r}")
        return self.by_site.get(site, [])

    def _scan(self, start: int, forward: bool) -> int | None:
        pred = self._predicate
        if pred is None or not 0 <= start < len(self.events):
            return None
        events = self.events
        if self._sites is None:
            order = range(start, len(events)) if forward else range(start, -1, -1)
            return _first(order, events, pred)
        found = []
        for site in self._sites:
            mine = self.by_site.get(site, [])
            if forward:
                order: Sequence[int] = mine[bisect_left(mine, start):]
            else:
                j = bisect_right(mine, start)
                order = mine[j - 1::-1] if j else []
            hit = _first(order, events, pred)
            if hit is not None:
                found.append(hit)
        if not found:
            return None
        return min(found) if forward else max(found)


def _first(order: Sequence[int], events: list[DispatchEvent], pred: Predicate) -> int | None:
    return next(compress(order, map(pred, map(events.__getitem__, order))), None)


def _check_count(count: int) -> None:
    if count < 1:
        raise KinspectError(f"step count must be at least 1, got {count}")
