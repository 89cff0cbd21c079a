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

from collections.abc import Sequence
from typing import Any

from kinspect.core.errors import KinspectError
from kinspect.core.dispatch.heuristics import HEURISTICS
from kinspect.core.ranks.merged import MergedRanks
from kinspect.core.session.runtime import DispatchEvent
from kinspect.core.session.model import Session
from kinspect.core.dispatch.shapes import Key, format_key, sizes_text
from kinspect.core.quality.overview import SizeNamer
from kinspect.core.session.timings import KeyTimings, method_title

PID = 1
GAP_US = 1.0
"""Between events laid out in sequence (a recording without timestamps)."""


def trace(session: Session, pid: int = PID, process: str | None = None) -> dict[str, Any]:
    """The session as one process (`pid`, named `process` or after the model)."""
    sites = {s.name: s for s in session.sites}
    for e in session.events:
        if e.site not in sites:
            raise KinspectError(f"event {e.seq} names unknown site {e.site!r}")
    tids = {name: i + 1 for i, name in enumerate(sites)}
    title = session.model.title
    out: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "ts": 0, "pid": pid, "tid": 0,
         "args": {"name": process or f"kinspect: {title}"}},
    ]
    for name, tid in tids.items():
        track = f"{name} · {sites[name].title}" if sites[name].call_sites else name
        out.append({"name": "thread_name", "ph": "M", "ts": 0, "pid": pid, "tid": tid, "args": {"name": track}})
        out.append({"name": "thread_sort_index", "ph": "M", "ts": 0, "pid": pid, "tid": tid, "args": {"sort_index": tid}})

    events = session.events
    timings = session.timings()
    measured = [_measured(timings.get((e.site, e.key)), e.picked) for e in events]
    recorded = bool(events) and all(e.t_ns is not None for e in events)
    if recorded:
        t0 = min(e.t_ns for e in events)  # type: ignore[type-var]
        stamps = [(e.t_ns - t0) / 1000.0 for e in events]  # type: ignore[operator]
    else:
        stamps = _in_sequence(measured)
    durations = _durations(events, stamps, measured)

    labels = {name: [v.label for v in s.variants] for name, s in sites.items()}
    kernels = {name: [v.kernel_name for v in s.variants] for name, s in sites.items()}
    per_key: dict[tuple[str, Key], tuple[str, str, dict[str, float]]] = {}
    distance = HEURISTICS["inductor"].distance
    namer = SizeNamer(session)
    for e, ts, dur, m in zip(events, stamps, durations, measured):
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
        ev: dict[str, Any] = {"name": labels[e.site][e.picked], "cat": "dispatch", "ts": ts, "pid": pid, "tid": tids[e.site]}
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
        out.append(ev)
    env = session.environment
    return {
        "traceEvents": out,
        "displayTimeUnit": "ns",
        "otherData": {
            "tool": "kinspect",
            "created": env.created,
            "gpu": env.gpu,
            "torch": env.torch,
            "timestamps": "recorded t_ns" if recorded else
            "synthetic: events in sequence, each after the previous one ends",
        },
    }


def ranks_trace(merged: MergedRanks) -> dict[str, Any]:
    """A torchrun job's ranks as one trace, a process per rank (pid rank + 1, in rank
    order). Ranks share no clock, so each rank's timeline is shifted to line the ranks up
    at the start of the first workload step they all ran; from there on, a rank that falls
    behind shows as drift."""
    title = merged.sessions[0].model.title
    parts = []
    for rank, s in zip(merged.ranks, merged.sessions):
        env = s.environment
        device = "" if env.local_rank is None else f" cuda:{env.local_rank}"
        doc = trace(s, rank + 1, f"rank {rank} · {env.gpu or 'unknown GPU'}{device} · {title}")
        events = doc["traceEvents"]
        events.append({"name": "process_sort_index", "ph": "M", "ts": 0, "pid": rank + 1, "tid": 0,
                       "args": {"sort_index": rank}})
        parts.append((events, doc["otherData"]["timestamps"]))
    common = set.intersection(*({e["args"]["step"] for e in events if e.get("cat") == "dispatch"}
                                for events, _ in parts)) - {None}
    first = min(common, default=None)
    starts = [min((e["ts"] for e in events if e.get("cat") == "dispatch" and e["args"]["step"] == first), default=0.0)
              for events, _ in parts]
    top = max(starts, default=0.0)
    out: list[dict[str, Any]] = []
    for (events, _), start in zip(parts, starts):
        for e in events:
            if e["ph"] != "M":
                e["ts"] += top - start
        out += events
    env = merged.sessions[0].environment
    return {
        "traceEvents": out,
        "displayTimeUnit": "ns",
        "otherData": {
            "tool": "kinspect", "created": env.created, "torch": env.torch,
            "ranks": list(merged.ranks), "world_size": merged.world_size,
            "timestamps": {f"rank {r}": stamps for r, (_, stamps) in zip(merged.ranks, parts)},
            "aligned": "each rank's own clock, shifted so that all ranks start workload step "
                       f"{first} together" if first is not None else "each rank's own clock: no step all ranks ran",
        },
    }


def _measured(t: KeyTimings | None, picked: int) -> tuple[float, str] | None:
    us = None if t is None else t.median(picked)
    return None if us is None or t is None or t.method is None else (us, t.method)


def _in_sequence(measured: Sequence[tuple[float, str] | None]) -> list[float]:
    out, t = [], 0.0
    for m in measured:
        out.append(t)
        t += (m[0] if m is not None else 0.0) + GAP_US
    return out


def _durations(events: Sequence[DispatchEvent], stamps: list[float],
               measured: Sequence[tuple[float, str] | None]) -> list[float]:
    """Each measured slice's length, cut short where the same site dispatches again
    sooner (slices on one track must not overlap); 0 for markers."""
    out = [0.0 if m is None else m[0] for m in measured]
    last: dict[str, int] = {}
    for i, e in enumerate(events):
        j = last.get(e.site)
        if j is not None:
            out[j] = max(0.0, min(out[j], stamps[i] - stamps[j]))
        last[e.site] = i
    return out
