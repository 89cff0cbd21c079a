"""Two recordings of one program side by side (stock Inductor against `--one-size-per-symbol`,
one torch against another): per site and for the whole model, how close each compile's picks
come to its fastest variant over the keys it ran.

Two compiles number their multi-kernels apart, so sites are matched by what the user calls
them: the graph, op and module path of their call sites (`graph_0 (inference)` · `addmm` ·
`h.0.attn.c_attn +1`), else their name.
"""

from __future__ import annotations

from dataclasses import dataclass

from kinspect.core.quality.overview import ModelQuality, SiteQuality, model_quality
from kinspect.core.session.model import Session, Site


@dataclass(frozen=True)
class Side:
    """One compile's figures at one site (or the whole model): None where it has no such site
    or measured none of its keys."""

    shapes: int = 0
    geomean: float | None = None
    worst: float | None = None
    lost: float | None = None
    """GPU time lost over the workload's calls, as a share of the fastest possible."""


@dataclass(frozen=True)
class Row:
    label: str
    sides: tuple[Side, Side]


def _label(site: Site) -> str:
    return f"{site.graph} · {site.op} · {site.title}"


def _side(q: SiteQuality | None) -> Side:
    if q is None or not q.shapes:
        return Side()
    worst = q.worst
    return Side(q.shapes, q.geomean_regret, worst.regret if worst else None, q.workload_lost)


def side_by_side(a: Session, b: Session) -> tuple[list[Row], Row]:
    """A row per site of either recording (matched by label), and the whole model's row."""
    quality = [model_quality(s) for s in (a, b)]
    by_label: list[dict[str, Side]] = []
    for s, q in zip((a, b), quality):
        sites = {site.name: site for site in s.sites}
        by_label.append({_label(sites[sq.site]): _side(sq) for sq in q.sites if sq.site in sites})
    labels = list(dict.fromkeys([*by_label[0], *by_label[1]]))
    rows = [Row(label, (by_label[0].get(label, Side()), by_label[1].get(label, Side()))) for label in labels]
    return rows, Row("whole model", (_whole(quality[0]), _whole(quality[1])))


def _whole(q: ModelQuality) -> Side:
    worst = q.worst
    return Side(q.shapes, q.geomean_regret, worst[1].regret if worst else None, q.workload_lost)


def gaps(s: Session) -> list[str]:
    """What a recording's columns leave out, in lines to print under the table: no site at
    all, sites with no timing (the columns then read `-` all down), and each graph whose
    compile died, with kinspect's reason (a stock compile that faulted at a hint)."""
    out = []
    if not s.sites:
        out.append("no size-hint multi-kernel was recorded")
    elif not s.measurements:
        out.append(f"{len(s.sites)} site{'s' if len(s.sites) != 1 else ''} recorded, none timed (recorded without "
                   "--measure, or a CUDA fault in the program had left nothing to time with)")
    out += [f"{g.name}: {g.no_site_reason}" for g in s.graphs if g.died]
    return out
