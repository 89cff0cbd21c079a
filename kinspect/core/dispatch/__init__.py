"""The dispatch decision itself: shape keys and the text that names them, Inductor's
distance heuristics, one site's decision, symbolic sizes after hint substitution, each
tensor's part in the op, and the same decision for many keys at once.

The bottom of the core: it imports only `kinspect.core.errors`, so everything above
(session, quality, debugger, ranks, export) shares one model of Inductor's rule.
"""
