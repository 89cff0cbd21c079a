"""The `hint-benchmark-tensor` findings of a compile: each misfit the capture saw, named
by the site it autotuned, the op, the hint and the tensor's part in the op (`a`, `x`,
`out`), with the sizes in the user's names.

They are stored in the session (a later kinspect cannot derive them: the tensors existed
only while Inductor autotuned), one per site, hint, tensor and path.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from kinspect.core.dispatch.operands import OPERANDS
from kinspect.core.quality import benchmark_fit as rule
from kinspect.core.session.model import Finding, SymbolInfo
from kinspect.inductor import translate
from kinspect.inductor.benchmark_fit import Seen
from kinspect.inductor.capture import GraphRecord


def _part(op: str, index: int | None, inputs: Sequence[str], inductor_name: bool = True) -> str:
    if index is None:
        return "out"
    parts = OPERANDS.get(op)
    if parts is not None and len(parts) == len(inputs):
        return f"{parts[index]} ({inputs[index]})" if inductor_name else parts[index]
    return inputs[index]


def op_of(g: GraphRecord, seen: Seen) -> tuple[str, str | None]:
    """The template's op and the session's site name for it (None: no site was made, as
    when the compile died first)."""
    for r in g.sites:
        if tuple(n for n, role, _ in r.tensors if role == "input") == seen.inputs:
            return r.op, translate.site_name(g.index, r.name)
    return g.misfit_ops.get(seen.inputs, "a template"), None


def findings(graphs: Sequence[GraphRecord], symbols: Sequence[SymbolInfo]) -> list[Finding]:
    """Per site (or template, where no site was made), one finding per hint, tensor and path
    that was left misfit, and one for all that kinspect fitted: a site a dozen layers share
    speaks once, with the count."""
    names = {s.name: s.alias for s in symbols if s.alias}
    out = []
    for g in graphs:
        left: dict[tuple, list[Seen]] = defaultdict(list)
        fitted: dict[tuple, list[Seen]] = defaultdict(list)
        ops: dict[tuple, str] = {}
        for seen in g.misfits:
            op, site = op_of(g, seen)
            where = (site, op) if site is not None else (None, seen.inputs)
            ops[where] = op
            if seen.fitted:
                fitted[where].append(seen)
            else:
                part = _part(op, seen.index, seen.inputs, inductor_name=False)
                left[(where, seen.misfit.hint, part, seen.misfit.path)].append(seen)
        for (where, _, part, _), group in left.items():
            op, first = ops[where], group[0]
            text = rule.message(first.misfit, op, part if where[0] is not None else _part(op, first.index, first.inputs),
                                names)
            templates = len({s.inputs for s in group})
            if templates > 1:
                text += f" (the same in {templates} templates that share this site, one per layer)"
            out.append(Finding(rule.KIND, text, "error" if first.misfit.short else "warning", site=where[0],
                               graph=g.name))
        for where, group in fitted.items():
            text = rule.fitted_message(ops[where], [s.misfit.hint for s in group], len(group),
                                       len({s.inputs for s in group}), [s.misfit.path for s in group])
            out.append(Finding(rule.KIND, text, "info", site=where[0], graph=g.name))
    return out


def sentence(seen: Seen, op: str, names: dict[str, str] | None = None) -> str:
    return rule.message(seen.misfit, op, _part(op, seen.index, seen.inputs), names or {})


def short_at(graphs: Sequence[GraphRecord], node_inputs: tuple[str, ...] | None, hint: int | None) -> list[Seen]:
    """The misfits that can make a kernel read past its tensor at this hint (of the template
    on these inputs, or of any), for naming a fault's cause."""
    return [s for g in graphs for s in g.misfits
            if s.misfit.short and (hint is None or s.misfit.hint == hint)
            and (node_inputs is None or s.inputs == node_inputs)]
