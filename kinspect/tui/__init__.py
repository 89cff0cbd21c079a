"""The inspector: a Textual app over one session source.

The only package that imports textual. It shows what `kinspect.core` decides and never
decides anything itself, so the inspector, `explain` and the reports cannot disagree.
"""
