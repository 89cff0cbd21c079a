"""Call sites from repeated layers, folded into one line each.

A 12-layer transformer calls each multi-kernel from twelve modules that differ only in the
layer's index (`h.0.attn.c_attn` ... `h.11.attn.c_attn`), from one line of the user's code.
Listed one per line they bury the one fact that differs between sites; folded they read
`h.{0..11}.attn.c_attn`, and a layer that is not like the others still stands out.
"""

from __future__ import annotations

from dataclasses import dataclass

from kinspect.core.session.model import CallSite


@dataclass(frozen=True)
class LayerGroup:
    label: str
    """The module path with the indices that vary folded: `h.{0..11}.attn.c_attn`."""
    members: tuple[CallSite, ...]

    @property
    def first(self) -> CallSite:
        return self.members[0]


def group_layers(call_sites: tuple[CallSite, ...] | list[CallSite]) -> list[LayerGroup]:
    """Call sites whose module paths differ only in numeric parts, with the same class and
    user line, as one group each, in the order of their first member."""
    groups: dict[tuple, list[CallSite]] = {}
    for c in call_sites:
        groups.setdefault(_shape(c), []).append(c)
    return [LayerGroup(_fold(members), tuple(members)) for members in groups.values()]


def _shape(c: CallSite) -> tuple:
    if not c.module:
        return ("call", c.index)  # nothing to fold by: it stays on its own
    parts = tuple("#" if p.isdigit() else p for p in c.module.split("."))
    return (parts, c.module_class, c.file, c.lineno)


def _fold(members: list[CallSite]) -> str:
    if len(members) == 1 or not members[0].module:
        return members[0].label
    split = [c.module.split(".") for c in members]  # type: ignore[union-attr]
    out = []
    for i, part in enumerate(split[0]):
        values = sorted({int(s[i]) for s in split}) if part.isdigit() else None
        out.append(part if values is None or len(values) == 1 else "{" + _runs(values) + "}")
    return ".".join(out)


def _runs(values: list[int]) -> str:
    """`0..11`, `0..3,5`, `1,3`: runs of three or more as ranges."""
    runs: list[list[int]] = []
    for v in values:
        if runs and v == runs[-1][-1] + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    return ",".join(f"{r[0]}..{r[-1]}" if len(r) > 2 else ",".join(map(str, r)) for r in runs)
