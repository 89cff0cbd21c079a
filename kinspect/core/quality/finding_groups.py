"""Findings grouped by kind, so a real model's list reads: 53 findings on a 2-layer Llama
become a handful of lines ("key-not-true-size at 9 sites"), worst first, each opening to
its members. The Findings tab, `explain` and the Markdown report show the same groups.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kinspect.core.session.model import SEVERITIES, Finding


@dataclass(frozen=True)
class FindingGroup:
    """Every finding of one kind, by site."""

    kind: str
    severity: str
    """The worst of its members'."""
    members: tuple[Finding, ...]

    @property
    def sites(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.site for f in self.members if f.site))

    @property
    def title(self) -> str:
        """`key-not-true-size at 9 sites (12 findings)`, `slow-pick at multi_kernel_1`."""
        n, sites = len(self.members), self.sites
        where = (f" at {len(sites)} sites" if len(sites) > 1 else f" at {sites[0]}" if sites else "")
        count = f" ({n} findings)" if n > len(sites) and n > 1 else ""
        return f"{self.kind}{where}{count}"


def _rank(severity: str) -> int:
    return SEVERITIES.index(severity) if severity in SEVERITIES else -1


def group_findings(findings: Iterable[Finding]) -> list[FindingGroup]:
    """One group per kind, worst first (severity, then how many sites and findings);
    members in site order, as found within a site."""
    by_kind: dict[str, list[Finding]] = {}
    for f in findings:
        by_kind.setdefault(f.kind, []).append(f)
    groups = []
    for kind, members in by_kind.items():
        order = {site: i for i, site in enumerate(dict.fromkeys(f.site or "" for f in members))}
        members.sort(key=lambda f: order[f.site or ""])
        worst = max((f.severity for f in members), key=_rank)
        groups.append(FindingGroup(kind, worst, tuple(members)))
    groups.sort(key=lambda g: (-_rank(g.severity), -len(g.sites), -len(g.members), g.kind))
    return groups


SHOWN_GROUPS = 50
"""Kinds a listing shows; a hand-made session may hold thousands."""
SHOWN_MEMBERS = 20
"""Findings of a kind a listing shows: a session of 100,000 findings printed every one."""


def more_text(hidden: int, what: str) -> str | None:
    """The line standing for what a listing leaves out, or None."""
    if hidden <= 0:
        return None
    return f"… and {hidden:,} more {what} (kinspect explain --json and the JSON export hold every one)"
