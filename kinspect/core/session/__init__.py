"""The session: what one recording knows (`model` for what was compiled, `runtime` for what ran), the one rule for timings at a key
(`timings`), the events as columns (`eventlog`), call sites folded by layer
(`call_sites`), and the file format (`format`).

May import `kinspect.core.errors` and `kinspect.core.dispatch`; nothing that analyses a
session, so the format can be read where no analysis is wanted.
"""
