"""What kinspect points out about a session, each in one sentence a user can act on.

Findings are derived from the session's facts, never stored by hand, so a recording made
by an older kinspect gains new findings when opened by a newer one. What only a compile
could see (why a graph has no size-hint site, which benchmark tensors misfit) is stored as
facts of the graph, and the findings are derived from those. Each rule is
declared on its function (`kinspect.core.quality.rules`); the rules of other modules
(variance's) are imported here so that deriving runs them all.
"""

from __future__ import annotations

import operator
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import repeat

from kinspect.core.quality.rules import Facts, session_rule, site_rule
from kinspect.core.session.compile_changes import FUSION_KEY
from kinspect.core.session.eventlog import EventLog
from kinspect.core.session.model import AutotuneRow, Finding, Session, Site, Variant
from kinspect.core.session.runtime import DispatchEvent
from kinspect.core.dispatch.operands import operand_names
from kinspect.core.dispatch.shapes import format_key
from kinspect.core.numbers import ratio, us_text


@site_rule("identical-variants")
def identical_variants(site: Site, facts: Facts) -> list[Finding]:
    groups: dict[str, list[int]] = defaultdict(list)
    for v in site.variants:
        groups[v.source_hash or v.kernel_name].append(v.index)
    out = []
    for members in groups.values():
        if len(members) < 2:
            continue
        vs = [site.variants[i] for i in members]
        hints = f" (hints {', '.join(str(v.hint) for v in vs)})" if all(v.hint is not None for v in vs) else ""
        out.append(Finding(
            "identical-variants",
            f"variants {', '.join(f'v{i}' for i in members)}{hints} are the same kernel "
            f"{vs[0].kernel_name}: those hints buy nothing at this site",
            "warning", site=site.name, graph=site.graph, variants=tuple(members),
        ))
    return out


@dataclass(frozen=True)
class EmittedChoice:
    """The autotune choice a variant's kernel was generated from, against its hint's winner.

    Each hint's autotune table numbers its choices afresh (`triton_mm_209` at hint 256 and
    `triton_mm_229` at hint 4096 can be one config), so a choice is its winner when its
    name or its config (the choice's description) is the winner's."""

    name: str
    row: AutotuneRow | None
    """The emitted choice's row, from its own hint's table if it is there."""
    tuned_at: int | None
    """The hint whose table holds the emitted choice (None: no table holds it)."""
    winner: AutotuneRow | None
    is_winner: bool


def emitted_choice(site: Site, v: Variant) -> EmittedChoice | None:
    """None where the variant does not say which choice it runs or which one won."""
    if v.emitted is None or v.winner is None:
        return None
    winner = next((r for r in v.autotune if r.name == v.winner), None)
    row, tuned_at = None, None
    for other in (v, *(o for o in site.variants if o.index != v.index)):
        row = next((r for r in other.autotune if r.name == v.emitted), None)
        if row is not None:
            tuned_at = other.hint
            break
    same_config = winner is not None and row is not None and bool(winner.description) \
        and row.description == winner.description
    return EmittedChoice(v.emitted, row, tuned_at, winner, v.emitted == v.winner or same_config)


def earlier_hints_choices(site: Site) -> list[tuple[Variant, EmittedChoice]]:
    """The variants that run a choice autotuned at an earlier hint than their own, in another
    config than their own hint's winner: what stock Inductor's epilogue-fusion benchmark
    hands a later hint, and `--fusion-per-hint` does not. (An earlier hint's choice in the
    winner's config is the same kernel under another table's name.)"""
    out = []
    for v in site.variants:
        c = emitted_choice(site, v)
        if c is not None and not c.is_winner and _from_earlier_hint(site, v, c):
            out.append((v, c))
    return out


def _from_earlier_hint(site: Site, v: Variant, c: EmittedChoice) -> bool:
    """The choice was autotuned at a hint before the variant's own in Inductor's order (that
    of its loop over `multi_kernel_hints`, the variants' own)."""
    return c.tuned_at in {o.hint for o in site.variants if o.index < v.index}


def _earlier_hint_cause(site: Site, v: Variant, c: EmittedChoice, fixed: bool) -> str:
    """Why a later hint runs an earlier hint's choice: Inductor's epilogue-fusion benchmark
    keeps one list of compiled choices across the hints, each benchmarked at its own hint's
    sizes, so at a later hint the earlier hints' choices, timed on their problems, compete
    too (docs/upstream/fusion-per-hint.md). Said only where the order fits that cause; in a
    session recorded with kinspect's fix (`fixed`) only a hint none of whose own choices
    compiled fused can get another's, and that is said instead."""
    if not _from_earlier_hint(site, v, c):
        return ""
    if fixed:
        return (f": recorded with --fusion-per-hint, so none of hint {v.hint}'s own choices compiled with its "
                "epilogue and Inductor fell back to an earlier hint's, as it does stock")
    return (f": Inductor's epilogue-fusion benchmark at hint {v.hint} also compares the choices of the hints "
            "before it, each timed fused on its own hint's problem (docs/upstream/fusion-per-hint.md); "
            "--fusion-per-hint has each hint pick among its own")


@site_rule("not-autotune-winner")
def emitted_not_winner(site: Site, facts: Facts) -> list[Finding]:
    """A choice of the variant's own hint that lost its autotune table is Inductor's fusion
    benchmark at work (finalizing a template without fusion takes each hint's winner), so it
    is told as information; another hint's choice is the warning."""
    out = []
    fixed = bool(facts.session.environment.config.get(FUSION_KEY))
    for v in site.variants:
        c = emitted_choice(site, v)
        if c is None or c.is_winner:
            continue
        own = c.tuned_at == v.hint
        if c.tuned_at is not None and not own:
            text = (f"v{v.index} (hint {v.hint}) runs {v.emitted}, a choice autotuned at hint {c.tuned_at}, "
                    f"not {v.winner}, the fastest Triton choice autotuned at its own hint, whose config differs"
                    f"{_earlier_hint_cause(site, v, c, fixed)}")
        else:
            detail = ""
            if c.winner is not None and c.row is not None and c.winner.time_us and c.row.time_us:
                detail = (f" ({us_text(c.row.time_us)} against {us_text(c.winner.time_us)} when autotuned at hint "
                          f"{v.hint}: Inductor's benchmark at the hint's sizes, not a time at any runtime shape)")
            cause = _fused_cause(v) if own else ""
            text = (f"v{v.index} (hint {v.hint}) runs {v.emitted}, not {v.winner}, the fastest Triton "
                    f"choice autotuned at its hint{detail}{cause}")
        out.append(Finding(
            "not-autotune-winner", text,
            "info" if own else "warning", site=site.name, graph=site.graph, variants=(v.index,),
        ))
    return out


def _fused_cause(v: Variant) -> str:
    """Why a variant runs a choice of its own hint that lost the table, with the fusion
    benchmark's times where the session holds them."""
    said = ": Inductor's fusion benchmark picked it, timing the hint's choices with the ops fused into the kernel"
    fused = {r.name: r.time_us for r in v.fused}
    mine, theirs = fused.get(v.emitted or ""), fused.get(v.winner or "")
    if mine is None:
        return said + ", where the table timed the GEMM alone"
    if theirs is None:
        return said + f" ({us_text(mine)} fused; {v.winner} was not timed fused)"
    return said + f" ({us_text(mine)} fused, against {us_text(theirs)} for {v.winner})"


def _where(session: Session, columns: Callable[[EventLog], Iterable[bool]],
           test: Callable[[DispatchEvent], bool]) -> Iterable[DispatchEvent]:
    """The events passing `test`, found over the columns of a loaded session (a mask from
    `columns`) without building every event."""
    events = session.events
    if isinstance(events, EventLog):
        return events.where(columns(events))
    return (e for e in events if test(e))


@site_rule("key-structure")
def structure_mismatches(site: Site, facts: Facts) -> list[Finding]:
    hint_key = next((k for k in site.keys if k is not None), None)
    if hint_key is None:
        return []
    seen = facts.site_keys.get(site.name, set())
    structure = (len(hint_key), tuple(len(t) for t in hint_key))
    for key in sorted(seen):
        if (len(key), tuple(len(t) for t in key)) != structure:
            return [Finding(
                "key-structure",
                f"runtime key {format_key(key)} does not line up with the hint keys "
                f"{format_key(hint_key)}: Inductor's zip compares only the common prefix",
                "warning", site=site.name, graph=site.graph,
            )]
    return []


@site_rule("key-not-true-size")
def key_value_mismatches(site: Site, facts: Facts) -> list[Finding]:
    """Dims Inductor keys by the hint where the true size differs, in the user's names
    (`out dim 0 is B*S`) as the Symbolic tab shows them: one finding per site, each dim
    once with its true size at every hint (a transformer's sites all have B*S rows, and a
    finding per hint and dim said the same thing a dozen times)."""
    aliases = dict(facts.session.aliases or {})
    names = operand_names(site.op, site.tensors)
    dims: dict[tuple[str, int], tuple[str, list[str]]] = {}
    variants: set[int] = set()
    tuned = facts.session.tuned_sizes(site)
    for v in site.variants:
        if v.hint is None or (v.hint not in tuned and not site.keyed_by_hint(v)):
            continue  # keyed at the sizes its kernel computes, by an Inductor that evaluates per symbol
        for t, name in zip(site.tensors, names):
            for d, dim in enumerate(t.at_hint(v.hint, tuned.get(v.hint))):
                if dim.differs:
                    expr, at = dims.setdefault((name, d), (dim.expr.text_with(aliases), []))
                    at.append(f"{dim.true_text} at hint {v.hint}")
                    variants.add(v.index)
    if not dims:
        return []
    text = ", ".join(f"{name} dim {d} is {expr} ({', '.join(at)})" for (name, d), (expr, at) in dims.items())
    return [Finding(
        "key-not-true-size",
        f"Inductor keys each hint's variant with the hint itself as these sizes: {text}",
        "info", site=site.name, graph=site.graph, variants=tuple(sorted(variants)),
    )]


@session_rule("model-disagrees")
def mispredictions(session: Session) -> list[Finding]:
    out = []
    reported: set[tuple[str, tuple]] = set()

    def wrong(log: EventLog) -> Iterable[bool]:
        overrides = log.override if log.override is not None else repeat(None)
        return (p != q and o is None for p, q, o in zip(log.picked, log.predicted, overrides))

    for e in _where(session, wrong, lambda e: e.override is None and e.predicted != e.picked):
        if (e.site, e.key) not in reported:
            reported.add((e.site, e.key))
            out.append(Finding(
                "model-disagrees",
                f"event {e.seq}: Inductor ran v{e.picked} for {format_key(e.key)} but kinspect's "
                f"model of its heuristic predicts v{e.predicted}",
                "error", site=e.site, variants=(e.picked, e.predicted),
            ))
    return out


@session_rule("shared-cache")
def shared_caches(session: Session) -> list[Finding]:
    """Sites called from several places: which call decided each shape for all of them."""
    shared = {s.name: s for s in session.sites if len(s.call_sites) > 1}
    if not shared:
        return []
    deciders: dict[str, Counter[int]] = {name: Counter() for name in shared}
    misses = _where(session, lambda log: map(operator.not_, log.hit), lambda e: not e.cache_hit)
    for e in misses:
        if e.site in shared and e.override is None and e.call_site is not None:
            deciders[e.site][e.call_site] += 1
    out = []
    for name, site in shared.items():
        n = len(site.call_sites)
        shown = ", ".join(c.label for c in site.call_sites[:3]) + (", ..." if n > 3 else "")
        text = (f"{name} is called from {n} places ({shown}) that share one shape cache: the first "
                f"call at a new shape decides the variant for all {n}")
        if deciders[name]:
            top, count = deciders[name].most_common(1)[0]
            text += (f"; in this recording {site.call_sites[top].label} decided {count} of "
                     f"{sum(deciders[name].values())} shapes")
        out.append(Finding("shared-cache", text, "info", site=name, graph=site.graph))
    return out


@session_rule("slow-pick")
def slow_picks(session: Session) -> list[Finding]:
    """Per site, the sizes where Inductor's pick is slower than the fastest variant beyond
    noise (its p20 above the fastest's p80 and at least 1.05x), as ranges; a site measured
    at several shapes with none beyond noise says so too."""
    from kinspect.core.quality.overview import SizeNamer, ranges_text, session_points, session_quality

    if not session.measurements:
        return []
    out = []
    namer = SizeNamer(session)
    for site in session.sites:
        measured = session_points(session, site)
        if not measured:
            continue
        if not any(slower for *_, (_, _, slower) in measured):  # no need to name and sort the shapes
            if len(measured) > 1:
                out.append(Finding(
                    "slow-pick", f"Inductor's pick is the fastest variant within noise at all {len(measured)} "
                    "measured shapes (one compile)", "info", site=site.name, graph=site.graph))
            continue
        q = session_quality(session, site, namer)
        slow = [p for p in q.points if p.slower]
        worst = max(slow, key=lambda p: p.regret)
        text = "; ".join(ranges_text(q.points, site, site.labels()))
        out.append(Finding(
            "slow-pick",
            f"Inductor's pick is slower than the fastest variant beyond noise at {len(slow)} of {q.shapes} "
            f"measured shapes, worst {ratio(worst.regret)} (one compile): {text}",
            "warning", site=site.name, graph=site.graph,
            variants=tuple(sorted({p.picked for p in slow} | {p.fastest for p in slow})),
        ))
    return out


@session_rule("no-site")
def no_site_graphs(session: Session) -> list[Finding]:
    return [
        Finding("no-site", f"{g.name} has no size-hint multi-kernel: {g.no_site_reason}", "info", graph=g.name)
        for g in session.graphs if g.no_site_reason
    ]


def derived_kinds() -> frozenset[str]:
    """What `derive_findings` reports; a stored finding of another kind came from elsewhere."""
    return site_rule.kinds | session_rule.kinds


def derive_findings(session: Session) -> list[Finding]:
    """Every declared rule's findings: site by site, then the session's."""
    facts = Facts(session)
    out: list[Finding] = []
    for site in session.sites:
        out += site_rule.derive(site, facts)
    return out + session_rule.derive(session)


def refreshed(session: Session) -> list[Finding]:
    """The findings this kinspect derives from a loaded session's facts, plus any stored
    finding of a kind it does not derive (a newer kinspect's), so an older recording
    shows today's findings and not stale ones."""
    kinds = derived_kinds()
    return derive_findings(session) + [f for f in session.findings if f.kind not in kinds]


# Imported last, so that their rules (unstable-autotune, far-below-peak, then
# hint-benchmark-tensor, hint-size-in-kernel, autotune-time-disagrees, autotune-timed-overhead, runs-far-from-hints and
# equally-near) are
# listed after this module's.
from kinspect.core.quality import variance  # noqa: E402,F401
from kinspect.core.quality import roofline  # noqa: E402,F401
from kinspect.core.quality import benchmark_tensors  # noqa: E402,F401
from kinspect.core.quality import kernel_sizes  # noqa: E402,F401
from kinspect.core.quality import autotune_time  # noqa: E402,F401
from kinspect.core.quality import autotune_overhead  # noqa: E402,F401
from kinspect.core.quality import far_from_hints  # noqa: E402,F401
from kinspect.core.quality import ties  # noqa: E402,F401
from kinspect.core.quality import hint_at_examples  # noqa: E402,F401
