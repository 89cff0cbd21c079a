"""What a recording saw at each site and runtime key, indexed once when a session opens.

A recording can hold hundreds of thousands of dispatch events; the inspector asks about
one (site, key) pair per keystroke, so it looks them up instead of scanning.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from kinspect.core.session import DispatchEvent
from kinspect.core.shapes import Key


@dataclass
class Observed:
    calls: int = 0
    picked: Counter[int] = field(default_factory=Counter)
    """How often Inductor ran each variant."""
    mispredicted: int = 0
    """Calls where Inductor ran another variant than kinspect's model predicts."""


class EventIndex:
    def __init__(self, events: Iterable[DispatchEvent]) -> None:
        self._at: dict[tuple[str, Key], Observed] = {}
        self.calls: Counter[str] = Counter()
        for e in events:
            slot = self._at.get((e.site, e.key))
            if slot is None:
                slot = self._at[(e.site, e.key)] = Observed()
            slot.calls += 1
            slot.picked[e.picked] += 1
            if e.picked != e.predicted and e.override is None:
                slot.mispredicted += 1
        for (site, _), slot in self._at.items():
            self.calls[site] += slot.calls

    def at(self, site: str, key: Key) -> Observed | None:
        return self._at.get((site, key))
