"""Screenshots of the inspector at fixed sizes on a fixed synthetic session.

Regenerate after a deliberate UI change with `pytest tests/tui/test_snapshots.py
--snapshot-update` and review the SVGs in the diff.
"""

from __future__ import annotations

from tui_helpers import session_with_finding

from kinspect.core.source import RecordedSource
from kinspect.tui.app import InspectorApp


def app(events: int = 0) -> InspectorApp:
    return InspectorApp(RecordedSource(session_with_finding(events=events), "/recordings/model.session.json"))


def test_opening_at_80x24(snap_compare):
    assert snap_compare(app(), terminal_size=(80, 24))


def test_opening_at_160x48(snap_compare):
    assert snap_compare(app(), terminal_size=(160, 48))


def test_tie_with_distance_terms_at_80x24(snap_compare):
    keys = ["slash", "ctrl+u", *"B=128", "enter", "t"]
    assert snap_compare(app(), press=keys, terminal_size=(80, 24))


def test_symbolic_mismatch_at_80x24(snap_compare):
    assert snap_compare(app(), press=["right_square_bracket", "4"], terminal_size=(80, 24))


def test_debugger_stopped_at_a_site_breakpoint_at_80x24(snap_compare):
    keys = ["6", "right_square_bracket", "b", "w", *"B > 8000", "enter", "c"]
    assert snap_compare(app(events=60), press=keys, terminal_size=(80, 24))


def test_timeline_at_120x30(snap_compare):
    assert snap_compare(app(events=60), press=["6", "g", *"40", "enter", "7"], terminal_size=(120, 30))


def swept_app() -> InspectorApp:
    """The linear sample as recorded and swept on the H200 (B=2..16384), kept as a fixture so
    that the snapshot stays put when samples/ is re-recorded."""
    from pathlib import Path

    from kinspect.core.store import load

    path = Path(__file__).resolve().parents[1] / "fixtures" / "samples_h200_2026-11-30" / "linear.session.json"
    return InspectorApp(RecordedSource(load(path), "samples/linear.session.json"))


def test_decision_map_at_80x24(snap_compare):
    assert snap_compare(swept_app(), press=["8"], terminal_size=(80, 24))


def test_decision_map_moved_along_at_160x48(snap_compare):
    assert snap_compare(swept_app(), press=["8", "left", "left"], terminal_size=(160, 48))
