"""Keys, help, palette, NO_COLOR, and session text shown as the text it is."""

from __future__ import annotations

import hashlib
import io

import pytest
from rich.console import Console
from textual.command import CommandList
from textual.widgets import Static
from tui_helpers import palette_offers, screen_colours, screen_text, screenshot, session_with_finding, wait_until

from kinspect.core.session.model import Variant
from kinspect.core.source import RecordedSource
from kinspect.tui.app import InspectorApp


def all_bindings():
    return list(InspectorApp(RecordedSource(session_with_finding())).help_bindings())


@pytest.mark.parametrize("where,binding", all_bindings(), ids=lambda b: getattr(b, "id", None) or str(b))
def test_every_binding_has_an_id_a_description_and_a_tooltip(where, binding):
    assert binding.id and binding.id.startswith("kinspect.")
    assert binding.description and binding.tooltip


def _unwrapped(renderable) -> str:
    """A renderable's text with no wrapping: one table row per line."""
    console = Console(width=1000, file=io.StringIO(), record=True)
    console.print(renderable)
    return console.export_text()


async def test_help_lists_every_key(recorded_app):
    async with recorded_app.run_test(size=(160, 60)) as pilot:
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: "kinspect inspector — keys" in screen_text(recorded_app))
        table = recorded_app.screen.query(Static).last().content  # the rows, scrolled through
        text = _unwrapped(table)
        for _, b in recorded_app.help_bindings():
            assert f"{b.description}: {b.tooltip}" in text
        assert "n, f10" in text and "debugger, timeline" in text.split("Step:")[0].splitlines()[-1]
        await pilot.press("escape")
        assert "kinspect inspector — keys" not in screen_text(recorded_app)


async def test_every_action_is_in_the_palette_and_runs_from_it(recorded_app):
    async with recorded_app.run_test(size=(160, 40)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        listed = [_unwrapped(o.prompt).strip() for o in recorded_app.screen.query_one(CommandList).options]
        for b in recorded_app.palette_bindings():
            assert any(line.startswith(b.description) for line in listed), b.description
        assert "Measure" not in [b.description for b in recorded_app.palette_bindings()]  # a recording can't
        await pilot.press(*"terms")
        await palette_offers(pilot, "Terms")
        await pilot.press("enter")
        await pilot.pause()
        assert "terms (tensor[dim] distance)" in screen_text(recorded_app)


async def test_palette_offers_sites_and_heuristics(recorded_app):
    async with recorded_app.run_test(size=(160, 40)) as pilot:
        await pilot.press("ctrl+p", *"decide by l1")
        await palette_offers(pilot, "What-if heuristic: decide by l1")
        await pilot.press("enter")
        await pilot.pause()
        assert "heuristic l1 (what-if" in screen_text(recorded_app)
        await pilot.press("ctrl+p", *"Site: multi_kernel_2")
        await palette_offers(pilot, "Site: multi_kernel_2")
        await pilot.press("enter")
        await pilot.pause()
        assert recorded_app.site.name == "multi_kernel_2"


def _grey(colour: str) -> bool:
    return len({colour[1:3], colour[3:5], colour[5:7]}) == 1


async def test_no_color_renders_in_greys_only(monkeypatch):
    app = InspectorApp(RecordedSource(session_with_finding()))
    async with app.run_test(size=(120, 30)):
        assert not all(_grey(c) for c in screen_colours(app))  # colours by default

    monkeypatch.setenv("NO_COLOR", "1")
    app = InspectorApp(RecordedSource(session_with_finding()))
    async with app.run_test(size=(120, 30)):
        assert app.no_color
        assert all(_grey(c) for c in screen_colours(app))
        assert "▶" in screen_text(app)  # the choice is marked by a glyph, not by colour alone


def _hostile_session():
    session = session_with_finding()
    site = session.sites[0]
    src = "def k():\n    print('\x1b[31mred\x1b[0m [bold]loud[/bold]')\n"
    v0 = Variant(0, 64, site.variants[0].key, "[bold]x[/bold]", src, hashlib.sha256(src.encode()).hexdigest()[:16],
                 {"note": "[link=http://x]y[/link]"}, source_path="/tmp/[red]p[/red].py")
    session.sites[0] = type(site)(site.name, site.graph, "[i]addmm[/i]", site.tensors, (v0, *site.variants[1:]))
    return session


async def test_session_text_is_shown_literally_never_as_markup_or_escapes():
    app = InspectorApp(RecordedSource(_hostile_session(), "/tmp/[b]rec[/b].session.json"))
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("slash", "ctrl+u", *"B=64", "enter", "enter")  # v0 is chosen; open its source
        text = screen_text(app)
        assert "/tmp/[b]rec[/b].session.json" in text
        assert "[i]addmm[/i]" in text
        assert "v0 (hint 64)  [bold]x[/bold]" in text
        assert "note=[link=http://x]y[/link]" in text
        assert "/tmp/[red]p[/red].py" in text
        assert "print('\\x1b[31mred\\x1b[0m [bold]loud[/bold]')" in text
        assert "\x1b" not in screenshot(app)
        await pilot.press("1")
        v0_row = next(line for line in screen_text(app).splitlines() if "  v0  " in line)
        assert "[bold]x[/bold]" in v0_row  # the kernel column
