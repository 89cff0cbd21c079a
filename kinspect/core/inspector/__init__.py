"""The inspector's model, without widgets: its one state and the view every tab draws from
(`state`), and what a recording saw at each site and key (`observed`).

May import `kinspect.core.errors`, `dispatch`, `session` and `quality`; the TUI draws it.
"""
