"""The Variants tab (1): the site's variants at the shape (distances, choice, latency),
why Inductor chooses what it does, and from 120 columns the chosen variant's source."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import DataTable

from kinspect.core.dispatch.shapes import SymbolShape
from kinspect.tui.panes.base import InspectorPane, PaneContext
from kinspect.tui.panes.requests import TabRequested, VariantRequested
from kinspect.core.inspector.state import View
from kinspect.tui.text import literal
from kinspect.tui.widgets.decision_summary import DecisionSummary, decision_summary
from kinspect.tui.widgets.source_view import SourceView
from kinspect.tui.widgets.variants_table import VariantsTable


class VariantsPane(InspectorPane):
    FOCUS = "#variants-table"
    KEYED = (("variants", VariantsTable),)

    def __init__(self, title: str, ctx: PaneContext, *, id: str) -> None:
        super().__init__(title, ctx, id=id)
        self._drawn: tuple[object, ...] = ()

    def content(self) -> ComposeResult:
        with VerticalScroll(id="decision"):
            yield VariantsTable(id="variants-table")
            yield DecisionSummary(id="summary")
        yield SourceView(id="preview")

    def draw(self, view: View) -> None:
        """The table and summary when the decision or how it reads changed (moving the
        variant cursor changes neither); the preview whenever the selection moves."""
        self.query_one("#decision").set_class(view.state.stale, "-stale")
        site, expl, s = view.site, view.explanation, view.state
        summary = self.query_one(DecisionSummary)
        if site is None:
            self._drawn = ()
            summary.show(_no_sites(view))
            return
        if expl is None:
            return
        drawn = (s.show_terms, s.inductor_names, s.call_site, view.can_measure)
        old = self._drawn
        if not old or old[0] is not expl or old[1] is not view.data or old[2:] != drawn:
            self._drawn = (expl, view.data, *drawn)
            self.query_one(VariantsTable).show(expl, view.data.peak_at(expl.site), s.show_terms, s.inductor_names)
            summary.show(_summary(view), keep=site.name)
        self.query_one("#preview", SourceView).show(site, view.selected)  # shown from 120 columns

    @on(VariantsTable.VariantHighlighted, "#variants-table")
    def _variant_highlighted(self, event: VariantsTable.VariantHighlighted) -> None:
        view = self.view
        if view is not None and view.site is not None and 0 <= event.index < len(view.site.variants):
            self.post_message(VariantRequested(event.index))

    @on(DataTable.RowSelected, "#variants-table")
    def _variant_opened(self) -> None:
        self.post_message(TabRequested("source"))


def _summary(view: View) -> Text:
    site, expl, data = view.site, view.explanation, view.data
    assert site is not None and expl is not None
    if expl.decision is None or expl.runtime_key is None:
        return Text(f"{literal(site.name)} cannot be decided for this shape: {literal(str(expl.error))}",
                    style="yellow")
    shape = view.state.shape
    observed = data.events.at(site.name, expl.runtime_key)
    baselines = data.session.baselines_at(shape.values) if isinstance(shape, SymbolShape) else []
    decider = site.call_site(data.events.decided_by(site.name, expl.runtime_key))
    return decision_summary(expl, observed, view.can_measure, baselines, decider, site.call_site(view.state.call_site),
                            data.measured_count[site.name], data.compiles, view.state.inductor_names)


def _no_sites(view: View) -> Text:
    """Where the decision would be: why there is none (yet)."""
    if view.failure is not None:
        return Text(literal(view.failure), style="bold red")
    if view.preparing:
        return Text("compiling… the sites appear when the model has compiled and run", style="dim")
    session = view.data.session
    reasons = [f"{literal(g.name)}: {literal(g.no_site_reason)}" for g in session.graphs if g.no_site_reason]
    text = "This session has no size-hint multi-kernel sites."
    if reasons:
        text += "\n" + "\n".join(reasons)
    return Text(text)
