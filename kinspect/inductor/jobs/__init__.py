"""Whole compiles driven for a command: the model compiled afresh in a process of its own,
`advise`, `compare`, `sweep`, and the child side of a fault's synchronous rerun. May import
every other part of `kinspect.inductor`.
"""
