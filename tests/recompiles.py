"""A second compile made from a recording, for the variance tests of the core and the TUI."""

from __future__ import annotations

from dataclasses import replace

from kinspect.core.quality.variance import variants_of
from kinspect.core.session.runtime import Recompile
from kinspect.core.session.model import Session


def again(session: Session, factor: float, kernel_changed: bool, hint: int = 256) -> Recompile:
    """The recording's compile again, `hint`'s variant `factor` times slower, its kernel another one or not."""
    (site,) = session.sites
    index = next(v.index for v in site.variants if v.hint == hint)
    variants = {site.name: tuple((h, k + ("-other" if kernel_changed and h == hint else ""))
                                 for h, k in variants_of(session)[site.name])}
    ms = tuple(replace(m, median_us=m.median_us * factor, p20_us=None, p80_us=None)
               if m.variant == index and m.median_us is not None else m for m in session.measurements)
    return Recompile(session.model.hints, "variance", variants, ms)
