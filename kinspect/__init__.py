"""kinspect: see and step through Inductor's size-hint multi-kernel dispatch decisions."""

__version__ = "0.1.0"
