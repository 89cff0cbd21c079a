"""The registry of tabs: each tab's key and id are its own, and the app's keys follow it."""

from __future__ import annotations

import pytest

from kinspect.tui.app import InspectorApp
from kinspect.tui.panes.registry import Tab, Tabs
from kinspect.tui.panes.tabs import TABS
from kinspect.tui.panes.variants import VariantsPane


def test_a_tenth_tab_cannot_take_the_key_of_another():
    with pytest.raises(ValueError, match="tabs 'ranks' and 'tenth' both want key '9'"):
        Tabs([*TABS, Tab("tenth", "Tenth", "9", VariantsPane)])


def test_a_tab_cannot_take_the_id_of_another():
    with pytest.raises(ValueError, match="two tabs have the id 'map'"):
        Tabs([*TABS, Tab("map", "Another map", "0", VariantsPane)])


def test_each_tab_has_its_number_key_in_the_app():
    keys = {b.key: b.action for b in InspectorApp.BINDINGS if b.id.startswith("kinspect.tab.")}
    assert keys == {str(i): f"show_tab('{t.id}')" for i, t in enumerate(TABS, 1)}
