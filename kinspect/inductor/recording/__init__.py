"""A compile and its run turned into a session: the live pipeline of a model file, the
recording of an unmodified program, the inspector's live source, the translation of what
the hooks saw into the session model, and what a failed compile leaves (the faulting
config pinned down, a standalone reproducer). May import `launch`, `hooks` and `timing`.
"""
