"""The finding rules, each declared where it is written.

`@site_rule(kind)`, `@session_rule(kind)` or `@rank_rule(kind)` on the function that
derives a kind of finding is that rule's whole registration: deriving runs every declared
rule, and a refresh replaces stored findings of exactly the declared kinds. A hand-kept
list of kinds beside the derivation let a rule missing from it leave stale stored findings
next to the fresh ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Generic, TypeVar

from kinspect.core.dispatch.shapes import Key
from kinspect.core.session.eventlog import EventLog
from kinspect.core.session.model import Finding, Session

F = TypeVar("F", bound=Callable[..., list[Finding]])


@dataclass(frozen=True)
class Rule(Generic[F]):
    kind: str
    derive: F


class Rules:
    """One registry of rules taking the same arguments, run in declaration order (the
    order findings are listed in)."""

    def __init__(self) -> None:
        self.rules: list[Rule[Any]] = []

    def __call__(self, kind: str) -> Callable[[F], F]:
        def declare(fn: F) -> F:
            clash = next((r for r in self.rules if r.kind == kind), None)
            if clash is not None and _name(clash.derive) != _name(fn):
                raise ValueError(f"finding kind {kind!r} is declared twice: {_name(clash.derive)} and {_name(fn)}")
            self.rules = [r for r in self.rules if r.kind != kind] + [Rule(kind, fn)]
            return fn
        return declare

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(r.kind for r in self.rules)

    def derive(self, *args: Any) -> list[Finding]:
        out: list[Finding] = []
        for r in self.rules:
            out += r.derive(*args)
        return out


class Facts:
    """What several site rules read from a session, worked out once per derivation."""

    def __init__(self, session: Session) -> None:
        self.session = session

    @cached_property
    def site_keys(self) -> dict[str, set[Key]]:
        """The distinct keys each site was called with."""
        events = self.session.events
        if isinstance(events, EventLog):
            return events.site_keys()
        out: dict[str, set[Key]] = {}
        for e in events:
            out.setdefault(e.site, set()).add(e.key)
        return out


def _name(fn: Callable[..., Any]) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


site_rule = Rules()
"""Rules over one site of a session: `fn(site, facts)`, run site by site."""
session_rule = Rules()
"""Rules over a whole session: `fn(session)`, run after the site rules."""
rank_rule = Rules()
"""Rules over a torchrun job's merged rank sessions: `fn(merged)`."""
