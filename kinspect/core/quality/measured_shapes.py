"""Where a session was measured, by the user's sizes: what `explain` lists so that a shape
that was not measured can be compared with those that were."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kinspect.core.dispatch.shapes import format_key, sizes_text
from kinspect.core.quality.overview import session_namer
from kinspect.core.session.model import Session

LISTED = 200
"""Beyond this many measured keys a site's are counted, not listed (a sweep has 300,000)."""


def measured_shapes(session: Session) -> dict[str, list[str]]:
    """Per measured site, its measured shapes as text (`B=2 S=16`), in size order; a site with
    more than `LISTED` gets none listed (`measured_counts` still counts them)."""
    namer = session_namer(session)
    out: dict[str, list[str]] = {}
    for site in session.sites:
        keys = [key for (_, key), t in session.site_timings(site.name).items() if t.fastest is not None]
        if not keys or len(keys) > LISTED:
            continue
        named = sorted((tuple(session.in_order(namer(site, k)).items()), k) for k in keys)
        out[site.name] = [sizes_text(dict(sizes)) if sizes else format_key(k) for sizes, k in named]
    return out


def measured_counts(session: Session) -> dict[str, int]:
    return {s.name: n for s in session.sites
            if (n := sum(t.fastest is not None for t in session.site_timings(s.name).values()))}


def grouped(shapes: Sequence[str]) -> str:
    """`B=2: S=16, 64, 1024 · B=5: S=16`: shapes that differ in their last size only, on
    one group each (one size: `B=2, 3, 5`)."""
    groups: dict[str, list[str]] = {}
    for text in shapes:
        head, _, last = text.rpartition(" ")
        if "=" not in last or text.startswith("("):
            groups.setdefault(text, [])
            continue
        name, _, value = last.partition("=")
        groups.setdefault(f"{head}{': ' if head else ''}{name}=", []).append(value)
    return " · ".join(head + ", ".join(values) for head, values in groups.items())


def shapes_lines(session: Session, only: str | None = None) -> list[str]:
    """One line per set of sites measured at the same shapes (usually every site at once);
    `only`: that site's."""
    listed = measured_shapes(session)
    counts = {s: n for s, n in measured_counts(session).items() if only is None or s == only}
    same: dict[tuple[str, ...], list[str]] = {}
    for site, n in counts.items():
        same.setdefault(tuple(listed.get(site, ())) or (f"{n} keys",), []).append(site)
    out = []
    for shapes, sites in same.items():
        who = "every site" if len(sites) == len(session.sites) > 1 else ", ".join(sites)
        n = counts[sites[0]]
        out.append(f"{who} ({n}): " + (grouped(shapes) if sites[0] in listed else "too many to list: "
                                        "the inspector's l lists them"))
    return out


def shapes_json(session: Session) -> Mapping[str, object]:
    listed = measured_shapes(session)
    return {site: listed.get(site, n) for site, n in measured_counts(session).items()}
