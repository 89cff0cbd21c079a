"""The inspector's tabs, in the order of their number keys."""

from __future__ import annotations

from kinspect.tui.panes.debugger import DebuggerPane
from kinspect.tui.panes.diff import DiffPane
from kinspect.tui.panes.findings import FindingsPane
from kinspect.tui.panes.map import MapPane
from kinspect.tui.panes.ranks import RanksPane
from kinspect.tui.panes.registry import Tab, Tabs
from kinspect.tui.panes.source import SourcePane
from kinspect.tui.panes.symbolic import SymbolicPane
from kinspect.tui.panes.timeline import TimelinePane
from kinspect.tui.panes.variants import VariantsPane

TABS = Tabs([
    Tab("variants", "Variants", "1", VariantsPane),
    Tab("source", "Source", "2", SourcePane),
    Tab("diff", "Diff", "3", DiffPane),
    Tab("symbolic", "Symbolic", "4", SymbolicPane),
    Tab("findings", "Findings", "5", FindingsPane),
    Tab("debugger", "Debugger", "6", DebuggerPane),
    Tab("timeline", "Timeline", "7", TimelinePane),
    Tab("map", "Map", "8", MapPane),
    Tab("ranks", "Ranks", "9", RanksPane,
        tooltip="Show a torchrun job's ranks side by side (sessions opened together)",
        absent="9 shows a torchrun job's ranks side by side; this is one session (kinspect open DIR "
               "opens a job's rank sessions together)"),
])
