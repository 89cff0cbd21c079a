"""The debugger tab's current event, drawn by the app; the debugger's keys act while it has focus."""

from __future__ import annotations

from textual.widgets import Static


class EventPanel(Static, can_focus=True):
    """Where the debugger's keys go in this tab: it binds none of its own."""
