"""kinspect: see and step through Inductor's size-hint multi-kernel dispatch decisions."""

from kinspect.api import recording

__version__ = "0.1.0"
__all__ = ["recording"]
