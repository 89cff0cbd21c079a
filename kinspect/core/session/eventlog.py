"""A recording's dispatch events kept as the columns the session file stores them in.

Opening a session of 100,000 events should reach the first screen in under a second,
and that screen needs only counts per site and key. Building 100,000 `DispatchEvent`
objects up front cost about 50 ms of it; an `EventLog` builds one when it is asked for
(the debugger's cursor touches a handful at a time), answers the counts from its integer
columns, and builds them all only when something iterates over every event (once: the
objects are kept for the next pass).
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from itertools import compress, repeat
from typing import Any, overload

from kinspect.core.session.runtime import DispatchEvent
from kinspect.core.dispatch.shapes import Key


class EventLog(Sequence[DispatchEvent]):
    """Events as columns: `site_ids` index `site_names`, `key_ids` index `keys`; the
    nullable columns are None when every value is null."""

    __slots__ = ("seq", "site_ids", "site_names", "key_ids", "keys", "picked", "predicted", "hit",
                 "step", "t_ns", "override", "call_site", "_all", "_pairs")

    def __init__(self, seq: list[int], site_ids: list[int], site_names: Sequence[str], key_ids: list[int],
                 keys: Sequence[Key], picked: list[int], predicted: list[int], hit: list[bool],
                 step: list[int | None] | None = None, t_ns: list[int | None] | None = None,
                 override: list[int | None] | None = None,
                 call_site: list[int | None] | None = None) -> None:
        self.seq, self.site_ids, self.site_names = seq, site_ids, list(site_names)
        self.key_ids, self.keys = key_ids, list(keys)
        self.picked, self.predicted, self.hit = picked, predicted, hit
        self.step, self.t_ns, self.override, self.call_site = step, t_ns, override, call_site
        self._all: list[DispatchEvent] | None = None
        self._pairs: Counter[tuple[int, int]] | None = None

    def __len__(self) -> int:
        return len(self.seq)

    @overload
    def __getitem__(self, i: int) -> DispatchEvent: ...

    @overload
    def __getitem__(self, i: slice) -> list[DispatchEvent]: ...

    def __getitem__(self, i: int | slice) -> DispatchEvent | list[DispatchEvent]:
        if self._all is not None:
            return self._all[i]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("event index out of range")
        return DispatchEvent(
            self.seq[i], self.site_names[self.site_ids[i]], self.keys[self.key_ids[i]], self.picked[i],
            self.predicted[i], self.hit[i], _at(self.step, i), _at(self.t_ns, i), _at(self.override, i),
            _at(self.call_site, i))

    def __iter__(self) -> Iterator[DispatchEvent]:
        if self._all is None:
            self._all = list(self._made())
        return iter(self._all)

    def each(self) -> Iterator[DispatchEvent]:
        """Every event in order, made one at a time and not kept: a pass over a recording
        of millions of events that need not hold them all (an export)."""
        if self._all is not None:
            return iter(self._all)
        return self._made()

    def _made(self) -> Iterator[DispatchEvent]:
        none = repeat(None)
        return map(
            DispatchEvent, self.seq, map(self.site_names.__getitem__, self.site_ids),
            map(self.keys.__getitem__, self.key_ids), self.picked, self.predicted, self.hit,
            none if self.step is None else self.step, none if self.t_ns is None else self.t_ns,
            none if self.override is None else self.override,
            none if self.call_site is None else self.call_site)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EventLog({len(self)} events, {len(self.site_names)} sites, {len(self.keys)} keys)"

    def tally(self) -> tuple[Counter[tuple[str, Key, int]], Counter[tuple[str, Key]]]:
        """(calls per site, key and variant Inductor ran; calls per site and key where it
        ran another variant than kinspect predicts, overrides aside), counted over ids."""
        wrong_mask = [p != q for p, q in zip(self.picked, self.predicted)]
        if self.override is not None:
            wrong_mask = [w and o is None for w, o in zip(wrong_mask, self.override)]
        wrong = Counter(compress(zip(self.site_ids, self.key_ids), wrong_mask))
        names, keys = self.site_names, self.keys
        return self.picks(), Counter({(names[s], keys[k]): n for (s, k), n in wrong.items()})

    def picks(self) -> Counter[tuple[str, Key, int]]:
        """Calls per site, key and variant Inductor ran, counted over ids."""
        names, keys = self.site_names, self.keys
        return Counter({(names[s], keys[k], p): n for (s, k, p), n in
                        Counter(zip(self.site_ids, self.key_ids, self.picked)).items()})


    def calls_per_key(self, site: str) -> dict[Key, int]:
        """How often the workload called `site` at each key (events of a workload step: not
        the compile's or a measurement's runs), counted once for all sites."""
        if self._pairs is None:
            if self.step is None:
                self._pairs = Counter()
            else:
                in_step = map(operator.is_not, self.step, repeat(None))
                self._pairs = Counter(compress(zip(self.site_ids, self.key_ids), in_step))
        sid = self.site_names.index(site) if site in self.site_names else -1
        return {self.keys[k]: n for (s, k), n in self._pairs.items() if s == sid}

    def site_keys(self) -> dict[str, set[Key]]:
        """The distinct keys each site was called with."""
        out: dict[str, set[Key]] = {}
        for s, k in set(zip(self.site_ids, self.key_ids)):
            out.setdefault(self.site_names[s], set()).add(self.keys[k])
        return out

    def where(self, mask: Iterable[bool]) -> Iterator[DispatchEvent]:
        """The events where `mask` (one flag per event, computed over columns) holds."""
        return (self[i] for i in compress(range(len(self)), mask))

    def call_site_tally(self) -> tuple[Counter[tuple[str, int]], dict[tuple[str, Key], int]]:
        """(calls per site and call site; per site and key, the call site of its first
        cache miss: the call that decided the variant for every call site)."""
        if self.call_site is None:
            return Counter(), {}
        names, keys = self.site_names, self.keys
        calls = Counter(zip(self.site_ids, self.call_site))
        deciders: dict[tuple[str, Key], int] = {}
        misses = compress(zip(self.site_ids, self.key_ids, self.call_site), map(operator.not_, self.hit))
        for s, k, c in misses:
            if c is not None:
                deciders.setdefault((names[s], keys[k]), c)
        return Counter({(names[s], c): n for (s, c), n in calls.items() if c is not None}), deciders


def pick_counts(events: Iterable[DispatchEvent]) -> Counter[tuple[str, Key, int]]:
    """Calls per site, key and variant Inductor ran (over the columns of a loaded session,
    else event by event)."""
    if isinstance(events, EventLog):
        return events.picks()
    return Counter((e.site, e.key, e.picked) for e in events)


def site_key_call(events: Sequence[DispatchEvent]) -> Iterator[tuple[str, Key, int | None]]:
    """Each event's site, key and call site, in order, over a loaded session's columns
    without making (or keeping) an event object apiece: a pass over millions of events
    that needs only these three."""
    if isinstance(events, EventLog) and events._all is None:
        calls = repeat(None) if events.call_site is None else events.call_site
        return zip(map(events.site_names.__getitem__, events.site_ids), map(events.keys.__getitem__, events.key_ids),
                   calls)
    return ((e.site, e.key, e.call_site) for e in events)


def sites_without_call_site(events: Sequence[DispatchEvent]) -> set[str]:
    """The sites with an event recorded before call sites were told apart."""
    if isinstance(events, EventLog) and events._all is None:
        if events.call_site is None:
            return {events.site_names[s] for s in set(events.site_ids)}
        missing = map(operator.is_, events.call_site, repeat(None))
        return {events.site_names[s] for s in set(compress(events.site_ids, missing))}
    return {e.site for e in events if e.call_site is None}


def deciders(events: Sequence[DispatchEvent]) -> dict[tuple[str, Key], int]:
    """Per site and key, the call site of its first cache miss: the call that chose the
    variant every call site of a shared multi-kernel then ran (over the columns of a
    loaded session, else event by event)."""
    if isinstance(events, EventLog):
        return events.call_site_tally()[1]
    out: dict[tuple[str, Key], int] = {}
    for e in events:
        if not e.cache_hit and e.call_site is not None:
            out.setdefault((e.site, e.key), e.call_site)
    return out


def _at(col: list[Any] | None, i: int) -> Any:
    return None if col is None else col[i]
