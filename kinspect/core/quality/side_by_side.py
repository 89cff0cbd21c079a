"""Two recordings of one program side by side (stock Inductor against `--one-size-per-symbol`,
one torch against another): per site and for the whole model, how close each compile's picks
come to its fastest variant over the keys it ran.

Two compiles number their multi-kernels apart, so sites are matched by what the user calls
them: the graph, op and module path of their call sites (`graph_0 (inference)` · `addmm` ·
`h.0.attn.c_attn +1`), else their name; sites alike in all of these by their order in the
graph's code.

One compile of each cannot tell a difference the two modes make from autotuning's own
between compiles, except where the problems tuned differ or the choices run do: so each
matched site says whether its two compiles tuned the same problem at every hint (each
variant's key, and the rows its kernel computed where Inductor's rule made them disagree
with it), whether a variant of one runs a choice autotuned at an earlier hint where the
other's runs its own (stock Inductor's fusion benchmark, against `--fusion-per-hint`), and
which hint's autotuning settled on another config: two compiles of other hint sets (advise's
candidate run against its verification) share a variant's problem, and the config it won
with is what tells whether the rule or the tuning moved a figure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kinspect.core.dispatch.shapes import Key, format_key
from kinspect.core.numbers import ratio
from kinspect.core.quality.findings import earlier_hints_choices
from kinspect.core.quality.kernel_sizes import rows_beyond_key
from kinspect.core.quality.overview import ModelQuality, SiteQuality, model_quality
from kinspect.core.session.model import Session, Site

VISIBLE = 1.05
"""Two compiles' figures this far apart (geomean or worst) get a line on what differed
between them: the geomean goal the fix is held to."""


@dataclass(frozen=True)
class Side:
    """One compile's figures at one site (or the whole model): None where it has no such site
    or measured none of its keys."""

    shapes: int = 0
    geomean: float | None = None
    worst: float | None = None
    lost: float | None = None
    """GPU time lost over the workload's calls, as a share of the fastest possible."""


@dataclass(frozen=True)
class Tuned:
    """What one variant was tuned on: its key, and the rows its kernel computed where they
    are more than the key's (stock Inductor's `B*S` GEMM at a hint)."""

    key: Key
    kernel_rows: int | None = None


@dataclass(frozen=True)
class Row:
    label: str
    sides: tuple[Side, Side]
    tuned: tuple[dict[int | None, Tuned], dict[int | None, Tuned]] | None = None
    """Each recording's variants' problems by hint, where both have the site."""
    borrowed: tuple[dict[int, int], dict[int, int]] = ({}, {})
    """Each recording's variants that run a choice autotuned at an earlier hint: their hint,
    and the hint whose choice it is."""
    configs: tuple[dict[int | None, Mapping[str, Any]], dict[int | None, Mapping[str, Any]]] = ({}, {})
    """Each recording's variants' configs (what autotuning settled on) by hint."""

    @property
    def shared(self) -> tuple[int | None, ...]:
        """The hints (None: the example size) both compiles have a variant for."""
        if self.tuned is None:
            return ()
        a, b = self.tuned
        return tuple(sorted(a.keys() & b.keys(), key=_hint_order))

    @property
    def differ(self) -> tuple[int | None, ...] | None:
        """The hints both compiled at which they tuned different problems; None where a
        recording lacks the site or a key."""
        if self.tuned is None:
            return None
        a, b = self.tuned
        return tuple(h for h in self.shared if a[h] != b[h])

    @property
    def same_hints(self) -> bool:
        return self.tuned is not None and self.tuned[0].keys() == self.tuned[1].keys()

    @property
    def retuned(self) -> dict[int | None, tuple[str, ...]]:
        """The hints both compiled whose autotuning settled on another config, with the
        config's entries that differ."""
        a, b = self.configs
        out = {}
        for h in self.shared:
            if h in a and h in b:
                entries = tuple(k for k in dict.fromkeys([*a[h], *b[h]]) if str(a[h].get(k)) != str(b[h].get(k)))
                if entries:
                    out[h] = entries
        return out


def _hint_order(h: int | None) -> tuple[bool, int]:
    return h is not None, h or 0


def site_labels(session: Session) -> dict[str, str]:
    """What the user calls each site, the same in any compile of the program: its graph, op
    and call sites; sites alike in all three (a MoE layer's two GEMMs on one module) are told
    apart by their order in the graph's code (`#2`), which every compile of the program keeps."""
    base = {s.name: f"{s.graph} · {s.op} · {s.title}" for s in session.sites}
    alike = Counter(base.values())
    seen: Counter[str] = Counter()
    out = {}
    for s in session.sites:
        label = base[s.name]
        seen[label] += 1
        out[s.name] = f"{label} #{seen[label]}" if alike[label] > 1 else label
    return out


def _side(q: SiteQuality | None) -> Side:
    if q is None or not q.shapes:
        return Side()
    worst = q.worst
    return Side(q.shapes, q.geomean_regret, worst.regret if worst else None, q.workload_lost)


def side_by_side(a: Session, b: Session) -> tuple[list[Row], Row]:
    """A row per site of either recording (matched by label), and the whole model's row."""
    quality = [model_quality(s) for s in (a, b)]
    by_label: list[dict[str, tuple[Side, dict[int | None, Tuned] | None, dict[int, int],
                                   dict[int | None, Mapping[str, Any]]]]] = []
    for s, q in zip((a, b), quality):
        sites, labels = {site.name: site for site in s.sites}, site_labels(s)
        by_label.append({labels[sq.site]: (_side(sq), _tuned(s, sites[sq.site]), _borrowed(sites[sq.site]),
                                           _configs(s, sites[sq.site]))
                         for sq in q.sites if sq.site in sites})
    rows = []
    for label in dict.fromkeys([*by_label[0], *by_label[1]]):
        (sa, ta, ba, ca), (sb, tb, bb, cb) = (side.get(label, (Side(), None, {}, {})) for side in by_label)
        both = (ta, tb) if ta is not None and tb is not None else None
        rows.append(Row(label, (sa, sb), both, (ba, bb), (ca, cb)))
    return rows, Row("whole model", (_whole(quality[0]), _whole(quality[1])))


def _tuned(s: Session, site: Site) -> dict[int | None, Tuned] | None:
    """Each variant's problem by its hint; None where a key is unknown. A session that
    records the sizes each hint was tuned at (`--one-size-per-symbol`, or an Inductor that
    evaluates a hint per symbol) tuned on its keys by construction."""
    if any(v.key is None for v in site.variants):
        return None
    stated = bool(s.tuned_sizes(site))
    return {h: Tuned(v.key, None if stated else rows_beyond_key(site, v))  # a shared variant: each hint's problem
            for v, hints in zip(site.variants, s.stands_for(site)) for h in (hints or {v.hint})}


def _configs(s: Session, site: Site) -> dict[int | None, Mapping[str, Any]]:
    return {h: v.config for v, hints in zip(site.variants, s.stands_for(site)) for h in (hints or {v.hint}) if v.config}


def _borrowed(site: Site) -> dict[int, int]:
    return {v.hint: c.tuned_at for v, c in earlier_hints_choices(site) if c.tuned_at is not None}


def _whole(q: ModelQuality) -> Side:
    worst = q.worst
    return Side(q.shapes, q.geomean_regret, worst[1].regret if worst else None, q.workload_lost)


def gaps(s: Session) -> list[str]:
    """What a recording's columns leave out, in lines to print under the table: no site at
    all, sites with no timing (the columns then read `-` all down), and each graph whose
    compile died, with kinspect's reason (a stock compile that faulted at a hint)."""
    out = []
    if not s.sites:
        out.append("no size-hint multi-kernel was recorded")
    elif not s.measurements:
        out.append(f"{len(s.sites)} site{'s' if len(s.sites) != 1 else ''} recorded, none timed (recorded without "
                   "--measure, or a CUDA fault in the program had left nothing to time with)")
    out += [f"{g.name}: {g.no_site_reason}" for g in s.graphs if g.died]
    return out


def what_differed(names: tuple[str, str], rows: list[Row], whole: Row) -> list[str]:
    """Lines under the table for each site whose figures differ visibly: whether the two
    compiles had the same hints, tuned the same problems and settled on the same configs
    (what is left is the timing of the same kernels), or where they did not, with what
    each tuned or chose there."""
    out = []
    for r in rows:
        if r.tuned is None or not _visibly_apart(r):
            continue
        figures, differ = _figures(r), r.differ or ()
        other = "" if r.same_hints else (
            "compiled at other hints (" + "; ".join(f"{n}: {_hints_text(t)}" for n, t in zip(names, r.tuned))
            + "), so each picks among other variants; ")
        every = "every hint" if r.same_hints else "the hints both compiled"
        if differ:
            h = differ[0]
            out.append(f"{r.label}: {figures}: {other}the compiles tuned different problems at {_at_hints(differ)}"
                       + "; ".join(f"{n}: {p}" for n, p in zip(names, _problems(*(t.get(h) for t in r.tuned)))) + ")")
        elif r.borrowed[0] != r.borrowed[1]:
            out.append(f"{r.label}: {figures}: {other}both compiles tuned the same problem at {every}, but not every "
                       "variant runs a choice of its own hint (Inductor's epilogue-fusion benchmark; "
                       "--fusion-per-hint): " + "; ".join(f"{n}: {_runs(b)}" for n, b in zip(names, r.borrowed)))
        elif r.retuned:
            h, entries = next(iter(r.retuned.items()))
            where = _at_hints(tuple(r.retuned))
            chose = "; ".join(f"{n}: " + ", ".join(f"{k}={c[h].get(k)}" for k in entries)
                              for n, c in zip(names, r.configs))
            out.append(f"{r.label}: {figures}: {other}both compiles tuned the same problem at {every}, and autotuning "
                       f"settled on another config at {where}{chose}): autotuning's difference between two compiles "
                       "(more compiles of each tell which figure is typical)")
        elif not r.same_hints:
            out.append(f"{r.label}: {figures}: {other}at the hints both compiled the same problem and config")
        elif all(r.configs) and r.configs[0].keys() == r.configs[1].keys():
            out.append(f"{r.label}: {figures}: both compiles tuned the same problem and settled on the same config at "
                       "every hint, so the same kernels timed apart between the two runs (another GPU, or a busy one)")
        else:
            out.append(f"{r.label}: {figures}: both compiles tuned the same problem at every hint, so this is "
                       "autotuning's difference between two compiles (more compiles of each tell which figure is typical)")
    matched = [r for r in rows if r.differ is not None]
    if (matched and len(matched) == len(rows) and all(r.same_hints for r in matched)
            and not any(r.differ or r.borrowed[0] != r.borrowed[1] for r in matched) and _visibly_apart(whole)):
        out.append(f"whole model: {_figures(whole)}: every site's problems were the same in both compiles, so this "
                   "is autotuning's difference between them")
    return out


def _at_hints(hints: tuple[int | None, ...]) -> str:
    """`hint 32 (` or `hints 16, 32 (at 16, `: where a clause about the first of them opens."""
    h = hints[0]
    if len(hints) > 1:
        return f"hints {', '.join(map(_hint_text, hints))} (at {_hint_text(h)}, "
    return f"{'the example size' if h is None else f'hint {h}'} ("


def _hint_text(h: int | None) -> str:
    return "the example size" if h is None else str(h)


def _hints_text(tuned: Mapping[int | None, Tuned]) -> str:
    return ", ".join(_hint_text(h) for h in sorted(tuned, key=_hint_order))


def _runs(borrowed: dict[int, int]) -> str:
    """`hint 4096 runs hint 64's choice`, or that every variant runs its own hint's."""
    if not borrowed:
        return "each variant runs a choice of its own hint"
    return ", ".join(f"hint {h} runs hint {at}'s choice" for h, at in sorted(borrowed.items()))


def _visibly_apart(r: Row) -> bool:
    a, b = r.sides
    return any(x and y and max(x, y) / min(x, y) >= VISIBLE for x, y in ((a.geomean, b.geomean), (a.worst, b.worst)))


def _figures(r: Row) -> str:
    a, b = r.sides
    text = f"{ratio(a.geomean)} against {ratio(b.geomean)} geomean" if a.geomean and b.geomean else ""
    if a.worst and b.worst:
        text += f"{', ' if text else ''}worst {ratio(a.worst)} against {ratio(b.worst)}"
    return text


def _problems(a: Tuned | None, b: Tuned | None) -> tuple[str, str]:
    """Two variants' tuned problems in a few words each: the output's rows from the key, and
    the kernel's own where they differ; the whole keys where the rows do not tell them apart."""
    def rows(t: Tuned | None) -> str:
        if t is None:
            return "no such variant"
        out = t.key[-1] if t.key else ()
        text = f"{out[-2]:,} rows" if len(out) >= 2 else f"key {format_key(t.key)}"
        return f"{text} on a kernel computing {t.kernel_rows:,}" if t.kernel_rows else text

    texts = rows(a), rows(b)
    if texts[0] == texts[1] and a is not None and b is not None:
        return f"key {format_key(a.key)}", f"key {format_key(b.key)}"
    return texts
