"""What one call of the model dispatches at a site, at given sizes: which keys, how often.

A multi-kernel shared by repeated layers runs once per call site in each forward (eight
times for a 2-layer Llama's q, k, v and o projections), and not every call site hands
Inductor the key the site's tensors give: the o projection passes the attention's 4-D
output, `(B, heads, S, head_dim)`, where the hint keys have `(B, S, hidden)`, so Inductor
decides it on another key (and another variant). Advice that weighs each site once, at
the key its tensors give, misses those calls and weighs a site called eight times like
one called once.

So the recorded dispatches are read back as model calls: a graph's dispatches run in
wrapper order, each call site once per call, so a call site seen again starts the next
call. Each call's sizes are read off its dispatches whose keys line up with their site's
tensors, and every dispatch of that call, lined up or not, is counted at those sizes.
Where no call was recorded at some sizes, each call site is taken to see the key the
site's tensors give.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from kinspect.core.dispatch.shapes import Key, SymbolShape
from kinspect.core.session.call_sites import group_layers
from kinspect.core.session.eventlog import site_key_call, sites_without_call_site
from kinspect.core.session.model import Session, Site

Sizes = frozenset[tuple[str, int]]


class ModelCalls:
    """Each site's keys per model call, at the sizes the recording ran the model at."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._seen: dict[tuple[str, Sizes], Counter[Key]] = {}
        self._calls: Counter[tuple[str, Sizes]] = Counter()
        """Per graph and sizes, how many model calls were recorded there."""
        self._labels: dict[str, frozenset[str]] = {}
        """Per graph, the sizes (by the user's names) a call of it is known by: every
        symbol of its sites."""
        self._odd: dict[str, set[int]] = {}
        self._named: dict[tuple[str, Key], Sizes] = {}
        """Per site and key, the sizes of the first model call that dispatched it there."""
        sites = {s.name: s for s in session.sites}
        # Graphs recorded before call sites were told apart: their calls cannot be told apart either
        untold = {sites[name].graph for name in sites_without_call_site(session.events) if name in sites}
        for graph in {s.graph for s in session.sites} - untold:
            names = frozenset().union(*(s.symbols for s in session.sites if s.graph == graph))
            self._labels[graph] = frozenset(session.label_of(n) for n in names)
        open_calls: dict[str, tuple[list[tuple[str, Key]], set[tuple[str, int | None]]]] = {}
        for name, key, call_site in site_key_call(session.events):
            site = sites.get(name)
            if site is None:
                continue
            if call_site is not None and not site.lines_up(key):
                self._odd.setdefault(name, set()).add(call_site)
            if site.graph in untold:
                continue
            call, seen = open_calls.setdefault(site.graph, ([], set()))
            if (name, call_site) in seen:  # a call site seen again starts the graph's next call
                self._count(site.graph, call, sites)
                call, seen = open_calls[site.graph] = ([], set())
            seen.add((name, call_site))
            call.append((name, key))
        for graph, (call, _) in open_calls.items():
            self._count(graph, call, sites)

    def _count(self, graph: str, call: list[tuple[str, Key]], sites: Mapping[str, Site]) -> None:
        """Count one model call of `graph` (its dispatches, in order) at the sizes it ran at."""
        values = call_sizes(self.session, [(sites[name], key) for name, key in call])
        sizes = None if values is None else frozenset(values.items())
        if sizes is None or frozenset(k for k, _ in sizes) != self._labels[graph]:
            return  # a call whose sizes its dispatches do not all tell
        self._calls[(graph, sizes)] += 1
        for name, key in call:
            self._seen.setdefault((name, sizes), Counter())[key] += 1
            self._named.setdefault((name, key), sizes)

    def sizes_at(self, site: Site, key: Key) -> dict[str, int]:
        """The user's sizes of a model call that dispatched `key` at `site` ({} where none
        was recorded): a key laid out otherwise than the site's tensors (a Llama's o
        projection's) is named by the call it came in."""
        return self.session.in_order(dict(self._named.get((site.name, key), ())))

    def keys(self, site: Site, sizes: Mapping[str, int]) -> dict[Key, float]:
        """The keys `site` sees in one model call at `sizes` (the user's names), each with
        how many times a call dispatches it. Raises KinspectError where the site's key
        cannot be worked out at these sizes."""
        labels = self._labels.get(site.graph)
        if labels is not None and labels <= sizes.keys():
            at = frozenset((k, sizes[k]) for k in labels)
            calls = self._calls.get((site.graph, at))
            if calls:
                seen = self._seen.get((site.name, at), Counter())
                return {k: n / calls for k, n in seen.items()}
        key = self.session.runtime_key(site, SymbolShape(dict(sizes)))
        return {key: float(max(1, len(site.call_sites)))}

    def misaligned(self, site: Site) -> tuple[str, ...]:
        """The call sites of `site` whose recorded keys do not line up with its tensors,
        by the user's names with repeated layers folded (`layers.{0,1}.self_attn.o_proj`)."""
        odd = [c for i in sorted(self._odd.get(site.name, ())) if (c := site.call_site(i)) is not None]
        return tuple(g.label for g in group_layers(odd))


def call_sizes(session: Session, keys: Iterable[tuple[Site, Key]]) -> dict[str, int] | None:
    """The user's sizes one model call ran at, read off its keys that line up with their
    site's tensors; None where they disagree (not one call) or tell none."""
    values: dict[str, int] = {}
    for site, key in keys:
        for name, v in site.symbol_values(key).items():
            if values.setdefault(name, v) != v:
                return None
    return {session.label_of(name): v for name, v in values.items()} or None

