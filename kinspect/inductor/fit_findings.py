"""The `hint-benchmark-tensor` findings of a compile: each misfit the capture saw, named
by the site it autotuned, the op, the hint and the tensor's part in the op (`a`, `x`,
`out`), with the sizes in the user's names.

They are stored in the session (a later kinspect cannot derive them: the tensors existed
only while Inductor autotuned), one per site, hint, tensor and path.
"""

from __future__ import annotations

from collections.abc import Sequence

from kinspect.core.dispatch.operands import OPERANDS
from kinspect.core.quality import benchmark_fit as rule
from kinspect.core.session.model import Finding, SymbolInfo
from kinspect.inductor import translate
from kinspect.inductor.benchmark_fit import Seen
from kinspect.inductor.capture import GraphRecord


def _part(op: str, index: int | None, inputs: Sequence[str]) -> str:
    if index is None:
        return "out"
    parts = OPERANDS.get(op)
    if parts is not None and len(parts) == len(inputs):
        return f"{parts[index]} ({inputs[index]})"
    return inputs[index]


def findings(graphs: Sequence[GraphRecord], symbols: Sequence[SymbolInfo]) -> list[Finding]:
    names = {s.name: s.alias for s in symbols if s.alias}
    out = []
    for g in graphs:
        by_inputs = {tuple(n for n, role, _ in r.tensors if role == "input"): r for r in g.sites}
        for seen in g.misfits:
            r = by_inputs.get(seen.inputs)
            op = r.op if r is not None else "a template"
            site = translate.site_name(g.index, r.name) if r is not None else None
            text = sentence(seen, op, names)
            if seen.fitted:
                text += "; kinspect gave it the storage the kernel reads (--fit-benchmark-tensors)"
            severity = "error" if seen.misfit.short and not seen.fitted else "warning"
            out.append(Finding(rule.KIND, text, severity, site=site, graph=g.name))
    return out


def sentence(seen: Seen, op: str, names: dict[str, str] | None = None) -> str:
    return rule.message(seen.misfit, op, _part(op, seen.index, seen.inputs), names or {})


def short_at(graphs: Sequence[GraphRecord], node_inputs: tuple[str, ...] | None, hint: int | None) -> list[Seen]:
    """The misfits that can make a kernel read past its tensor at this hint (of the template
    on these inputs, or of any), for naming a fault's cause."""
    return [s for g in graphs for s in g.misfits
            if s.misfit.short and (hint is None or s.misfit.hint == hint)
            and (node_inputs is None or s.inputs == node_inputs)]
