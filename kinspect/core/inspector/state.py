"""The inspector's one state, and the view of it every tab draws from.

The app keeps one `InspectorState`: the site, the shape, the heuristic, whose names,
the distance terms, and which variant the source tabs show. On each change it decides
the site once (`Decider`) and hands every pane a `View`: the state, the session with
what is derived from it (`Inspection`) and the explanation. Panes draw from the view
and ask for changes by message; none decides a site itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from kinspect.core.dispatch.shapes import FullKey, ParsedShape, format_key, sizes_text
from kinspect.core.errors import ShapeError
from kinspect.core.quality.comparison import Comparison, comparison
from kinspect.core.quality.decision_map import DecisionMap, Heatmap, decision_map
from kinspect.core.quality.explain import SiteExplanation, explain_site
from kinspect.core.quality.overview import worst_regrets
from kinspect.core.quality.pick_map import SizeMaps, site_maps
from kinspect.core.quality.variance import compiles
from kinspect.core.session.model import Site, Session
from kinspect.core.inspector.observed import EventIndex


@dataclass(frozen=True)
class InspectorState:
    site: str | None = None
    shape: ParsedShape | None = None
    """The last shape typed that parses (while the text does not, `stale` says so)."""
    heuristic: str = "inductor"
    inductor_names: bool = False
    """Sizes and tensors by Inductor's names (`s33`, `arg3_1`) instead of the user's."""
    show_terms: bool = False
    call_site: int | None = None
    """The call site highlighted under the site, if one is."""
    variant: int | None = None
    """The variant the source tabs show; None for the chosen one."""
    stale: bool = False
    """The text in the shape entry is not a shape: every tab still shows `shape`."""


class Inspection:
    """A session with what the tabs read from it, derived once per change of the session
    or its measurements: events indexed, measurements read by the one timing rule, each
    site's worst regret, and decision maps built when first shown."""

    def __init__(self, session: Session, events: EventIndex | None = None) -> None:
        self.session = session
        self.events = events if events is not None else EventIndex(session.events)
        self.timings = session.timings()
        self.measured_count = Counter(name for name, _ in self.timings)
        """How many keys each site was measured at, for the decision summary."""
        self.worst = worst_regrets(session, self.timings)
        """Each measured site's worst regret beyond noise, for the site list."""
        self.compiles = compiles(session) if session.recompiles else []
        self.findings = Counter(f.site for f in session.findings if f.site)
        """Findings per site, for the site list's marks."""
        self._maps: dict[str, DecisionMap | Heatmap | None] = {}
        self._pick_maps: dict[tuple[str, tuple[tuple[str, int], ...]], list[SizeMaps]] = {}

    def remeasured(self) -> Inspection:
        """The same session after a measurement: its events are indexed already."""
        return Inspection(self.session, self.events)

    @property
    def peak_tflops(self) -> float | None:
        return self.session.environment.peaks.get("tflops_bf16")

    @cached_property
    def rated_sites(self) -> frozenset[str]:
        """The sites with a measurement that has its TFLOP/s (a GEMM whose work its key tells)."""
        return frozenset(m.site for m in self.session.measurements if m.tflops is not None)

    def peak_at(self, site: Site) -> float | None:
        """The GPU's peak where `site` can be given a share of it: a column of nothing but
        blanks says nothing."""
        return self.peak_tflops if site.name in self.rated_sites else None

    @cached_property
    def comparison(self) -> Comparison | None:
        return comparison(self.session)

    def decision_map(self, site: Site) -> DecisionMap | Heatmap | None:
        if site.name not in self._maps:
            self._maps[site.name] = decision_map(self.session, site, self.timings)
        return self._maps[site.name]

    def pick_maps(self, site: Site, sizes: Mapping[str, int]) -> list[SizeMaps]:
        """Which variant runs along each of the site's sizes, from the compiled code (the
        Map tab's answer where nothing is measured)."""
        at = (site.name, tuple(sorted(sizes.items())))
        if at not in self._pick_maps:
            self._pick_maps[at] = site_maps(self.session, site, sizes)
        return self._pick_maps[at]


@dataclass(frozen=True, eq=False)
class View:
    """What the panes draw; a new one after every change, so identity says it changed."""

    data: Inspection
    state: InspectorState
    site: Site | None
    env: dict[str, int] | None
    """The shape's sizes by Inductor's names; None for a whole key or a shape the
    session cannot read."""
    explanation: SiteExplanation | None
    preparing: bool = False
    measuring: bool = False
    can_measure: bool = False
    failure: str | None = None
    """Why the live model did not compile, shown where the sites would be."""

    @property
    def chosen(self) -> int | None:
        d = self.explanation.decision if self.explanation is not None else None
        return d.chosen if d is not None else None

    @property
    def selected(self) -> int:
        """The variant the source tabs show: the user's, else the chosen one."""
        if self.state.variant is not None:
            return self.state.variant
        return self.chosen or 0


class Decider:
    """Resolves a shape once per shape and decides a site once per change that can
    change the decision: moving the variant cursor or dimming a stale shape re-uses
    the last explanation."""

    def __init__(self) -> None:
        self._resolved: tuple[object, object, dict[str, int] | None, str | None] = (None, None, None, None)
        self._decided: tuple[object, object, object, str, SiteExplanation | None, str | None] = (
            None, None, None, "", None, None)
        self._fitted: dict[str, ParsedShape] = {}
        """Per site, the last shape it could take: a whole key typed for one site leaves
        the others there."""

    def resolve(self, data: Inspection, shape: ParsedShape | None) -> tuple[dict[str, int] | None, str | None]:
        """The shape's sizes by Inductor's names, or why the session cannot read them."""
        if self._resolved[0] is data and self._resolved[1] == shape:
            return self._resolved[2], self._resolved[3]
        env, error = None, None
        if shape is not None and not isinstance(shape, FullKey):
            try:
                env = data.session.resolve(shape.values)
            except ShapeError as e:
                error = str(e)
        self._resolved = (data, shape, env, error)
        return env, error

    def explain(self, data: Inspection, site: Site | None, state: InspectorState
                ) -> tuple[SiteExplanation | None, str | None]:
        """The site decided at the state's shape, and what the shape entry says about it:
        a whole key that does not fit this site leaves it on the last shape it took."""
        shape = state.shape
        if site is None or shape is None:
            return None, None
        last = self._decided
        if last[0] is data and last[1] is site and last[2] == shape and last[3] == state.heuristic:
            return last[4], last[5]
        expl = self._explain(data, site, shape, state.heuristic)
        error = expl.error
        kept = self._fitted.get(site.name)
        if error is None:
            self._fitted[site.name] = shape
        elif isinstance(shape, FullKey) and kept is not None:
            expl = self._explain(data, site, kept, state.heuristic)
            error = f"{site.name} still shows {shape_text(kept)}: {error}"
        self._decided = (data, site, shape, state.heuristic, expl, error)
        return expl, error

    def _explain(self, data: Inspection, site: Site, shape: ParsedShape, heuristic: str) -> SiteExplanation:
        env, error = self.resolve(data, shape)
        if isinstance(shape, FullKey):
            return explain_site(data.session, site, shape, heuristic)
        if error is not None:
            return SiteExplanation(site, None, None, error=error)
        assert env is not None
        try:
            key = data.session.site_key(site, env)
        except ShapeError as e:
            return SiteExplanation(site, None, None, error=str(e))
        return explain_site(data.session, site, FullKey(key), heuristic)


def shape_text(shape: ParsedShape) -> str:
    """A shape as the user would type it: a whole key, or sizes by name."""
    if isinstance(shape, FullKey):
        return format_key(shape.key)
    return sizes_text(shape.values)
