"""Explaining a runtime shape across a session's sites.

This is the one place that turns "the user typed B=1000" into per-site decisions; the
headless `explain` command, the inspector and the reports all call it, so they cannot
disagree about what Inductor would do.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Sequence
from typing import Any

from kinspect.core.dispatch.decision import Decision
from kinspect.core.errors import KinspectError, ShapeError
from kinspect.core.dispatch.heuristics import HEURISTICS
from kinspect.core.quality.estimate import Estimate, estimate
from kinspect.core.quality.overview import ModelQuality
from kinspect.core.session.runtime import Baseline, Measurement
from kinspect.core.session.model import Session, Site
from kinspect.core.session.format.compiled import call_site_to_json
from kinspect.core.session.format.results import baseline_to_json
from kinspect.core.dispatch.shapes import FullKey, Key, ParsedShape
from kinspect.core.session.timings import KeyTimings

from kinspect.core.quality.measured_shapes import shapes_json
from kinspect.core.quality.whatif import WhatIf, paste_line


@dataclass(frozen=True)
class SiteExplanation:
    site: Site
    runtime_key: Key | None
    decision: Decision | None
    error: str | None = None
    alternatives: dict[str, int] | None = None
    """What each other heuristic would pick, for what-if comparison."""
    timings: KeyTimings | None = None
    """The measurements at this key, read by the one rule for fastest and regret."""
    estimate: Estimate | None = None
    """Where this key was not measured: the nearest measured keys and each variant's
    estimated time here (`kinspect.core.quality.estimate`)."""

    @property
    def measured(self) -> dict[int, Measurement] | None:
        return dict(self.timings.measured) if self.timings is not None and self.timings.measured else None

    @property
    def fastest(self) -> int | None:
        return None if self.timings is None else self.timings.fastest

    @property
    def regret(self) -> float | None:
        """Chosen variant's latency over the fastest measured one (1.0 = optimal)."""
        if self.timings is None or self.decision is None:
            return None
        return self.timings.regret(self.decision.chosen)

    @property
    def slower(self) -> bool:
        """The chosen variant is slower than the fastest beyond noise."""
        return self.timings is not None and self.decision is not None and self.timings.slower(self.decision.chosen)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.site.name, "graph": self.site.graph, "op": self.site.op}
        if self.error is not None or self.decision is None:
            out["error"] = self.error
            return out
        d = self.decision
        out["runtime_key"] = [list(t) for t in self.runtime_key or ()]
        out["heuristic"] = d.heuristic
        variants = []
        for v, s in zip(self.site.variants, d.scores):
            row: dict[str, Any] = {
                "index": v.index,
                "hint": v.hint,
                "key": None if v.key is None else [list(t) for t in v.key],
                "kernel_name": v.kernel_name,
                "distance": s.distance,
                "terms": [list(t) for t in s.terms],
            }
            if s.mismatch:
                row["mismatch"] = s.mismatch
            m = (self.measured or {}).get(v.index)
            if m is not None:
                row["median_us"] = m.median_us
                row["p20_us"] = m.p20_us
                row["p80_us"] = m.p80_us
            variants.append(row)
        out["variants"] = variants
        out["chosen"] = d.chosen
        out["tied"] = list(d.tied)
        out["reason"] = d.reason(self.site.labels())
        if self.alternatives is not None:
            out["alternatives"] = self.alternatives
        if self.measured:
            assert self.timings is not None
            out["method"] = self.timings.method
            out["fastest"] = self.fastest
            out["regret"] = self.regret
            out["slower"] = self.slower
        elif self.estimate is not None:
            out["estimate"] = self.estimate.to_json()
            out["estimate"]["regret"] = self.estimate.regret(d.chosen)
        return out


@dataclass(frozen=True)
class ShapeCost:
    """The model's size-hint GEMMs at one shape: the picks' time against the fastest
    variants', per model call (each site once per call site), measured where the shape
    was measured and estimated elsewhere."""

    picked_us: float
    fastest_us: float
    measured: int
    """Sites whose figures are measurements at this shape."""
    estimated: int
    """Sites whose figures are estimates (`kinspect.core.quality.estimate`)."""
    missing: tuple[str, ...]
    """Sites with neither, left out of the sums."""

    @property
    def ratio(self) -> float | None:
        return self.picked_us / self.fastest_us if self.fastest_us > 0 else None

    def to_json(self) -> dict[str, Any]:
        return {"picked_us": round(self.picked_us, 3), "fastest_us": round(self.fastest_us, 3),
                "ratio": None if self.ratio is None else round(self.ratio, 4), "measured_sites": self.measured,
                "estimated_sites": self.estimated, "left_out": list(self.missing)}


def shape_cost(results: Sequence[SiteExplanation]) -> ShapeCost | None:
    """`ShapeCost` over the explained sites; None where no site has a figure."""
    picked = fastest = 0.0
    measured = estimated = 0
    missing = []
    for r in results:
        d, t, e = r.decision, r.timings, r.estimate
        mine = best = None
        if d is not None and t is not None and t.fastest is not None:
            mine, best = t.median(d.chosen), t.median(t.fastest)
        elif d is not None and e is not None and e.fastest is not None:
            mine, best = e.median(d.chosen), e.median(e.fastest)
        if mine is None or best is None:
            missing.append(r.site.name)
            continue
        calls = max(1, len(r.site.call_sites))
        picked += calls * mine
        fastest += calls * best
        if t is not None and t.fastest is not None:
            measured += 1
        else:
            estimated += 1
    if not measured and not estimated:
        return None
    return ShapeCost(picked, fastest, measured, estimated, tuple(missing))


def explain_site(
    session: Session, site: Site, shape: ParsedShape, heuristic: str = "inductor"
) -> SiteExplanation:
    """Decide one site; a shape that does not apply to it becomes an error entry."""
    try:
        key = session.runtime_key(site, shape)
    except ShapeError as e:
        return SiteExplanation(site, None, None, error=str(e))
    decision = site.decide(key, heuristic)
    alternatives = {name: site.decide(key, name).chosen for name in HEURISTICS if name != heuristic}
    timings = session.timings_at(site.name, key)
    if timings.fastest is not None:
        return SiteExplanation(site, key, decision, alternatives=alternatives, timings=timings)
    return SiteExplanation(site, key, decision, alternatives=alternatives,
                           timings=timings if timings.measured else None, estimate=estimate(session, site, key))


def explain(
    session: Session, shape: ParsedShape, site: str | None = None, heuristic: str = "inductor"
) -> list[SiteExplanation]:
    """Explain a shape at every site (or one); fails only if it applies to none. A whole
    key is decided only where it can reach (`kinspect.core.dispatch.reach`); elsewhere it is an
    error entry."""
    if heuristic not in HEURISTICS:
        raise KinspectError(f"unknown heuristic {heuristic!r}; known: {', '.join(HEURISTICS)}")
    if site is not None:
        sites = [session.site(site)]
    else:
        sites = list(session.sites)
    if not sites:
        raise KinspectError("this session has no size-hint sites")
    if not isinstance(shape, FullKey):
        session.resolve(shape.values)  # unknown names fail the whole command
    out = [explain_site(session, s, shape, heuristic) for s in sites]
    if all(e.error for e in out):
        raise ShapeError(out[0].error or "shape applies to no site")
    return out


# ---------------------------------------------------------------- the JSON documents


def shape_json(shape: str, quality: ModelQuality, results: list[SiteExplanation],
               baselines: Sequence[Baseline] = ()) -> dict[str, Any]:
    """`kinspect explain S --shape ... --json`: the quality list, each site's decision,
    and the whole-model baselines at these sizes."""
    doc: dict[str, Any] = {"shape": shape, "quality": [q.to_json() for q in quality.sites if q.shapes],
                           "sites": [r.to_json() for r in results]}
    cost = shape_cost(results)
    if cost is not None:
        doc["model"] = cost.to_json()
    if baselines:
        doc["baselines"] = [baseline_to_json(b) for b in baselines]
    return doc


def overview_json(session: Session, quality: ModelQuality, what_if: Sequence[WhatIf],
                  site: str | None = None) -> dict[str, Any]:
    """`kinspect explain S --json`: quality, what-if, environment, symbols, sites (with their
    call sites and findings; `site`: that one alone)."""
    return {
        "quality": [q.to_json() for q in quality.sites if q.shapes],
        "what_if": [w.to_json() for w in what_if[:10]],
        "paste": paste_line(what_if),
        "measured_shapes": shapes_json(session),
        "environment": {"gpu": session.environment.gpu, "torch": session.environment.torch,
                        "created": session.environment.created},
        "truncated": session.truncated,
        "symbols": [
            {"name": s.name, "alias": s.alias, "input": s.input, "dim": s.dim, "example": s.example}
            for s in session.symbols
        ],
        "sites": [
            {
                "name": s.name, "graph": s.graph, "op": s.op,
                "tensors": [t.text() for t in s.tensors],
                "variants": [
                    {"index": v.index, "hint": v.hint,
                     "key": None if v.key is None else [list(t) for t in v.key],
                     "kernel_name": v.kernel_name}
                    for v in s.variants
                ],
                "call_sites": [call_site_to_json(c) for c in s.call_sites],
                "findings": [f.message for f in session.findings if f.site == s.name],
            }
            for s in session.sites if site is None or s.name == site
        ],
    }
