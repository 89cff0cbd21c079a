"""A Markdown report of a session, for bug reports and pull requests.

It says in one page what the inspector shows interactively: where and with what the
recording was made, each site's variants (and which of them are really one kernel),
kinspect's findings, what Inductor decided along the workload, what was measured, and
what the whole model costs compiled other ways (baselines).
Dispatch events are folded per site and runtime key, so 100,000 events make a table of
distinct keys, not 100,000 rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kinspect.core.quality.benchmark_fit import patched_note
from kinspect.core.quality.comparison import TITLES, Row, comparison
from kinspect.core.session.eventlog import deciders
from kinspect.core.quality.finding_groups import group_findings
from kinspect.core.export.markdown import code, prose, quote, table
from kinspect.core.session.model import DispatchEvent, Session, Site
from kinspect.core.quality.overview import SizeNamer, model_quality
from kinspect.core.dispatch.shapes import Key, format_key, sizes_or_key, sizes_text
from kinspect.core.quality.variance import regret_spread, spreads, widest
from kinspect.core.quality.whatif import current, what_ifs

SECTIONS = ("Environment", "Symbols", "Sites", "Findings", "Quality", "Comparison", "Decisions", "Measurements",
            "Baselines")


def render(session: Session, images: Sequence[str] = (), chart: str | None = None) -> str:
    """The report; `images` are files written beside it (decision maps), linked under
    Quality; `chart` is the comparison's image beside it, linked under Comparison."""
    title = session.model.title
    lines = [f"# kinspect report: {prose(title)}", ""]
    if session.truncated:
        lines += [f"> **Truncated recording:** {prose(session.truncated)}", ""]
    for name, part in zip(SECTIONS, (_environment, _symbols, _sites, _findings, _quality, _comparison,
                                         _decisions, _measurements, _baselines)):
        lines += [f"## {name}", ""]
        lines += part(session) or ["None recorded."]
        lines.append("")
        if name == "Quality" and images:
            lines += [f"![decision map]({quote(image)})" for image in images] + [""]
        if name == "Comparison" and chart:
            lines += [f"![comparison]({quote(chart)})", ""]
    return "\n".join(lines)


def _share(x: float | None) -> str:
    return "" if x is None else f"{100 * x:.0f}%"


def _times(x: float | None) -> str:
    return "" if x is None else f"×{x:.2f}"


def _quality(s: Session) -> list[str]:
    q = model_quality(s)
    if not q.shapes:
        return []
    rows = []
    spread = regret_spread(s)
    for sq in q.sites:
        if not sq.points:
            continue
        worst = sq.worst
        assert worst is not None
        across = spread.get(sq.site, [])
        geomean = _times(sq.geomean_regret) + (
            f" (×{min(across):.2f}–×{max(across):.2f} over {len(across)} compiles)" if len(across) > 1 else "")
        rows.append((code(sq.site), str(sq.shapes), _share(sq.fastest_picked), geomean,
                     f"{_times(worst.regret)} at {code(sizes_or_key(worst.sizes, worst.key))}",
                     _share(sq.workload_lost), prose(sq.workload_source) if sq.workload_calls else ""))
    site, worst = q.worst  # type: ignore[misc]
    rows.append(("**whole model**", str(q.shapes), _share(q.fastest_picked), _times(q.geomean_regret),
                 f"{_times(worst.regret)} at {code(site)} {code(sizes_or_key(worst.sizes, worst.key))}",
                 _share(q.workload_lost), ""))
    lines = [
        "At every measured shape, Inductor's pick against the fastest variant by the same rule as "
        "everywhere in kinspect (CUDA-event timings preferred; slower only beyond noise: the pick's p20 "
        "above the fastest's p80 and at least ×1.05). Lost = GPU time lost over the workload, as a share "
        "of the fastest possible. All from one compile: autotuning differs between compiles (where the same "
        "hints were compiled again, the geometric mean's range over those compiles follows it).",
        "",
        *table(("site", "shapes", "fastest picked", "geomean regret", "worst", "workload lost", "weighed by"), rows),
    ]
    results = what_ifs(s)
    if results:
        now = current(results, s.model.hints or sorted({v.hint for x in s.sites for v in x.variants if v.hint}))
        shown = results[:5] + ([now] if now is not None and now not in results[:5] else [])
        lines += ["", "What-if, on the same measurements (no recompile; compiling with fewer hints can emit "
                  "other kernels, so verify by recompiling):", ""]
        lines += table(("heuristic", "hints", "geomean regret", "worst", "workload lost", ""),
                       ((code(w.heuristic), code(", ".join(map(str, w.hints))), _times(w.geomean_regret),
                         _times(w.worst_regret), _share(w.workload_lost),
                         "best" if w is results[0] else ("current" if w is now else "")) for w in shown))
    return lines


def _value(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, (list, tuple)):
        return code(", ".join(str(x) for x in v))
    return code(str(v))


def _environment(s: Session) -> list[str]:
    e = s.environment
    rows = [
        (prose(label), _value(value))
        for label, value in (
            ("recorded", e.created), ("GPU", e.gpu), ("torch", e.torch), ("triton", e.triton),
            ("python", e.python), ("CUDA", e.cuda), ("platform", e.platform),
            ("model", s.model.path), ("hints", list(s.model.hints) or None),
        )
        if value is not None
    ]
    rows += [(prose(f"config {k}"), _value(v)) for k, v in e.config.items()]
    if patched_note(e.config):
        rows.append((prose("hint autotuning"), prose(patched_note(e.config) or "")))
    rows += [(prose(f"peak {k}"), _value(v)) for k, v in e.peaks.items()]
    return table(("field", "value"), rows)


def _symbols(s: Session) -> list[str]:
    if not s.symbols:
        return []
    return table(
        ("symbol", "Inductor name", "input", "dim", "example", "sources"),
        (
            (code(x.alias or ""), code(x.name), code(x.input or ""), _value(x.dim),
             _value(x.example), ", ".join(code(src) for src in x.sources))
            for x in s.symbols
        ),
    )


def _sites(s: Session) -> list[str]:
    lines: list[str] = []
    for site in s.sites:
        lines += [f"### {code(site.name, in_table=False)}", ""]
        lines.append(
            f"{prose(site.op or 'op unknown')} in graph {code(site.graph, in_table=False) or 'unknown'}; "
            f"tensors: {', '.join(code(f'{t.name} {t.text()}', in_table=False) for t in site.tensors) or 'unknown'}"
        )
        lines.append("")
        lines += table(
            ("variant", "hint", "key", "kernel", "config"),
            (
                (str(v.index), _value(v.hint), code(format_key(v.key)) if v.key else "none",
                 code(v.kernel_name), ", ".join(code(f"{k}={val}") for k, val in v.config.items()))
                for v in site.variants
            ),
        )
        lines.append("")
        lines += _identical(site)
        lines += _call_sites(site)
    return lines


def _call_sites(site: Site) -> list[str]:
    """Where the model calls the site from; several call sites share one shape cache."""
    if not site.call_sites:
        return []
    head = (f"Called from {len(site.call_sites)} places, sharing one shape cache: the first call at a new "
            "shape decides the variant for all of them." if len(site.call_sites) > 1 else "Called from:")
    rows = (
        (code(c.label), code(c.module_class or ""), code(c.where or ""), code(c.code or ""),
         _value(c.line), code(c.node or ""))
        for c in site.call_sites
    )
    return [head, "", *table(("module", "class", "user code", "line of code", "wrapper line", "buffer"), rows), ""]


def _identical(site: Site) -> list[str]:
    groups: dict[tuple[str, str], list[int]] = {}
    for v in site.variants:
        identity = ("source", v.source_hash) if v.source_hash else ("name", v.kernel_name)
        groups.setdefault(identity, []).append(v.index)
    out = []
    for members in groups.values():
        if len(members) > 1:
            names = ", ".join(f"v{i}" for i in members[:-1]) + f" and v{members[-1]}"
            kernel = site.variants[members[0]].kernel_name
            out.append(f"- {names} run the same kernel, {code(kernel, in_table=False)}: "
                       "choosing between them changes nothing at run time.")
    return out + [""] if out else []


def _findings(s: Session) -> list[str]:
    """Grouped by kind, worst first: each group's line, then its members."""
    out: list[str] = []
    for g in group_findings(s.findings):
        out.append(f"- **{prose(g.title)}** ({prose(g.severity)})")
        out += [f"  - {code(f.site or f.graph or '', in_table=False)}: {prose(f.message)}" if f.site or f.graph
                else f"  - {prose(f.message)}" for f in g.members]
    return out + [""] if out else []


@dataclass
class _Fold:
    """What happened at one site and runtime key, across all its calls."""

    calls: int = 0
    misses: int = 0
    overrides: int = 0
    picked: Counter[int] = field(default_factory=Counter)
    mispredicted: Counter[int] = field(default_factory=Counter)


def fold_events(events: Iterable[DispatchEvent]) -> dict[tuple[str, Key], _Fold]:
    out: dict[tuple[str, Key], _Fold] = {}
    for e in events:
        f = out.get((e.site, e.key))
        if f is None:
            f = out[(e.site, e.key)] = _Fold()
        f.calls += 1
        f.picked[e.picked] += 1
        if not e.cache_hit:
            f.misses += 1
        if e.override is not None:
            f.overrides += 1
        if e.predicted != e.picked:
            f.mispredicted[e.predicted] += 1
    return out


def _counts(c: Counter[int]) -> str:
    if len(c) == 1:
        return f"v{next(iter(c))}"
    return ", ".join(f"v{v} ×{n}" for v, n in sorted(c.items()))


def _decisions(s: Session) -> list[str]:
    if not s.events:
        return []
    folded = fold_events(s.events)
    order = {site.name: i for i, site in enumerate(s.sites)}
    keys = sorted(folded, key=lambda k: order.get(k[0], len(order)))
    wrong = sum(sum(f.mispredicted.values()) for f in folded.values())
    lines = [
        f"{len(s.events)} dispatch events, {len(folded)} distinct site and key pairs; "
        f"kinspect's prediction differed from Inductor's pick {wrong} times.",
        "",
    ]
    rows = []
    for site, key in keys:
        f = folded[(site, key)]
        hits = f.calls - f.misses
        rows.append((
            code(site), code(format_key(key)), str(f.calls), _counts(f.picked),
            f"{f.misses} miss{'es' if f.misses != 1 else ''}, {hits} hit{'s' if hits != 1 else ''}",
            "yes" if not f.mispredicted else f"no ×{sum(f.mispredicted.values())} (predicted {_counts(f.mispredicted)})",
            str(f.overrides) if f.overrides else "",
        ))
    return lines + table(("site", "key", "calls", "picked", "cache", "predicted = picked", "overrides"), rows) \
        + _deciders(s)


def _deciders(s: Session) -> list[str]:
    """For shared multi-kernels: which call site's miss chose each key's variant for all."""
    shared = {site.name: site for site in s.sites if len(site.call_sites) > 1}
    first = {where: c for where, c in deciders(s.events).items() if where[0] in shared}
    if not first:
        return []
    rows = ((code(site), code(format_key(key)), code(shared[site].call_sites[c].label))
            for (site, key), c in first.items() if c < len(shared[site].call_sites))
    return ["", "Shared multi-kernels: the call site whose cache miss decided each key for every call site.", "",
            *table(("site", "key", "decided by"), rows)]


def _us(v: float | None) -> str:
    return "" if v is None else f"{v:.2f}"


def _measurements(s: Session) -> list[str]:
    if not s.measurements:
        return []
    rows = []
    for site, key in dict.fromkeys((m.site, m.key) for m in s.measurements):
        t = s.timings_at(site, key)
        cupti = s.measurements_at(site, key, "cupti")
        for v, m in t.measured.items():
            ratio = t.regret(v)
            if ratio is None:
                regret = prose(m.error) if m.error else ""
            elif t.is_fastest(v):
                regret = "1.00 (fastest)"
            else:
                regret = f"{ratio:.2f}" + (" (slower beyond noise)" if t.slower(v) else "")
            spread = f"{_us(m.p20_us)}–{_us(m.p80_us)}" if m.p20_us is not None or m.p80_us is not None else ""
            check = cupti.get(v) if m.method != "cupti" else None
            rows.append((code(site), code(format_key(key)), f"v{v}", code(m.method), _us(m.median_us),
                         spread, str(m.samples), _us(check.median_us) if check else "", regret))
    return [
        "Latency in microseconds, the latest measurement of each variant (CUDA events when "
        "taken, with CUPTI's kernel duration beside it as the cross-check); regret is the "
        "variant's median over the fastest's at the same key, and slower beyond noise where "
        "its p20 is above the fastest's p80 and it takes at least 1.05 times as long.",
        "",
        *table(("site", "key", "variant", "method", "median", "p20–p80", "samples", "CUPTI", "regret"), rows),
    ]


def _comparison(s: Session) -> list[str]:
    c = comparison(s)
    if c is None:
        return []
    rows = [(prose(sizes_text(r.sizes)), *(_cell(r, k) for k in c.kinds)) for r in c.rows]
    rows.append(("**geomean slowdown vs the best per shape**", *(_times(c.slowdown(k)) for k in c.kinds)))
    spread = {site: v for site, v in regret_spread(s).items() if len(v) > 1}
    namer = SizeNamer(s)
    lines = [
        f"The whole model's GPU time per call (µs, summed CUPTI kernel time) at each shape, "
        f"`kinspect compare`'s five ways. `hinted` and `oracle` are the compile under inspection "
        f"(the oracle forces the fastest measured variant at every site); the others are fresh "
        f"compiles, which autotune anew: one shape's gap between kinds mixes their difference with "
        f"compile-to-compile noise. The slowdown averages the {len(c.complete)} shapes where every kind was timed.",
        "",
        *table(("sizes", *(TITLES[k] for k in c.kinds)), rows),
    ]
    if spread:
        lines += ["", "Each site's geometric-mean regret, per compile of the same hints (fresh caches):", "",
                  *table(("site", "compiles", "regret per compile"),
                         [(code(site), str(len(v)), ", ".join(_times(x) for x in v)) for site, v in spread.items()])]
        lines += ["", "Each variant's widest spread across those compiles (its slowest compile over its fastest "
                  "at one key), and whether its kernel changed:", "",
                  *table(("site", "hint", "at", "µs per compile", "spread", "kernel"),
                         [(code(w.site), str(w.hint), code(sizes_or_key(namer(s.site(w.site), w.key), w.key)),
                           ", ".join("-" if t is None else f"{t:.1f}" for t in w.times), _times(w.ratio),
                           "changed" if w.kernel_changed else "same") for w in widest(spreads(s))])]
    return lines


def _cell(r: Row, kind: str) -> str:
    t = r.times.get(kind)
    if t is None:
        return prose(r.errors.get(kind, ""))
    return f"**{t:.1f}**" if r.best == kind else f"{t:.1f}"


def _baselines(s: Session) -> list[str]:
    if not s.baselines:
        return []
    rows = [
        (prose(sizes_text(b.sizes)), code(b.kind), _us(b.gpu_us), _us(b.wall_us),
         prose(b.error or ""))
        for b in s.baselines
    ]
    return [
        "The whole model at one set of sizes, compiled afresh per kind: `eager`; `static` "
        "(compiled for exactly these sizes); `exact_hint` (these sizes as the only hint); "
        "`hinted` (the session's hints). GPU time is the summed CUPTI kernel durations per call; "
        "wall time is CUDA events around the call.",
        "",
        *table(("sizes", "kind", "GPU µs", "wall µs", "error"), rows),
    ]
