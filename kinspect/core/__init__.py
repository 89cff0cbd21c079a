"""Pure data and decisions: shapes, heuristics, symbolic sizes, the session model, and the
session source contract (`source`) that the Inductor layer, the TUI and the commands meet at.

Nothing here imports torch or textual (tests/test_import_purity.py proves it), so every
headless command, the inspector and the tests share one model of Inductor's dispatch.
"""
