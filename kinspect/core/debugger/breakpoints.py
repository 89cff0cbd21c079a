"""Breakpoints over dispatch events: where the replay cursor and the live gate stop.

A breakpoint is one of a few kinds a user sets with one key (on a site, on a cache miss,
on "the choice is slower than the fastest measured") or a typed condition
(`kinspect.core.debugger.conditions`), and a kind may carry a condition too. What a condition can
name depends on the session (its symbols, its measurements), so fields come from an
`EventContext` built from the session; the same breakpoint works against a later context
of a growing live session, since it is compiled per context.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kinspect.core.debugger.conditions import (
    Field,
    Node,
    Predicate,
    compile_node,
    parse_tree,
    site_restriction,
)
from kinspect.core.errors import KinspectError
from kinspect.core.session.runtime import DispatchEvent
from kinspect.core.session.model import Session
from kinspect.core.dispatch.symbolic import TensorSpec

_KEY_DIM = re.compile(r"^t([0-9]{1,2})d([0-9]{1,2})$")


def _symbol_positions(specs: tuple[TensorSpec, ...]) -> dict[str, tuple[int, int]]:
    """Where each symbol is a whole dimension of the runtime key (first such place)."""
    out: dict[str, tuple[int, int]] = {}
    for ti, spec in enumerate(specs):
        for di, size in enumerate(spec.sizes):
            if isinstance(size.tree, str):
                out.setdefault(size.tree, (ti, di))
    return out


def _at(positions: Mapping[str, tuple[int, int]]) -> Callable[[DispatchEvent], int | None]:
    def value(e: DispatchEvent) -> int | None:
        p = positions.get(e.site)
        if p is None:
            return None
        try:
            return e.key[p[0]][p[1]]
        except IndexError:  # a key whose rank differs from the site's tensors
            return None
    return value


def _key_dim(t: int, d: int) -> Callable[[DispatchEvent], int | None]:
    def value(e: DispatchEvent) -> int | None:
        try:
            return e.key[t][d]
        except IndexError:
            return None
    return value


class EventContext:
    """What a dispatch event means beyond its own fields, for one session.

    Symbol values come from the event's key where a site's tensor dimension is exactly
    one symbol (`s0`, not `2*s1`); elsewhere the symbol has no value (null) at that site.
    `fastest` and `regret` follow `kinspect.core.session.timings`, as every reader does. Build a new context when a live session gains sites or
    measurements; it is cheap.
    """

    def __init__(self, session: Session) -> None:
        self.variant_counts: dict[str, int] = {s.name: len(s.variants) for s in session.sites}
        positions: dict[str, dict[str, tuple[int, int]]] = {}
        ranks: set[tuple[int, int]] = set()
        for site in session.sites:
            specs = site.runtime_specs
            ranks.update((t, d) for t, spec in enumerate(specs) for d in range(len(spec.sizes)))
            for symbol, pos in _symbol_positions(specs).items():
                positions.setdefault(symbol, {})[site.name] = pos
        self._key_dims = ranks
        self._fields: dict[str, Field] = dict(_BUILTIN)
        self._fields["fastest"] = Field("fastest", "num", True, self.fastest, _BUILTIN_DOCS["fastest"])
        self._fields["regret"] = Field("regret", "num", True, self.regret, _BUILTIN_DOCS["regret"])
        for sym in session.symbols:
            get = _at(positions.get(sym.name, {}))
            for typed in (sym.alias, sym.name):
                if typed and typed not in self._fields:
                    self._fields[typed] = Field(typed, "num", True, get, f"symbol {sym.name}")
        self._timings = session.timings()

    def field(self, name: str) -> Field | None:
        f = self._fields.get(name)
        if f is not None:
            return f
        m = _KEY_DIM.match(name)
        if m and (int(m.group(1)), int(m.group(2))) in self._key_dims:
            t, d = int(m.group(1)), int(m.group(2))
            return Field(name, "num", True, _key_dim(t, d), f"tensor {t} dim {d} of the key")
        return None

    def field_names(self) -> list[str]:
        return [*self._fields, *(f"t{t}d{d}" for t, d in sorted(self._key_dims))]

    def fastest(self, e: DispatchEvent) -> int | None:
        found = self._timings.get((e.site, e.key))
        return None if found is None else found.fastest

    def regret(self, e: DispatchEvent) -> float | None:
        """The picked variant's median over the fastest's (1.0 = the fastest was picked)."""
        found = self._timings.get((e.site, e.key))
        return None if found is None else found.regret(e.picked)

    def slower(self, e: DispatchEvent) -> bool:
        """The pick is slower than the fastest beyond noise (`kinspect.core.session.timings`)."""
        found = self._timings.get((e.site, e.key))
        return found is not None and found.slower(e.picked)


_BUILTIN_DOCS = {
    "site": "the site's name",
    "seq": "the event's sequence number",
    "step": "the workload step that caused it (null if unknown)",
    "picked": "the variant Inductor ran",
    "predicted": "the variant kinspect's model predicted",
    "hit": "Inductor's shape cache already knew the key",
    "miss": "the first call with this key: Inductor decided afresh",
    "override": "the variant the user forced (null if none)",
    "fastest": "the fastest measured variant at this key (null if unmeasured)",
    "regret": "picked latency over fastest latency (null if unmeasured)",
}


def _not_hit(e: DispatchEvent) -> bool:
    return not e.cache_hit


_BUILTIN: dict[str, Field] = {
    f.name: f
    for f in (
        Field("site", "str", False, operator.attrgetter("site"), _BUILTIN_DOCS["site"]),
        Field("seq", "num", False, operator.attrgetter("seq"), _BUILTIN_DOCS["seq"]),
        Field("step", "num", True, operator.attrgetter("step"), _BUILTIN_DOCS["step"]),
        Field("picked", "num", False, operator.attrgetter("picked"), _BUILTIN_DOCS["picked"]),
        Field("predicted", "num", False, operator.attrgetter("predicted"), _BUILTIN_DOCS["predicted"]),
        Field("hit", "bool", False, operator.attrgetter("cache_hit"), _BUILTIN_DOCS["hit"]),
        Field("miss", "bool", False, _not_hit, _BUILTIN_DOCS["miss"]),
        Field("override", "num", True, operator.attrgetter("override"), _BUILTIN_DOCS["override"]),
    )
}


@dataclass(eq=False)
class Condition:
    """A parsed condition; compiled once per context and reused for every event."""

    text: str
    tree: Node
    _compiled: tuple[EventContext, Predicate] | None = field(default=None, repr=False)

    def predicate(self, ctx: EventContext) -> Predicate:
        if self._compiled is None or self._compiled[0] is not ctx:
            self._compiled = (ctx, compile_node(self.tree, ctx))
        return self._compiled[1]

    def sites(self) -> frozenset[str] | None:
        return site_restriction(self.tree)


def parse_condition(text: str, ctx: EventContext) -> Condition:
    return Condition(text.strip(), parse_tree(text, ctx))


KINDS = ("site", "miss", "not_fastest", "condition")


@dataclass(frozen=True)
class Breakpoint:
    """Stop at an event of one kind, optionally only where a condition also holds."""

    kind: str
    site: str | None = None
    condition: Condition | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise KinspectError(f"unknown breakpoint kind {self.kind!r}; known: {', '.join(KINDS)}")
        if (self.kind == "site") != (self.site is not None):
            raise KinspectError("a site breakpoint names its site, and only it does")
        if self.kind == "condition" and self.condition is None:
            raise KinspectError("a condition breakpoint needs a condition")

    @classmethod
    def on_site(cls, site: str, ctx: EventContext, when: str | None = None) -> Breakpoint:
        if site not in ctx.variant_counts:
            known = ", ".join(ctx.variant_counts) or "none"
            raise KinspectError(f"no site named {site!r}; this session has: {known}")
        return cls("site", site, _maybe(when, ctx))

    @classmethod
    def on_miss(cls, ctx: EventContext, when: str | None = None) -> Breakpoint:
        return cls("miss", None, _maybe(when, ctx))

    @classmethod
    def on_not_fastest(cls, ctx: EventContext, when: str | None = None) -> Breakpoint:
        return cls("not_fastest", None, _maybe(when, ctx))

    @classmethod
    def when(cls, text: str, ctx: EventContext) -> Breakpoint:
        return cls("condition", None, parse_condition(text, ctx))

    def predicate(self, ctx: EventContext) -> Predicate:
        """One closure for scanning many events; `matches` is the one-event form."""
        base = self._kind_predicate(ctx)
        if self.condition is None:
            assert base is not None
            return base
        cond = self.condition.predicate(ctx)
        if base is None:
            return cond
        return lambda e: base(e) and cond(e)

    def _kind_predicate(self, ctx: EventContext) -> Predicate | None:
        if self.kind == "site":
            name = self.site
            return lambda e: e.site == name
        if self.kind == "miss":
            return _not_hit
        if self.kind == "not_fastest":
            return ctx.slower
        return None

    def matches(self, event: DispatchEvent, ctx: EventContext) -> bool:
        return bool(self.predicate(ctx)(event))

    def sites(self) -> frozenset[str] | None:
        """Sites outside which it never stops, or None for any site."""
        own = frozenset({self.site}) if self.site is not None else None
        cond = self.condition.sites() if self.condition is not None else None
        if own is not None and cond is not None:
            return own & cond
        return own if own is not None else cond

    def describe(self) -> str:
        head = {
            "site": f"at {self.site}",
            "miss": "on a cache miss",
            "not_fastest": "when the pick is slower than the fastest measured",
            "condition": "when",
        }[self.kind]
        if self.condition is None:
            return head
        return f"{head} {self.condition.text}" if self.kind == "condition" else f"{head} if {self.condition.text}"


def _maybe(text: str | None, ctx: EventContext) -> Condition | None:
    return None if text is None or not text.strip() else parse_condition(text, ctx)

