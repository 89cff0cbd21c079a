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

from kinspect.core.dispatch.operands import tensor_texts
from kinspect.core.dispatch.shapes import Key, format_key, sizes_or_key, sizes_text
from kinspect.core.export.markdown import code, prose, quote, table
from kinspect.core.numbers import extra, gbps, ratio, ratio_range, share, spread, tflops, us, us_text
from kinspect.core.session.compile_changes import notes, tuned_lines
from kinspect.core.quality.comparison import TITLES, Row, comparison
from kinspect.core.quality.finding_groups import SHOWN_GROUPS, SHOWN_MEMBERS, group_findings, more_text
from kinspect.core.quality.overview import SizeNamer, model_quality
from kinspect.core.quality.pick_map import site_maps
from kinspect.core.quality.variance import regret_spread, spreads, widest
from kinspect.core.quality.whatif import current, paste_line, paste_note, what_ifs
from kinspect.core.session.eventlog import deciders
from kinspect.core.session.runtime import DispatchEvent
from kinspect.core.session.model import Session, Site
from kinspect.core.session.timings import NOISE_RATIO, method_title

SECTIONS = ("Environment", "Symbols", "Sites", "Findings", "Quality", "Comparison", "Decisions", "Measurements",
            "Baselines")


def render(session: Session, images: Sequence[str] = (), chart: str | None = None,
           inductor_names: bool = False) -> str:
    """The report; `images` are files written beside it (decision maps), linked under
    Quality; `chart` is the comparison's image beside it, linked under Comparison. Shapes and
    tensors go by the user's names (`B=157`, `x (B, 1024)`); `inductor_names` gives Inductor's
    (the whole key, `arg3_1 (s33, 1024)`)."""
    names = _Names(session, inductor_names)
    lines = [f"# kinspect report: {prose(session.model.title)}", ""]
    if session.truncated:
        lines += [f"> **Truncated recording:** {prose(session.truncated)}", ""]
    for name, part in zip(SECTIONS, (_environment, _symbols, _sites, _findings, _quality, _comparison,
                                         _decisions, _measurements, _baselines)):
        lines += [f"## {name}", ""]
        body = part(names) or ["None recorded."]
        while body and not body[-1]:
            body.pop()
        lines += [*body, ""]
        if name == "Quality" and images:
            lines += [f"![decision map]({quote(image)})" for image in images] + [""]
        if name == "Comparison" and chart:
            lines += [f"![comparison]({quote(chart)})", ""]
    return "\n".join(lines)


class _Names:
    """How the report names a shape and a site's tensors, and the order shapes go in: by
    site, then by the user's sizes in the order of the session's symbols."""

    def __init__(self, session: Session, inductor_names: bool) -> None:
        self.session = session
        self.inductor = inductor_names
        self._namer = SizeNamer(session)
        self._sites = {site.name: (i, site) for i, site in enumerate(session.sites)}
        self._symbols = [x.label for x in session.symbols]
        self.shape_header = "key" if inductor_names else "sizes"

    def _sizes(self, site: str, key: Key) -> dict[str, int]:
        known = self._sites.get(site)
        return {} if known is None else self._namer(known[1], key)

    def shape(self, site: str, key: Key) -> str:
        """`B=157` (the whole key where no size names it, or with Inductor's names)."""
        return format_key(key) if self.inductor else sizes_or_key(self._sizes(site, key), key)

    def site_index(self, site: str) -> int:
        known = self._sites.get(site)
        return len(self._sites) if known is None else known[0]

    def order(self, site: str, key: Key) -> tuple[Any, ...]:
        sizes = self._sizes(site, key)
        named = tuple(sizes.get(n, -1) for n in self._symbols)
        rest = tuple(sorted((n, v) for n, v in sizes.items() if n not in self._symbols))
        return self.site_index(site), named, rest, key

    def sorted(self, pairs: Iterable[tuple[str, Key]]) -> list[tuple[str, Key]]:
        return sorted(pairs, key=lambda p: self.order(*p))

    def variant(self, site: str, index: int) -> str:
        """`v1 (hint 256)`."""
        known = self._sites.get(site)
        variants = known[1].variants if known else ()
        return variants[index].label if index < len(variants) else f"v{index}"

    def tensors(self, site: Site) -> list[str]:
        return tensor_texts(site.op, site.tensors, None if self.inductor else self.session.aliases)


def _quality(r: _Names) -> list[str]:
    s = r.session
    q = model_quality(s)
    if not q.shapes:
        return _pick_maps(s)
    rows = []
    across_compiles = regret_spread(s)
    for sq in q.sites:
        if not sq.shapes:
            continue
        worst = sq.worst
        assert worst is not None
        across = across_compiles.get(sq.site, [])
        geomean = ratio(sq.geomean_regret) + (
            f" ({ratio_range(min(across), max(across))} over {len(across)} compiles)" if len(across) > 1 else "")
        rows.append((code(sq.site), str(sq.shapes), share(sq.fastest_picked), geomean,
                     f"{ratio(worst.regret)} at {code(_worst_at(r, worst.sizes, worst.key))}",
                     extra(sq.workload_lost), prose(sq.workload_source) if sq.workload_calls else ""))
    site, worst = q.worst  # type: ignore[misc]
    rows.append(("**whole model**", q.shapes_text, share(q.fastest_picked), ratio(q.geomean_regret),
                 f"{ratio(worst.regret)} at {code(site)} {code(_worst_at(r, worst.sizes, worst.key))}",
                 extra(q.workload_lost), ""))
    lines = [
        "At every measured shape, Inductor's pick against the fastest variant by the same rule as "
        "everywhere in kinspect (CUDA-event timings preferred; slower only beyond noise: the pick's p20 "
        f"above the fastest's p80 and at least {ratio(NOISE_RATIO)}). Workload extra = the workload's GPU time beyond what "
        "the fastest variants would take (+100%: twice as long). All from one compile: autotuning differs between compiles (where the same "
        "hints were compiled again, the geometric mean's range over those compiles follows it).",
        "",
        *table(("site", "shapes", "fastest picked", "geomean regret", "worst", "workload extra", "weighed by"), rows),
    ]
    results = what_ifs(s)
    if results:
        now = current(results, s.compiled_hints)
        shown = results[:5] + ([now] if now is not None and now not in results[:5] else [])
        lines += ["", "What-if, on the same measurements (no recompile; compiling with fewer hints can emit "
                  "other kernels, so verify by recompiling):", ""]
        lines += table(("heuristic", "hints", "geomean regret", "worst", "workload extra", ""),
                       ((code(w.heuristic), code(", ".join(map(str, w.hints))), ratio(w.geomean_regret),
                         ratio(w.worst_regret), extra(w.workload_lost),
                         "best" if w is results[0] else ("current" if w is now else "")) for w in shown))
        line, note = paste_line(results), paste_note(results, s.compiled_hints, s.advisable_program)
        if line is not None and note is not None:
            lines += ["", prose(note), "", "```python", line, "```"]
    return lines


def _pick_maps(s: Session) -> list[str]:
    """Where nothing is measured (a trace): which variant runs along each size of each site,
    from the compiled code, with the compiled hints and each subset of them."""
    lines: list[str] = []
    for site in s.sites:
        labels = {v.index: v.label for v in site.variants}
        for m in site_maps(s, site, {}):
            if not m.maps:
                continue
            at = " ".join(f"{k}={v}" for k, v in m.fixed.items())
            lines += [f"{code(site.name, in_table=False)}: which variant runs along "
                      f"{code(f'{m.symbol}={m.lo}..{m.hi}', in_table=False)}"
                      + (f" with {code(at, in_table=False)}" if at else ""), ""]
            lines += table(("hints", "variant run: sizes"),
                           ((code(", ".join(map(str, pm.hints))), prose(pm.text(labels))) for pm in m.maps))
            lines.append("")
    if not lines:
        return []
    return ["Nothing measured: which variant Inductor runs along each size, from the compiled code (the first "
            "row with the compiled hints, then each subset of them as compiled: a compile with fewer hints may "
            "autotune other kernels; `kinspect sweep` measures each variant's latency).", "", *lines]


def _worst_at(r: _Names, sizes: dict[str, int], key: Key) -> str:
    return format_key(key) if r.inductor else sizes_or_key(sizes, key)


def _value(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, (list, tuple)):
        return code(", ".join(str(x) for x in v))
    return code(str(v))


PEAK_TITLES = {
    "tflops_bf16": "GPU peak, bf16 GEMM",
    "gbps": "GPU peak, memory bandwidth",
    "launch_gap_us": "timing overhead, launch gap in a CUDA graph",
    "event_pair_us": "timing overhead, a CUDA event pair",
}
"""What the measured peaks and overheads are, in words (`e.peaks`' keys are field names)."""


def _peak(name: str, v: Any) -> str:
    """A measured peak in its unit, rounded (`800 TFLOP/s`, `0.6 µs`): its last digits are
    the noise of its measurement."""
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return _value(v)
    if name.startswith("tflops"):
        return prose(tflops(v))
    if name == "gbps":
        return prose(gbps(v))
    if name.endswith("_us"):
        return prose(us_text(v))
    return _value(v)


def _environment(r: _Names) -> list[str]:
    s = r.session
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
    rows += [(prose(what), prose(note)) for what, note in notes(e.config)]
    rows += [(prose("hint sizes"), prose(line)) for line in tuned_lines(s.graphs, s.aliases)]
    rows += [(prose(PEAK_TITLES.get(k, f"peak {k}")), _peak(k, v)) for k, v in e.peaks.items()]
    return table(("field", "value"), rows)


def _symbols(r: _Names) -> list[str]:
    s = r.session
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


def _sites(r: _Names) -> list[str]:
    lines: list[str] = []
    for site in r.session.sites:
        lines += [f"### {code(site.name, in_table=False)}", ""]
        lines.append(
            f"{prose(site.op or 'op unknown')} in graph {code(site.graph, in_table=False) or 'unknown'}; "
            f"tensors: {', '.join(code(t, in_table=False) for t in r.tensors(site)) or 'unknown'}"
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
    """Where the model calls the site from (by its module path and class, its line of code,
    and the wrapper's line and buffer); several call sites share one shape cache."""
    if not site.call_sites:
        return []
    head = (f"Called from {len(site.call_sites)} places, sharing one shape cache: the first call at a new "
            "shape decides the variant for all of them." if len(site.call_sites) > 1 else "Called from:")
    rows = (
        (code(c.module or ""), code(c.module_class or ""),
         code(c.where or ""), code(c.code or ""), _value(c.line), code(c.node or ""))
        for c in site.call_sites
    )
    return [head, "", *table(("module", "class", "user code", "line of code", "wrapper line", "Inductor buffer"),
                             rows), ""]


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


def _findings(r: _Names) -> list[str]:
    """Grouped by kind, worst first: each group's line, what its members say alike (once,
    with their sites), then what each says beyond it."""
    out: list[str] = []
    groups = group_findings(r.session.findings)
    for g in groups[:SHOWN_GROUPS]:
        out.append(f"- **{prose(g.title)}** ({prose(g.severity)})")
        shared = g.shared
        if shared is not None:
            out.append(f"  - {', '.join(code(s, in_table=False) for s in g.sites) or 'each'}: {prose(shared)}")
        out += [f"  - {code(f.site or f.graph or '', in_table=False)}: {prose(g.own(f))}" if f.site or f.graph
                else f"  - {prose(g.own(f))}" for f in g.members[:SHOWN_MEMBERS] if g.own(f) or shared is None]
        more = more_text(len(g.members) - SHOWN_MEMBERS, f"{g.kind} findings")
        out += [f"  - {prose(more)}"] if more else []
    more = more_text(len(groups) - SHOWN_GROUPS, "kinds of finding")
    out += [f"- {prose(more)}"] if more else []
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
    return ", ".join(f"v{v} ({_calls(n)})" for v, n in sorted(c.items()))


def _calls(n: int) -> str:
    return f"{n} call{'s' if n != 1 else ''}"


def _decisions(r: _Names) -> list[str]:
    s = r.session
    if not s.events:
        return []
    folded = fold_events(s.events)
    wrong = sum(sum(f.mispredicted.values()) for f in folded.values())
    lines = [
        f"{len(s.events)} dispatch events at {len(folded)} distinct shapes of a site, by site and then size; "
        f"kinspect's prediction differed from Inductor's pick {wrong} times.",
        "",
    ]
    rows = []
    for site, key in r.sorted(folded):
        f = folded[(site, key)]
        hits = f.calls - f.misses
        wrong_here = sum(f.mispredicted.values())
        rows.append((
            code(site), code(r.shape(site, key)), str(f.calls), _counts(f.picked),
            f"{f.misses} miss{'es' if f.misses != 1 else ''}, {hits} hit{'s' if hits != 1 else ''}",
            "yes" if not f.mispredicted else f"no, {_calls(wrong_here)} (predicted {_counts(f.mispredicted)})",
            str(f.overrides) if f.overrides else "",
        ))
    return lines + table(("site", r.shape_header, "calls", "picked", "cache", "predicted = picked", "overrides"),
                         rows) + _deciders(r)


def _deciders(r: _Names) -> list[str]:
    """For shared multi-kernels: which call site's miss chose the variant for all, per site
    and call site, with the shapes it decided where it decided only a few of them."""
    s = r.session
    shared = {site.name: site for site in s.sites if len(site.call_sites) > 1}
    first = {where: c for where, c in deciders(s.events).items()
             if where[0] in shared and c < len(shared[where[0]].call_sites)}
    if not first:
        return []
    by: dict[tuple[str, int], list[Key]] = {}
    for site, key in r.sorted(first):
        by.setdefault((site, first[(site, key)]), []).append(key)
    totals = Counter(site for site, _ in first)
    rows = []
    for (site, c), keys in sorted(by.items(), key=lambda item: (r.site_index(item[0][0]), item[0][1])):
        few = len(keys) < totals[site] and len(keys) <= FEW_SHAPES
        rows.append((code(site), code(shared[site].call_sites[c].label), f"{len(keys)} of {totals[site]}",
                     ", ".join(code(r.shape(site, k)) for k in keys) if few else ""))
    return ["", "Shared multi-kernels: the call site whose cache miss decided a shape's variant for every call site "
            "of the site.", "", *table(("site", "decided by", "shapes", "at"), rows)]


FEW_SHAPES = 10
"""A call site that decided at most this many of a site's shapes (and not all) lists them."""


def _measurements(r: _Names) -> list[str]:
    s = r.session
    if not s.measurements:
        return []
    rows = []
    for site, key in r.sorted(dict.fromkeys((m.site, m.key) for m in s.measurements)):
        t = s.timings_at(site, key)
        cupti = s.measurements_at(site, key, "cupti")
        for v, m in sorted(t.measured.items()):
            over = t.regret(v)
            if over is None:
                regret = prose(m.error) if m.error else ""
            elif t.is_fastest(v):
                regret = f"{ratio(1.0)} (fastest)"
            else:
                regret = ratio(over) + (" (slower beyond noise)" if t.slower(v) else "")
            check = cupti.get(v) if m.method != "cupti" else None
            rows.append((code(site), code(r.shape(site, key)), prose(r.variant(site, v)),
                         prose(method_title(m.method)), us(m.median_us), spread(m.p20_us, m.p80_us),
                         str(m.samples), us(check.median_us) if check else "", regret))
    return [
        "Latency in µs, the latest measurement of each variant, by site and then size (CUDA events when "
        "taken, with CUPTI's kernel duration beside it as the cross-check); regret is the "
        "variant's median over the fastest's at the same shape, and slower beyond noise where "
        f"its p20 is above the fastest's p80 and it takes at least {ratio(NOISE_RATIO)} as long.",
        "",
        *table(("site", r.shape_header, "variant", "method", "median µs", "p20–p80 µs", "samples", "CUPTI µs",
                "regret"), rows),
    ]


def _comparison(r: _Names) -> list[str]:
    s = r.session
    c = comparison(s)
    if c is None:
        return []
    rows = [(prose(sizes_text(row.sizes)), *(_cell(row, k) for k in c.kinds)) for row in c.rows]
    rows.append(("**geomean slowdown vs the best per shape**", *(ratio(c.slowdown(k)) for k in c.kinds)))
    spread_of = {site: v for site, v in regret_spread(s).items() if len(v) > 1}
    lines = [
        f"The whole model's GPU time per call (µs, summed CUPTI kernel time) at each shape, "
        f"`kinspect compare`'s five ways. `hinted` and `oracle` are the compile under inspection "
        f"(the oracle forces the fastest measured variant at every site); the others are fresh "
        f"compiles, which autotune anew: one shape's gap between kinds mixes their difference with "
        f"compile-to-compile noise. The slowdown averages the {len(c.complete)} shapes where every kind was timed.",
        "",
        *table(("sizes", *(TITLES[k] for k in c.kinds)), rows),
    ]
    if spread_of:
        lines += ["", "Each site's geometric-mean regret, per compile of the same hints (fresh caches):", "",
                  *table(("site", "compiles", "regret per compile"),
                         [(code(site), str(len(v)), ", ".join(ratio(x) for x in v)) for site, v in spread_of.items()])]
        lines += ["", "Each variant's widest spread across those compiles (its slowest compile over its fastest "
                  "at one shape), and whether its kernel changed:", "",
                  *table(("site", "hint", "at", "µs per compile", "spread", "kernel"),
                         [(code(w.site), str(w.hint), code(r.shape(w.site, w.key)),
                           ", ".join("-" if t is None else us(t) for t in w.times), ratio(w.ratio),
                           "changed" if w.kernel_changed else "same") for w in widest(spreads(s))])]
    return lines


def _cell(row: Row, kind: str) -> str:
    t = row.times.get(kind)
    if t is None:
        return prose(row.errors.get(kind, ""))
    return f"**{us(t)}**" if row.best == kind else us(t)


def _baselines(r: _Names) -> list[str]:
    s = r.session
    if not s.baselines:
        return []
    rows = [
        (prose(sizes_text(b.sizes)), code(b.kind), us(b.gpu_us), us(b.wall_us), prose(b.error or ""))
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
