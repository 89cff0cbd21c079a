"""The Map tab (8): the site's decision map along the swept size, and `kinspect compare`'s
whole-model figures under it; ←/→ move along the measured sizes and the shape follows.
Where nothing is measured (a trace), which variant runs along each size, from the code."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult

from kinspect.core.dispatch.shapes import SymbolShape, sizes_text
from kinspect.tui.panes.base import InspectorPane, PaneContext
from kinspect.tui.panes.requests import ShapeRequested
from kinspect.core.inspector.state import View
from kinspect.tui.widgets.decision_map_view import DecisionMapView, pick_maps_view


class MapPane(InspectorPane):
    FOCUS = "#map-view"
    KEYED = (("map", DecisionMapView),)

    def __init__(self, title: str, ctx: PaneContext, *, id: str) -> None:
        super().__init__(title, ctx, id=id)
        self._drawn: tuple[object, ...] = ()

    def content(self) -> ComposeResult:
        yield DecisionMapView(id="map-view")

    def draw(self, view: View) -> None:
        """The map of the site, its cursor at the typed shape; built when first shown."""
        site, data = view.site, view.data
        sizes = view.state.shape.values if isinstance(view.state.shape, SymbolShape) else None
        old = self._drawn
        if old and old[0] is data and old[1] is site and old[2] == sizes:
            return
        self._drawn = (data, site, sizes)
        map_view = self.query_one(DecisionMapView)
        map_view.show_comparison(data.comparison)
        if site is None:
            map_view.show(None, "no site")
            return
        dmap = data.decision_map(site)
        map_view.show(dmap, "" if dmap is not None else pick_maps_view(site, data.pick_maps(site, sizes or {}),
                                                                       sizes or {}), sizes)

    @on(DecisionMapView.SizesChosen)
    def _moved(self, event: DecisionMapView.SizesChosen) -> None:
        event.stop()
        sizes = dict(event.sizes)
        self.post_message(ShapeRequested(SymbolShape(sizes), sizes_text(sizes)))
