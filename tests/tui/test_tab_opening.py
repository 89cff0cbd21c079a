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


async def test_a_number_key_typed_before_the_tab_bar_has_its_label_shows_its_tab_once_it_has(recorded_app):
    """The tabs' panes and the tab bar's labels are mounted by two widgets of their own, so
    a number key typed as the inspector starts can come between the two (a busy machine
    showed it): the tab is shown once its label is there, and the inspector does not crash
    (Textual refuses to make a tab active that its bar has no label for)."""
    from textual.widgets._tabbed_content import ContentTab, ContentTabs

    app = recorded_app
    async with app.run_test(size=(160, 48)) as pilot:
        bar = app.query_one(ContentTabs)
        label = app.query_one("#--content-tab-debugger", ContentTab)
        await bar.remove_tab(label.id)  # the Debugger pane is there, its label not yet
        assert app.query("#debugger") and not bar.query("#--content-tab-debugger")
        bar.set_timer(0.1, lambda: bar.add_tab(ContentTab(label.label, "debugger"), after="--content-tab-findings"))
        await pilot.press("6")
        await wait_until(pilot, lambda: app.active_tab() == "debugger")
        assert "this session recorded no dispatches" in screen_text(app)
