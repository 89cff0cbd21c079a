"""The debugger over dispatch events: breakpoints and their condition language, the replay
cursor of a recording, the live workload's pause gate, the timeline drawn beside them, and
the debugger's one cursor over either (`cursor`), which the Debugger and Timeline tabs draw.

May import `kinspect.core.errors`, `dispatch` and `session`: a breakpoint's "pick slower
than the fastest" reads the same timing rule as every table.
"""
