"""Dispatch decisions as a Chrome trace-event file, for Perfetto or chrome://tracing.

One track (thread) per site, one event per dispatch, named by the variant picked
(`v1 (hint 256)`, never the kernel's name, which two variants may share), so the trace
viewer colours each site's row by variant along the workload; the decision itself (key,
prediction, every variant's distance, cache hit, override) is the event's args, with the
user's sizes that give the key (`sizes`: `B=157`) where they are known.

Several ranks of a torchrun job make one trace with a process per rank (`ranks_trace`).

Where the picked variant was measured at that key, the dispatch is a slice as long as its
measured median (`kinspect.core.session.timings`' method), and its args say so; elsewhere it is
an instant marker with no length, never a made-up one. Timestamps are the recording's
`t_ns` when every event has one, a slice being cut short where its site dispatches again
sooner (args say so); otherwise events are laid out in sequence, each after the previous
one ends, and `otherData.timestamps` says so.
"""

from __future__ import annotations

import itertools
import json
import math
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, BinaryIO

from kinspect.core.errors import KinspectError
from kinspect.core.dispatch.heuristics import HEURISTICS
from kinspect.core.ranks.merged import MergedRanks
from kinspect.core.session.eventlog import EventLog
from kinspect.core.session.runtime import DispatchEvent
from kinspect.core.session.model import Session
from kinspect.core.dispatch.shapes import Key, format_key, sizes_text
from kinspect.core.quality.overview import SizeNamer
from kinspect.core.session.timings import KeyTimings, method_title

PID = 1
GAP_US = 1.0
"""Between events laid out in sequence (a recording without timestamps)."""


class _Process:
    """One session's part of a trace: its metadata, then its dispatches made one at a time
    (a recording of millions of events is never one list of them); per event it keeps
    only its timestamp and its slice's length, as numbers."""

    def __init__(self, session: Session, pid: int, process: str | None) -> None:
        sites = self.sites = {s.name: s for s in session.sites}
        self.session, self.pid, self.process = session, pid, process
        self.tids = {name: i + 1 for i, name in enumerate(sites)}
        self.timings = session.timings()
        measured = array("d")
        first: float | None = None
        recorded = True
        for e in _each(session.events):
            if e.site not in sites:
                raise KinspectError(f"event {e.seq} names unknown site {e.site!r}")
            m = _measured(self.timings.get((e.site, e.key)), e.picked)
            measured.append(math.nan if m is None else m[0])
            if e.t_ns is None:
                recorded = False
            elif recorded:
                first = e.t_ns if first is None else min(first, e.t_ns)
        self.recorded = recorded and len(measured) > 0
        self.first = first or 0
        self.durations = measured  # made each slice's length in place: an array the less per event
        _durations(session.events, self.stamps(), self.durations)

    def stamps(self) -> Iterator[float]:
        """Each event's timestamp, made as it is needed (a recording's millions of events
        keep only their slices' lengths): its recorded time, or laid out in sequence."""
        if self.recorded:
            first = self.first
            return ((e.t_ns - first) / 1000.0 for e in _each(self.session.events))  # type: ignore[operator]
        return _in_sequence(self.durations)

    def metadata(self) -> list[dict[str, Any]]:
        pid = self.pid
        out: list[dict[str, Any]] = [
            {"name": "process_name", "ph": "M", "ts": 0, "pid": pid, "tid": 0,
             "args": {"name": self.process or f"kinspect: {self.session.model.title}"}},
        ]
        for name, tid in self.tids.items():
            site = self.sites[name]
            track = f"{name} · {site.title}" if site.call_sites else name
            out.append({"name": "thread_name", "ph": "M", "ts": 0, "pid": pid, "tid": tid, "args": {"name": track}})
            out.append({"name": "thread_sort_index", "ph": "M", "ts": 0, "pid": pid, "tid": tid,
                        "args": {"sort_index": tid}})
        return out

    def dispatches(self, shift: float = 0.0) -> Iterator[dict[str, Any]]:
        sites = self.sites
        labels = {name: [v.label for v in s.variants] for name, s in sites.items()}
        kernels = {name: [v.kernel_name for v in s.variants] for name, s in sites.items()}
        per_key: dict[tuple[str, Key], tuple[str, str, dict[str, float]]] = {}
        distance = HEURISTICS["inductor"].distance
        namer = SizeNamer(self.session)
        for e, ts, dur in zip(_each(self.session.events), self.stamps(), self.durations):
            where = (e.site, e.key)
            known = per_key.get(where)
            if known is None:
                known = per_key[where] = (
                    format_key(e.key),
                    sizes_text(namer(sites[e.site], e.key)),
                    {f"v{v.index}": distance(e.key, v.key) for v in sites[e.site].variants},
                )
            key_text, sizes, dists = known
            args: dict[str, Any] = {
                "seq": e.seq, "step": e.step, "site": e.site, "key": key_text, **({"sizes": sizes} if sizes else {}),
                "picked": e.picked, "predicted": e.predicted, "hit": e.cache_hit,
                "override": e.override, "kernel": kernels[e.site][e.picked], "distances": dists,
            }
            call = sites[e.site].call_site(e.call_site)
            if call is not None:  # which layer ran it, in the user's names
                args["call_site"] = call.label
                if call.where:
                    args["user_code"] = call.where
            ev: dict[str, Any] = {"name": labels[e.site][e.picked], "cat": "dispatch", "ts": ts + shift,
                                  "pid": self.pid, "tid": self.tids[e.site]}
            m = _measured(self.timings.get(where), e.picked)
            if m is None:
                ev |= {"ph": "i", "s": "t"}
                args["duration"] = "none: a dispatch marker (this variant was not measured at this key)"
            else:
                us, method = m
                ev |= {"ph": "X", "dur": dur}
                args["measured_us"] = us
                args["duration"] = f"the variant's median at this key ({method_title(method)})" + (
                    "" if dur >= us else ", cut short where the site dispatches again")
            ev["args"] = args
            yield ev

    @property
    def timestamps(self) -> str:
        return "recorded t_ns" if self.recorded else "synthetic: events in sequence, each after the previous one ends"

    def start_of(self, step: int | None) -> float:
        """When the first dispatch of workload `step` is (0 where there is none)."""
        return min((ts for e, ts in zip(_each(self.session.events), self.stamps()) if e.step == step), default=0.0)


def write_trace(f: BinaryIO, session: Session) -> None:
    """The session as one process's trace, written into `f` piece by piece."""
    p = _Process(session, PID, None)
    env = session.environment
    _write(f, [p.metadata(), p.dispatches()], {
        "tool": "kinspect", "created": env.created, "gpu": env.gpu, "torch": env.torch, "timestamps": p.timestamps,
    })


def write_ranks_trace(f: BinaryIO, merged: MergedRanks) -> None:
    """A torchrun job's ranks as one trace, a process per rank (pid rank + 1, in rank
    order). Ranks share no clock, so each rank's timeline is shifted to line the ranks up
    at the start of the first workload step they all ran; from there on, a rank that falls
    behind shows as drift."""
    title = merged.sessions[0].model.title
    parts = []
    for rank, s in zip(merged.ranks, merged.sessions):
        env = s.environment
        device = "" if env.local_rank is None else f" cuda:{env.local_rank}"
        parts.append(_Process(s, rank + 1, f"rank {rank} · {env.gpu or 'unknown GPU'}{device} · {title}"))
    common = set.intersection(*({e.step for e in _each(p.session.events)} for p in parts)) - {None}
    first = min(common, default=None)
    starts = [p.start_of(first) for p in parts]
    top = max(starts, default=0.0)
    pieces: list[Iterable[dict[str, Any]]] = []
    for rank, p, start in zip(merged.ranks, parts, starts):
        pieces += [p.metadata(), p.dispatches(top - start),
                   [{"name": "process_sort_index", "ph": "M", "ts": 0, "pid": rank + 1, "tid": 0,
                     "args": {"sort_index": rank}}]]
    env = merged.sessions[0].environment
    _write(f, pieces, {
        "tool": "kinspect", "created": env.created, "torch": env.torch,
        "ranks": list(merged.ranks), "world_size": merged.world_size,
        "timestamps": {f"rank {r}": p.timestamps for r, p in zip(merged.ranks, parts)},
        "aligned": "each rank's own clock, shifted so that all ranks start workload step "
                   f"{first} together" if first is not None else "each rank's own clock: no step all ranks ran",
    })


_BATCH = 512
"""Trace events encoded and written together."""


def _write(f: BinaryIO, pieces: Iterable[Iterable[dict[str, Any]]], other: dict[str, Any]) -> None:
    """`{"traceEvents":[...],"displayTimeUnit":"ns","otherData":{...}}`, its events
    encoded a batch at a time, as `json.dumps` would write the whole."""
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    f.write(b'{"traceEvents":[')
    sep = b""
    for batch in _batched(itertools.chain.from_iterable(pieces)):
        f.write(sep + encode(batch)[1:-1].encode("utf-8"))  # a batch's list, less its brackets
        sep = b","
    f.write(b'],"displayTimeUnit":"ns","otherData":' + encode(other).encode("utf-8") + b"}")


def _batched(events: Iterable[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    it = iter(events)
    while batch := list(itertools.islice(it, _BATCH)):
        yield batch


def _each(events: Sequence[DispatchEvent]) -> Iterator[DispatchEvent]:
    """Every event, a recording's made one at a time and not kept (iterating an `EventLog`
    keeps them all, for the next pass)."""
    if isinstance(events, EventLog):
        return events.each()
    return iter(events)


def _measured(t: KeyTimings | None, picked: int) -> tuple[float, str] | None:
    us = None if t is None else t.median(picked)
    return None if us is None or t is None or t.method is None else (us, t.method)


def _in_sequence(lengths: Sequence[float]) -> Iterator[float]:
    """Each event after the previous one ends (`lengths`: its slice's, nan or 0 for a marker)."""
    t = 0.0
    for m in lengths:
        yield t
        t += (0.0 if math.isnan(m) else m) + GAP_US


def _durations(events: Sequence[DispatchEvent], stamps: Iterable[float], measured: array[float]) -> None:
    """Make `measured` (per event, its picked variant's median, nan for a marker) each
    slice's length, cut short where the same site dispatches again sooner (slices on one
    track must not overlap); 0 for markers."""
    last: dict[str, tuple[int, float]] = {}
    for i, (e, ts) in enumerate(zip(_each(events), stamps)):
        m = measured[i]
        if math.isnan(m):
            measured[i] = 0.0
        seen = last.get(e.site)
        if seen is not None:
            j, at = seen
            measured[j] = max(0.0, min(measured[j], ts - at))
        last[e.site] = (i, ts)
