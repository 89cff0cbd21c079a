"""Which variant each site chose along the workload, compressed for drawing.

The inspector draws one row per site across the terminal: the variant picked at each
point of the workload, with cache misses and user overrides marked. A session holds
100,000 events and a row is ~100 columns, so the model keeps runs of identical choices
(`Span`) and folds them into columns (`Cell`) on demand, in time proportional to the
number of runs, not events.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass

from kinspect.core.debugger.replay import site_indices
from kinspect.core.session.model import Session


@dataclass(frozen=True, slots=True)
class Span:
    """Consecutive events of one site with the same choice, miss flag and override."""

    first: int
    """Event index (in `session.events`) of the run's first event."""
    last: int
    start: int
    """Position of the first event among the site's own events."""
    count: int
    picked: int
    miss: bool
    override: int | None


@dataclass(frozen=True, slots=True)
class Cell:
    """One drawn column of one site's row."""

    count: int
    """Events of the site in this column (0: the site did not run here)."""
    picked: int | None
    """The variant picked most often here (the lowest on a tie)."""
    mixed: bool
    """More than one variant was picked here."""
    misses: int
    overrides: int


_EMPTY = Cell(0, None, False, 0, 0)


class Timeline:
    def __init__(self, session: Session) -> None:
        self.total = len(session.events)
        self.indices = site_indices(session.events)
        named = [s.name for s in session.sites]
        self.sites = named + [s for s in self.indices if s not in named]
        self.spans: dict[str, list[Span]] = {}
        events = session.events
        for site, idx in self.indices.items():
            spans: list[Span] = []
            run_start = 0
            for pos in range(1, len(idx) + 1):
                if pos < len(idx):
                    a, b = events[idx[pos - 1]], events[idx[pos]]
                    if (a.picked, a.cache_hit, a.override) == (b.picked, b.cache_hit, b.override):
                        continue
                e = events[idx[run_start]]
                spans.append(Span(idx[run_start], idx[pos - 1], run_start, pos - run_start,
                                  e.picked, not e.cache_hit, e.override))
                run_start = pos
            self.spans[site] = spans

    def column(self, index: int, width: int) -> int:
        """The column an event index falls in, for a row of `cells(..., width)`."""
        return index * self.columns(width) // self.total if self.total else 0

    def columns(self, width: int) -> int:
        """How many cells a row has: `width`, or fewer when there are fewer events."""
        if width < 1:
            raise ValueError("a timeline needs at least one column")
        return min(width, self.total)

    def cells(self, site: str, width: int) -> list[Cell]:
        """The site's row: column c holds events i with i * columns // total == c."""
        cols = self.columns(width)
        idx = self.indices.get(site, [])
        spans = self.spans.get(site, [])
        starts = [s.start for s in spans]
        out: list[Cell] = []
        for c in range(cols):
            lo_event = -(-c * self.total // cols)
            hi_event = -(-(c + 1) * self.total // cols)
            lo, hi = bisect_left(idx, lo_event), bisect_left(idx, hi_event)
            out.append(_fold(spans, starts, lo, hi) if hi > lo else _EMPTY)
        return out


def _fold(spans: list[Span], starts: list[int], lo: int, hi: int) -> Cell:
    """Summarise the site's events at positions lo..hi-1 from the spans covering them."""
    picks: Counter[int] = Counter()
    misses = overrides = 0
    j = bisect_right(starts, lo) - 1
    while j < len(spans) and spans[j].start < hi:
        s = spans[j]
        n = min(hi, s.start + s.count) - max(lo, s.start)
        picks[s.picked] += n
        misses += n if s.miss else 0
        overrides += n if s.override is not None else 0
        j += 1
    top = max(picks.values())
    picked = min(v for v, n in picks.items() if n == top)
    return Cell(hi - lo, picked, len(picks) > 1, misses, overrides)
