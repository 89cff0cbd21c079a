"""Dispatch quality, from a session's measurements: regret per site and model
(`overview`), decision boundaries and crossovers, the decision map, what-if heuristics and
hint subsets, compile-to-compile variance, the five-way comparison, hint advice, roofline
work, sweep plans, findings, and the per-shape explanation every command prints; and what
needs no measurement: whether the hints took effect (`hints_effect`) and which variant
runs along a range for every subset of the hints (`pick_map`).

May import `kinspect.core.errors`, `dispatch`, `session` and `inductor_code`; never the
debugger, ranks or exports, which build on it.
"""
