"""Dispatch decisions as a Chrome trace-event file, for Perfetto or chrome://tracing.

One track (thread) per site, one slice per dispatch, named by the variant picked, so
the trace viewer colours each site's row by variant along the workload; the decision
itself (key, prediction, every variant's distance, cache hit, override) is the slice's
args. Timestamps are the recording's `t_ns` when every event has one; otherwise events
are laid out one microsecond apart in sequence, and `otherData.timestamps` says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kinspect.core.errors import KinspectError
from kinspect.core.heuristics import HEURISTICS
from kinspect.core.session import DispatchEvent, Session
from kinspect.core.shapes import Key, format_key

PID = 1
SLICE_US = 1.0
"""Slice length: short enough not to overlap the next dispatch of the same site."""


def trace(session: Session) -> dict[str, Any]:
    sites = {s.name: s for s in session.sites}
    for e in session.events:
        if e.site not in sites:
            raise KinspectError(f"event {e.seq} names unknown site {e.site!r}")
    tids = {name: i + 1 for i, name in enumerate(sites)}
    title = session.model.name or session.model.path or "session"
    out: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "ts": 0, "pid": PID, "tid": 0, "args": {"name": f"kinspect: {title}"}},
    ]
    for name, tid in tids.items():
        out.append({"name": "thread_name", "ph": "M", "ts": 0, "pid": PID, "tid": tid, "args": {"name": name}})
        out.append({"name": "thread_sort_index", "ph": "M", "ts": 0, "pid": PID, "tid": tid, "args": {"sort_index": tid}})

    events = session.events
    recorded = bool(events) and all(e.t_ns is not None for e in events)
    if recorded:
        t0 = min(e.t_ns for e in events)  # type: ignore[type-var]
        stamps = [(e.t_ns - t0) / 1000.0 for e in events]  # type: ignore[operator]
    else:
        stamps = [float(i) for i in range(len(events))]
    durations = _durations(events, stamps)

    labels = {name: [v.label for v in s.variants] for name, s in sites.items()}
    kernels = {name: [v.kernel_name for v in s.variants] for name, s in sites.items()}
    per_key: dict[tuple[str, Key], tuple[str, dict[str, float]]] = {}
    distance = HEURISTICS["inductor"].distance
    for e, ts, dur in zip(events, stamps, durations):
        where = (e.site, e.key)
        known = per_key.get(where)
        if known is None:
            known = per_key[where] = (
                format_key(e.key),
                {f"v{v.index}": distance(e.key, v.key) for v in sites[e.site].variants},
            )
        key_text, dists = known
        out.append({
            "name": labels[e.site][e.picked],
            "cat": "dispatch",
            "ph": "X",
            "ts": ts,
            "dur": dur,
            "pid": PID,
            "tid": tids[e.site],
            "args": {
                "seq": e.seq, "step": e.step, "site": e.site, "key": key_text,
                "picked": e.picked, "predicted": e.predicted, "hit": e.cache_hit,
                "override": e.override, "kernel": kernels[e.site][e.picked], "distances": dists,
            },
        })
    env = session.environment
    return {
        "traceEvents": out,
        "displayTimeUnit": "ns",
        "otherData": {
            "tool": "kinspect",
            "created": env.created,
            "gpu": env.gpu,
            "torch": env.torch,
            "timestamps": "recorded t_ns" if recorded else "synthetic: one event per microsecond, in sequence",
        },
    }


def _durations(events: Sequence[DispatchEvent], stamps: list[float]) -> list[float]:
    """SLICE_US, cut short where the same site dispatches again sooner."""
    out = [SLICE_US] * len(events)
    last: dict[str, int] = {}
    for i, e in enumerate(events):
        j = last.get(e.site)
        if j is not None:
            out[j] = max(0.0, min(out[j], stamps[i] - stamps[j]))
        last[e.site] = i
    return out
