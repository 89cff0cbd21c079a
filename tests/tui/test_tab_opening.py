"""Only the first tab's widgets come with the first screen; another tab's are made when it
is first shown, by its key or a click on its label, and that tab shows what it would have."""

from __future__ import annotations

from tui_helpers import screen_text, wait_until

from kinspect.tui.app import InspectorApp
from kinspect.tui.panes.base import InspectorPane


async def test_a_hidden_tab_is_made_when_its_key_first_shows_it(recorded_app: InspectorApp):
    app = recorded_app
    async with app.run_test(size=(110, 40)) as pilot:  # below 120 columns: no source preview beside the table
        await pilot.pause()
        made = {p.id for p in app.query(InspectorPane) if p.children}
        assert made == {"variants"}
        sha = f"sha {app.site.variants[app.view.selected].source_hash}"  # the Source tab's first line
        assert sha not in screen_text(app)

        await pilot.press("2")
        assert app.query("#source-view")
        assert sha in screen_text(app)
        assert app.focused is app.query_one("#source-view")


async def test_a_hidden_tab_is_made_when_its_label_is_clicked(recorded_app: InspectorApp):
    app = recorded_app
    async with app.run_test(size=(110, 40)) as pilot:
        await pilot.pause()
        assert not app.query("#symbolic-table")

        await pilot.click("#tabs Tab#--content-tab-symbolic")
        await wait_until(pilot, lambda: "runtime is the size at the typed shape" in screen_text(app))
        assert app.site.name in screen_text(app)


async def test_a_tab_made_later_shows_the_state_it_missed(recorded_app: InspectorApp):
    """Another variant was selected before the Source tab was ever shown: it opens on that one."""
    app = recorded_app
    async with app.run_test(size=(110, 40)) as pilot:
        await pilot.press("up")
        site, selected = app.site, app.view.selected
        assert selected != app.view.chosen
        await pilot.press("2")
        text = screen_text(app)
        assert f"sha {site.variants[selected].source_hash}" in text
        assert f"sha {site.variants[app.view.chosen].source_hash}" not in text
