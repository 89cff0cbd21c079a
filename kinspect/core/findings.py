"""What kinspect points out about a session, each in one sentence a user can act on.

Findings are derived from the session's facts, never stored by hand, so a recording made
by an older kinspect gains new findings when opened by a newer one. The capture layer adds
only what cannot be derived later (why a graph has no size-hint site).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from kinspect.core.session import AutotuneRow, Finding, Session, Site, Variant
from kinspect.core.shapes import format_key


def identical_variants(site: Site) -> list[Finding]:
    groups: dict[str, list[int]] = defaultdict(list)
    for v in site.variants:
        groups[v.source_hash or v.kernel_name].append(v.index)
    out = []
    for members in groups.values():
        if len(members) < 2:
            continue
        vs = [site.variants[i] for i in members]
        hints = ", ".join(str(v.hint) for v in vs)
        out.append(Finding(
            "identical-variants",
            f"variants {', '.join(f'v{i}' for i in members)} (hints {hints}) are the same kernel "
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


def emitted_not_winner(site: Site) -> list[Finding]:
    out = []
    for v in site.variants:
        c = emitted_choice(site, v)
        if c is None or c.is_winner:
            continue
        if c.tuned_at is not None and c.tuned_at != v.hint:
            text = (f"v{v.index} (hint {v.hint}) runs {v.emitted}, a choice autotuned at hint {c.tuned_at}, "
                    f"not {v.winner}, the fastest Triton choice autotuned at its own hint, whose config differs")
        else:
            detail = ""
            if c.winner is not None and c.row is not None and c.winner.time_us and c.row.time_us:
                detail = f" ({c.row.time_us:.1f} us against {c.winner.time_us:.1f} us when autotuned at hint {v.hint})"
            text = (f"v{v.index} (hint {v.hint}) runs {v.emitted}, not {v.winner}, the fastest Triton "
                    f"choice autotuned at its hint{detail}")
        out.append(Finding(
            "not-autotune-winner", text,
            "warning", site=site.name, graph=site.graph, variants=(v.index,),
        ))
    return out


def key_value_mismatches(site: Site) -> list[Finding]:
    out = []
    for v in site.variants:
        if v.hint is None:
            continue
        for t in site.tensors:
            for d, dim in enumerate(t.at_hint(v.hint)):
                if dim.differs:
                    out.append(Finding(
                        "key-not-true-size",
                        f"at hint {v.hint}, {t.name} dim {d} is {dim.expr.text} = {dim.true_text} "
                        f"but Inductor keys (and tunes) it as {dim.key_value}",
                        "info", site=site.name, graph=site.graph, variants=(v.index,),
                    ))
    return out


def structure_mismatches(session: Session, site: Site) -> list[Finding]:
    hint_key = next((k for k in site.keys if k is not None), None)
    if hint_key is None:
        return []
    seen = {e.key for e in session.events if e.site == site.name}
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


def mispredictions(session: Session) -> list[Finding]:
    out = []
    reported: set[tuple[str, tuple]] = set()
    for e in session.events:
        if e.override is None and e.predicted != e.picked and (e.site, e.key) not in reported:
            reported.add((e.site, e.key))
            out.append(Finding(
                "model-disagrees",
                f"event {e.seq}: Inductor ran v{e.picked} for {format_key(e.key)} but kinspect's "
                f"model of its heuristic predicts v{e.predicted}",
                "error", site=e.site, variants=(e.picked, e.predicted),
            ))
    return out


def no_site_graphs(session: Session) -> list[Finding]:
    return [
        Finding("no-site", f"{g.name} has no size-hint multi-kernel: {g.no_site_reason}", "info", graph=g.name)
        for g in session.graphs if g.no_site_reason
    ]


def derive_findings(session: Session) -> list[Finding]:
    out: list[Finding] = []
    for site in session.sites:
        out += identical_variants(site)
        out += emitted_not_winner(site)
        out += structure_mismatches(session, site)
        out += key_value_mismatches(site)
    out += mispredictions(session)
    out += no_site_graphs(session)
    return out
