"""Did my hints take effect? One line for any session, recorded or read from a trace.

Which hints the compile ran with, how many size-hint multi-kernel sites it made in how
many graphs, and each GEMM that got none, with the reason its graph's code gives: the
sizes it sees are static, it ran as an extern kernel (cuBLAS won autotuning, or
max-autotune was off), or it is a Triton template that was not autotuned per hint. The
settings a session states may be the process's and not a compile's (a program that gives
its hints through a compile's config patches), so what a graph's own kernels say they
were compiled with (`'max_autotune': True` in their metadata) comes first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kinspect.core.inductor_code.gemms import MULTI_KERNEL, GemmCall, gemm_calls, module_of, why_no_multi_kernel
from kinspect.core.inductor_code.multi_kernels import multi_kernel_names
from kinspect.core.inductor_code.sizes import WrapperSizes
from kinspect.core.session.model import Graph, Session

_KERNEL_AUTOTUNE = re.compile(r"'max_autotune': (True|False)")
MAX_NAMED = 4
"""GEMMs named per reason in the line; more are counted."""


@dataclass(frozen=True)
class Uncovered:
    """A GEMM that got no multi-kernel."""

    graph: str
    name: str
    """The module whose weight it reads (`lm_head`), else what it computes into (`mm into buf44`)."""
    op: str
    line: int
    reason: str
    module: bool = False
    """Whether `name` is a module's."""

    @property
    def label(self) -> str:
        """`lm_head (mm)`; `mm into buf0 in graph_1`."""
        return f"{self.name} ({self.op})" if self.module else f"{self.name} in {self.graph.split(' ', 1)[0]}"


@dataclass(frozen=True)
class HintsEffect:
    hints: tuple[int, ...]
    sites: int
    graphs_with_sites: int
    graphs: int
    uncovered: tuple[Uncovered, ...]
    unread: tuple[tuple[str, str], ...] = ()
    """Graphs without code in the session, each with the reason it states for having no site."""

    def line(self) -> str:
        g = "graph" if self.graphs == 1 else "graphs"
        if not self.hints and not self.sites:
            head = f"no multi_kernel_hints were set: no size-hint multi-kernel in {self.graphs} {g}"
        elif not self.sites:
            head = f"hints {list(self.hints)} took no effect: no size-hint multi-kernel in {self.graphs} {g}"
        else:
            s = "site" if self.sites == 1 else "sites"
            where = f"{self.graphs} {g}" if self.graphs_with_sites == self.graphs else \
                f"{self.graphs_with_sites} of {self.graphs} {g}"
            head = f"hints {list(self.hints)} took effect: {self.sites} size-hint multi-kernel {s} in {where}"
        if not self.uncovered and not self.unread:
            return head + ("; every GEMM has one" if self.sites else "")
        parts = []
        if self.uncovered:
            n = len(self.uncovered)
            parts.append(f"{n} GEMM{'s' if n > 1 else ''} got none: " + "; ".join(self._groups()))
        parts += [f"{graph}: {reason}" for graph, reason in self.unread]
        return head + "; " + "; ".join(parts)

    def _groups(self) -> list[str]:
        by_reason: dict[str, list[Uncovered]] = {}
        for u in self.uncovered:
            by_reason.setdefault(u.reason, []).append(u)
        out = []
        for reason, members in by_reason.items():
            names = list(dict.fromkeys(u.label for u in members))
            more = len(names) - MAX_NAMED
            out.append(", ".join(names[:MAX_NAMED]) + (f" and {more} more" if more > 0 else "") + f": {reason}")
        return out

    def to_json(self) -> dict[str, object]:
        return {"line": self.line(), "hints": list(self.hints), "sites": self.sites,
                "graphs_with_sites": self.graphs_with_sites, "graphs": self.graphs,
                "without_multi_kernel": [{"graph": u.graph, "name": u.name, "op": u.op, "line": u.line,
                                          "reason": u.reason} for u in self.uncovered]
                + [{"graph": graph, "reason": reason} for graph, reason in self.unread]}


def hints_effect(session: Session) -> HintsEffect:
    hints = session_hints(session)
    config = session.environment.config
    uncovered: list[Uncovered] = []
    unread: list[tuple[str, str]] = []
    for g in session.graphs:
        if g.wrapper_code is None:
            if not g.sites and g.no_site_reason:
                unread.append((g.name, g.no_site_reason))
            continue
        uncovered += _uncovered(g, g.wrapper_code, _settings(g.wrapper_code, config), hints)
    return HintsEffect(tuple(hints), len(session.sites), sum(1 for g in session.graphs if g.sites),
                       len(session.graphs), tuple(uncovered), tuple(unread))


def session_hints(session: Session) -> list[int]:
    """The hints as the session states them, else as its variants were compiled at."""
    stated = session.environment.config.get("multi_kernel_hints")
    if isinstance(stated, list) and stated:
        return [h for h in stated if type(h) is int]
    if session.model.hints:
        return list(session.model.hints)
    return sorted({v.hint for s in session.sites for v in s.variants if v.hint is not None})


def _settings(code: str, config: Mapping[str, object]) -> dict[str, object]:
    """The session's settings, with what this graph's kernels say they were compiled with."""
    out = dict(config)
    m = _KERNEL_AUTOTUNE.search(code)
    if m is not None:
        out["max_autotune"] = m[1] == "True"
    return out


def _uncovered(g: Graph, code: str, config: Mapping[str, object], hints: Sequence[int]) -> list[Uncovered]:
    sizes = WrapperSizes(code)
    out = []
    for call in gemm_calls(code, multi_kernel_names(code), sizes):
        if call.how == MULTI_KERNEL:
            continue
        module = module_of(call.args, g.parameters)
        out.append(Uncovered(g.name, module or _into(call), call.op, call.line,
                             why_no_multi_kernel(call, config, hints), bool(module)))
    return out


def _into(call: GemmCall) -> str:
    into = call.args[-1] if call.args and call.args[-1] else None
    return f"{call.op} into {into}" if into else f"{call.op} at line {call.line}"
