"""What a recording saw at each site and runtime key, indexed once when a session opens.

A recording can hold hundreds of thousands of dispatch events; the inspector asks about
one (site, key) pair per keystroke, so it looks them up instead of scanning.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kinspect.core.session.eventlog import EventLog, deciders, pick_counts
from kinspect.core.session.runtime import DispatchEvent
from kinspect.core.dispatch.shapes import Key


@dataclass
class Observed:
    calls: int = 0
    picked: Counter[int] = field(default_factory=Counter)
    """How often Inductor ran each variant."""
    mispredicted: int = 0
    """Calls where Inductor ran another variant than kinspect's model predicts."""


class EventIndex:
    def __init__(self, events: Iterable[DispatchEvent]) -> None:
        # Also kept: calls per (site, call site), and the call site of each (site, key)'s
        # first miss. Counted over a loaded session's integer columns (or with Counters over
        # generators): a loop here took 65 ms of a 100,000-event session's first screen.
        if isinstance(events, EventLog):
            picks, wrong = events.tally()
            self.call_sites, self._deciders = events.call_site_tally()
        else:
            events = events if isinstance(events, Sequence) else list(events)
            picks = pick_counts(events)
            wrong = Counter((e.site, e.key) for e in events if e.picked != e.predicted and e.override is None)
            self.call_sites = Counter((e.site, e.call_site) for e in events if e.call_site is not None)
            self._deciders = deciders(events)
        self._at: dict[tuple[str, Key], Observed] = {}
        self.calls: Counter[str] = Counter()
        for (site, key, picked), n in picks.items():
            slot = self._at.get((site, key))
            if slot is None:
                slot = self._at[(site, key)] = Observed()
                slot.mispredicted = wrong[(site, key)]
            slot.calls += n
            slot.picked[picked] += n
            self.calls[site] += n

    def at(self, site: str, key: Key) -> Observed | None:
        return self._at.get((site, key))

    def decided_by(self, site: str, key: Key) -> int | None:
        """The call site whose cache miss chose the variant every call site then ran."""
        return self._deciders.get((site, key))
