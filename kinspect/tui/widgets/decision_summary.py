"""Under the table: why the chosen variant, what it costs, what other rules would pick."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

from kinspect.core.dispatch.decision import Decision
from kinspect.core.dispatch.shapes import format_key
from kinspect.core.quality.estimate import basis_text, nearest_text
from kinspect.core.quality.explain import SiteExplanation
from kinspect.core.quality.variance import CompileTimes, regrets_at
from kinspect.core.session.runtime import Baseline
from kinspect.core.session.model import CallSite, Site
from kinspect.core.session.timings import method_title
from kinspect.core.inspector.observed import Observed
from kinspect.tui.text import literal
from kinspect.tui.widgets.variants_table import CHOSEN, ESTIMATE, MISMATCH
from kinspect.core import numbers


class DecisionSummary(Static):
    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self._height = -1
        self._width = -1
        self._for: object = None

    def show(self, text: Text, keep: object = None) -> None:
        """Show new text, as tall as the tallest shown for the same `keep` (the site).

        A relayout costs more than the rest of a keystroke put together, and typing a
        shape flips the summary between a measured shape's lines and an unmeasured one's
        at every key: kept at its tallest, the summary lays the screen out only when it
        grows, and the table above and the space below stay put while one types.
        """
        width = self.content_size.width
        lines = len(text.wrap(self.app.console, width)) if width else -1
        same = keep is not None and keep == self._for and width == self._width
        height = max(lines, self._height) if same else lines
        if 0 < lines < height:
            text = text.copy()
            text.append("\n" * (height - lines))
        self.update(text, layout=height != self._height)
        self._height, self._width, self._for = height, width, keep


def decision_summary(
    expl: SiteExplanation, observed: Observed | None, can_measure: bool, baselines: Sequence[Baseline] = (),
    decided_by: CallSite | None = None, call_site: CallSite | None = None, measured_keys: int = 0,
    compiles: Sequence[CompileTimes] = (), inductor_names: bool = False,
) -> Text:
    """Why the chosen variant, what it costs, what other rules would do, what was seen
    (and, for a multi-kernel shared by several call sites, which one's cache miss decided
    for all), and what the whole model costs at these sizes compiled other ways."""
    d = expl.decision
    assert d is not None and expl.runtime_key is not None
    site = expl.site
    labels = [literal(x) for x in site.labels()]
    out = Text()
    out.append(f"{CHOSEN} ", style="bold")
    out.append(d.reason(labels), style="bold")
    out.append("\n")
    _measured_line(out, expl, labels, can_measure, measured_keys, regrets_at(compiles, site, d.chosen, expl.runtime_key),
                   inductor_names)
    _what_if_line(out, expl, d, labels)
    for s in d.scores:
        if s.mismatch:
            out.append(f"{MISMATCH} key mismatch, {labels[s.index]}: ", style="yellow")
            out.append(s.mismatch + "\n")
    if observed is not None:
        _observed_line(out, observed, labels)
    if len(site.call_sites) > 1:
        _shared_line(out, site, decided_by)
    if call_site is not None:
        out.append("call site: ", style="bold")
        out.append_text(call_site_text(call_site))
        out.append("\n")
    if baselines:
        _baselines_line(out, baselines)
    out.append(f"runtime key {format_key(expl.runtime_key)}", style="dim")
    return out


def _baselines_line(out: Text, baselines: Sequence[Baseline]) -> None:
    """GPU time per call of the whole model; the hinted compile's slowdown against the best."""
    out.append("whole model, GPU µs per call: ", style="bold")
    times = [b.gpu_us for b in baselines if b.gpu_us]
    best = min(times) if times else None
    for i, b in enumerate(baselines):
        if i:
            out.append(" · ")
        out.append(f"{literal(b.label).replace('_', ' ')} ")
        if b.gpu_us is None:
            out.append(f"failed ({literal(b.error or 'no time')})", style="red")
            continue
        out.append(numbers.us(b.gpu_us), style="green" if b.gpu_us == best else "")
        if b.kind == "hinted" and best is not None and b.gpu_us > best * 1.05:
            out.append(f" ({numbers.ratio(b.gpu_us / best)} the best)", style="red")
    out.append("\n")


def _measured_line(out: Text, expl: SiteExplanation, labels: list[str], can_measure: bool,
                   measured_keys: int, spread: list[float], inductor_names: bool) -> None:
    """The fastest and what the pick costs: one compile's figure, with its range over the
    compiles `kinspect compare --compiles` timed here, when there are several."""
    fastest = expl.fastest
    if fastest is None:
        tails = ["press m to measure"] if can_measure else []
        if measured_keys:
            tails.append(f"l lists the {measured_keys} measured key{'s' if measured_keys != 1 else ''}")
        out.append("no measurement at this key" + (": " + ", ".join(tails) if tails else "") + "\n", style="dim")
        if expl.estimate is not None:
            _estimate_lines(out, expl, inductor_names)
        return
    d = expl.decision
    assert d is not None and expl.measured is not None
    best = expl.measured[fastest]
    out.append(f"fastest: {labels[fastest]} at {numbers.us_text(best.median_us)}")
    regret = expl.regret
    if expl.timings is not None and expl.timings.is_fastest(d.chosen):
        out.append(" — the chosen variant", style="green")
    elif expl.slower:
        out.append(f" — the chosen variant takes {numbers.ratio(regret)} as long", style="red")
    elif regret is not None:
        out.append(f" — the chosen variant is within noise of it ({numbers.ratio(regret)})", style="yellow")
    if spread:
        out.append(f" ({numbers.ratio_range(min(spread), max(spread))} over {len(spread)} compiles)")
    assert expl.timings is not None
    out.append(f" · timed by {method_title(expl.timings.method)}", style="dim")
    out.append("\n")


def _estimate_lines(out: Text, expl: SiteExplanation, inductor_names: bool) -> None:
    """At an unmeasured key: what the estimated figures are, what they say of the pick, and
    the nearest measured keys with what was measured there."""
    est, d, site = expl.estimate, expl.decision, expl.site
    assert est is not None and d is not None
    out.append(literal(basis_text(est, site, inductor_names)) + "\n", style="cyan")
    regret, fastest = est.regret(d.chosen), est.fastest
    if regret is not None and fastest is not None:
        if site.kernels[fastest] == site.kernels[d.chosen]:
            out.append(f"estimated: the chosen v{d.chosen} is the fastest\n", style="cyan")
        else:
            out.append(f"estimated: the chosen v{d.chosen} takes {ESTIMATE}{numbers.ratio(regret)} as long as "
                       f"v{fastest}\n", style="cyan")
    out.append("nearest measured: ", style="bold")
    out.append(literal("; ".join(nearest_text(est, site, inductor_names))) + "\n")


def _what_if_line(out: Text, expl: SiteExplanation, d: Decision, labels: list[str]) -> None:
    out.append(f"heuristic {d.heuristic}", style="bold")
    if d.heuristic != "inductor":
        out.append(" (what-if: Inductor decides by inductor)", style="yellow")
    if expl.alternatives:
        out.append(" · others pick: ")
        for i, (name, chosen) in enumerate(expl.alternatives.items()):
            if i:
                out.append(", ")
            out.append(f"{name} v{chosen}", style="" if chosen == d.chosen else "cyan")
    out.append("\n")


def _observed_line(out: Text, observed: Observed, labels: list[str]) -> None:
    picks = ", ".join(f"v{v} " + ("once" if n == 1 else f"{n} times") for v, n in sorted(observed.picked.items()))
    out.append(f"recorded calls at this key: {observed.calls} (Inductor ran {picks})")
    if observed.mispredicted:
        out.append(f"; {observed.mispredicted} differ from kinspect's prediction", style="red")
    out.append("\n")


def _shared_line(out: Text, site: Site, decided_by: CallSite | None) -> None:
    n = len(site.call_sites)
    out.append(f"shared by {n} call sites: ", style="bold")
    if decided_by is None:
        out.append(f"the first call at a new shape decides the variant for all {n}\n")
        return
    every, others = ("both", "the other") if n == 2 else (f"all {n}", f"the other {n - 1}")
    out.append(f"{literal(decided_by.label)} met this shape first (a cache miss) and decided for {every}; "
               f"{others} hit the shared cache\n")


def call_site_text(call: CallSite) -> Text:
    """Where a call site is in the user's code and in the wrapper, for the summary."""
    out = Text()
    out.append(literal(call.label), style="bold")
    if call.module_class:
        out.append(f" ({literal(call.module_class)})")
    if call.where:
        out.append(f" · {literal(call.where)}")
    if call.code:
        out.append(f"  {literal(call.code)}", style="dim")
    if call.line is not None:
        out.append(f" · wrapper line {call.line}", style="dim")
    return out
