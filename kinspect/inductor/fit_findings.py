"""Misfits of a compile in the words of a one-line error: a faulting compile names the
benchmark tensor that can make its kernel read past its storage at the hint.

The `hint-benchmark-tensor` findings themselves are derived from the session
(`kinspect.core.quality.benchmark_fit`), from the misfits each graph holds.
"""

from __future__ import annotations

from collections.abc import Sequence

from kinspect.core.quality import benchmark_fit as rule
from kinspect.inductor.benchmark_fit import Seen
from kinspect.inductor.capture import GraphRecord


def sentence(seen: Seen, op: str, names: dict[str, str] | None = None) -> str:
    return rule.message(seen.misfit, op, rule.part(op, seen.index, seen.inputs), names or {})


def short_at(graphs: Sequence[GraphRecord], node_inputs: tuple[str, ...] | None, hint: int | None) -> list[Seen]:
    """The misfits that can make a kernel read past its tensor at this hint (of the template
    on these inputs, or of any), for naming a fault's cause."""
    return [s for g in graphs for s in g.misfits
            if s.misfit.short and (hint is None or s.misfit.hint == hint)
            and (node_inputs is None or s.inputs == node_inputs)]
