"""How core facts read on screen: Rich `Text` built from session data, never markup.

Session strings come from files anyone can write, so they only ever enter a `Text` as
plain text, after `literal` has made control characters visible: a kernel named
`[bold]x[/bold]` or a source holding an escape sequence shows exactly those characters
and cannot restyle or drive the terminal. Nothing here imports textual; the widgets
only place what these functions build.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence

from rich.cells import cell_len
from rich.text import Text

from kinspect.core.dispatch.heuristics import distance_text
from kinspect.core.dispatch.decision import Decision
from kinspect.core.errors import ShapeError
from kinspect.core.quality.explain import SiteExplanation
from kinspect.core.quality.findings import emitted_choice
from kinspect.core.dispatch.operands import operand_names
from kinspect.core.session.model import Baseline, CallSite, Finding, Measurement, Session, Site, Variant
from kinspect.core.dispatch.shapes import FullKey, Key, ParsedShape, format_key
from kinspect.core.dispatch.symbolic import SizeOverflow, TensorSpec
from kinspect.core.session.timings import KeyTimings, method_title
from kinspect.core.quality.variance import CompileTimes, regrets_at

from kinspect.tui.observed import Observed
from kinspect.tui.text import literal, plain

CHOSEN = "▶"
TIED = "="
MISMATCH = "!"


def column_widths(labels: Sequence[str], rows: Sequence[Sequence[Text]]) -> list[int]:
    """Each column's width: its widest cell or label, so tables never wait to measure."""
    widths = [cell_len(label) for label in labels]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], cell.cell_len)
    return widths


def aligned_row(cells: Sequence[Text], widths: Sequence[int]) -> Text:
    """Cells padded to their column widths in one line, two spaces apart: what a
    DataTable with those columns draws, as one cell (see VariantsTable for why). The
    padding carries no style, as a DataTable's does not."""
    out = Text()
    for i, (cell, width) in enumerate(zip(cells, widths)):
        out.append_text(cell)
        pad = width - cell.cell_len + (2 if i < len(widths) - 1 else 0)
        if pad > 0:
            out.append(" " * pad)
    return out


# ---------------------------------------------------------------- variants table


def variant_columns(show_terms: bool) -> list[str]:
    cols = ["", "v", "hint", "distance"]
    if show_terms:
        cols.append("terms (tensor[dim] distance)")
    return cols + ["median µs", "p20–p80", "vs fastest", "peak", "kernel", "same as", "key"]


def identical_to(site: Site) -> dict[int, int]:
    """Each variant that runs an earlier one's kernel (same source and config), mapped to it."""
    return {i: k for i, k in enumerate(site.kernels) if k != i}


def tensor_names(site: Site, specs: Sequence[TensorSpec], inductor_names: bool) -> list[str]:
    """The user's name for each tensor (`x`, `weight`, `out`), or Inductor's on demand."""
    return [t.name for t in specs] if inductor_names else operand_names(site.op, specs)


def term_labels(site: Site, inductor_names: bool = False) -> list[list[str]]:
    specs = site.runtime_tensors if site.runtime_tensors is not None else site.tensors
    names = tensor_names(site, specs, inductor_names)
    return [[f"{literal(n)}[{d}]" for d in range(len(t.sizes))] for n, t in zip(names, specs)]


def _terms_text(terms: tuple[tuple[float, ...], ...], labels: list[list[str]]) -> Text:
    parts = []
    for ti, tensor in enumerate(terms):
        for di, term in enumerate(tensor):
            if term:
                name = labels[ti][di] if ti < len(labels) and di < len(labels[ti]) else f"t{ti}[{di}]"
                parts.append(f"{name} {term:.3g}")
    return Text(" ".join(parts) if parts else "all 0", style="" if parts else "dim")


def _spread(m: Measurement) -> str:
    if m.p20_us is None or m.p80_us is None:
        return ""
    return f"{m.p20_us:.1f}–{m.p80_us:.1f}"


def variant_rows(
    expl: SiteExplanation, peak_tflops: float | None, show_terms: bool, inductor_names: bool = False
) -> list[list[Text]]:
    """One row per variant, cells in `variant_columns` order.

    Without a decision (the shape does not apply to this site) the rows still show each
    variant's hint, kernel and key, with the decision columns empty.
    """
    d = expl.decision
    site = expl.site
    measured = expl.measured or {}
    same = identical_to(site)
    labels = term_labels(site, inductor_names) if show_terms else []
    rows = []
    for v in site.variants:
        s = d.scores[v.index] if d is not None else None
        chosen = d is not None and v.index == d.chosen
        mark = CHOSEN if chosen else (TIED if d is not None and v.index in d.tied else "")
        if s is not None and s.mismatch:
            mark += MISMATCH
        if s is None:
            distance = Text("")
        elif v.key is None:
            distance = Text("no key", style="yellow")
        else:
            distance = Text(distance_text(s.distance, d.heuristic), style="yellow" if s.mismatch else "")
        row = [
            Text(mark, style="bold" if chosen else ""),
            Text(f"v{v.index}", style="bold" if chosen else ""),
            Text("—" if v.hint is None else str(v.hint)),
            distance,
        ]
        if show_terms:
            row.append(_terms_text(s.terms, labels) if s is not None else Text(""))
        m = measured.get(v.index)
        ratio = expl.timings.regret(v.index) if expl.timings is not None else None
        row += _measure_cells(m, ratio, expl.timings is not None and expl.timings.is_fastest(v.index), peak_tflops)
        row += [
            plain(v.kernel_name),
            Text(f"= v{same[v.index]}" if v.index in same else "", style="magenta"),
            Text("none" if v.key is None else format_key(v.key), style="dim"),
        ]
        rows.append(row)
    return rows


def _measure_cells(m: Measurement | None, ratio: float | None, fastest: bool, peak: float | None) -> list[Text]:
    """`ratio`: the variant's median over the fastest's (`KeyTimings.regret`)."""
    if m is None:
        return [Text(""), Text(""), Text(""), Text("")]
    if m.error is not None or m.median_us is None:
        return [Text("failed", style="red"), Text(""), Text(""), Text("")]
    if fastest:
        rel = Text("fastest", style="green")
    elif ratio is not None:
        rel = Text(f"×{ratio:.2f}")
    else:
        rel = Text("")
    share = Text(f"{100 * m.tflops / peak:.0f}%") if m.tflops is not None and peak else Text("")
    return [Text(f"{m.median_us:.1f}"), Text(_spread(m), style="dim"), rel, share]


# ---------------------------------------------------------------- decision summary


def decision_summary(
    expl: SiteExplanation, observed: Observed | None, can_measure: bool, baselines: Sequence[Baseline] = (),
    decided_by: CallSite | None = None, call_site: CallSite | None = None, measured_keys: int = 0,
    compiles: Sequence[CompileTimes] = (),
) -> Text:
    """Why the chosen variant, what it costs, what other rules would do, what was seen
    (and, for a multi-kernel shared by several call sites, which one's cache miss decided
    for all), and what the whole model costs at these sizes compiled other ways."""
    d = expl.decision
    assert d is not None and expl.runtime_key is not None
    site = expl.site
    labels = [literal(x) for x in site.labels()]
    out = Text()
    out.append(f"{CHOSEN} ", style="bold")
    out.append(d.reason(labels), style="bold")
    out.append("\n")
    _measured_line(out, expl, labels, can_measure, measured_keys, regrets_at(compiles, site, d.chosen, expl.runtime_key))
    _what_if_line(out, expl, d, labels)
    for s in d.scores:
        if s.mismatch:
            out.append(f"{MISMATCH} key mismatch, {labels[s.index]}: ", style="yellow")
            out.append(s.mismatch + "\n")
    if observed is not None:
        _observed_line(out, observed, labels)
    if len(site.call_sites) > 1:
        _shared_line(out, site, decided_by)
    if call_site is not None:
        out.append("call site: ", style="bold")
        out.append_text(call_site_text(call_site))
        out.append("\n")
    if baselines:
        _baselines_line(out, baselines)
    out.append(f"runtime key {format_key(expl.runtime_key)}", style="dim")
    return out


def _baselines_line(out: Text, baselines: Sequence[Baseline]) -> None:
    """GPU time per call of the whole model; the hinted compile's slowdown against the best."""
    out.append("whole model, GPU µs per call: ", style="bold")
    times = [b.gpu_us for b in baselines if b.gpu_us]
    best = min(times) if times else None
    for i, b in enumerate(baselines):
        if i:
            out.append(" · ")
        out.append(f"{literal(b.label).replace('_', ' ')} ")
        if b.gpu_us is None:
            out.append(f"failed ({literal(b.error or 'no time')})", style="red")
            continue
        out.append(f"{b.gpu_us:.1f}", style="green" if b.gpu_us == best else "")
        if b.kind == "hinted" and best is not None and b.gpu_us > best * 1.05:
            out.append(f" (×{b.gpu_us / best:.2f} the best)", style="red")
    out.append("\n")


def _measured_line(out: Text, expl: SiteExplanation, labels: list[str], can_measure: bool,
                   measured_keys: int, spread: list[float]) -> None:
    """The fastest and what the pick costs: one compile's figure, with its range over the
    compiles `kinspect compare --compiles` timed here, when there are several."""
    fastest = expl.fastest
    if fastest is None:
        tails = ["press m to measure"] if can_measure else []
        if measured_keys:
            tails.append(f"l lists the {measured_keys} measured key{'s' if measured_keys != 1 else ''}")
        out.append("no measurement at this key" + (": " + ", ".join(tails) if tails else "") + "\n", style="dim")
        return
    d = expl.decision
    assert d is not None and expl.measured is not None
    best = expl.measured[fastest]
    out.append(f"fastest: {labels[fastest]} at {best.median_us:.1f} µs")
    regret = expl.regret
    if expl.timings is not None and expl.timings.is_fastest(d.chosen):
        out.append(" — the chosen variant", style="green")
    elif expl.slower:
        out.append(f" — the chosen variant takes ×{regret:.2f} as long", style="red")
    elif regret is not None:
        out.append(f" — the chosen variant is within noise of it (×{regret:.2f})", style="yellow")
    if spread:
        out.append(f" (×{min(spread):.2f}–×{max(spread):.2f} over {len(spread)} compiles)")
    assert expl.timings is not None
    out.append(f" · timed by {method_title(expl.timings.method)}", style="dim")
    out.append("\n")


def _what_if_line(out: Text, expl: SiteExplanation, d: Decision, labels: list[str]) -> None:
    out.append(f"heuristic {d.heuristic}", style="bold")
    if d.heuristic != "inductor":
        out.append(" (what-if: Inductor decides by inductor)", style="yellow")
    if expl.alternatives:
        out.append(" · others pick: ")
        for i, (name, chosen) in enumerate(expl.alternatives.items()):
            if i:
                out.append(", ")
            out.append(f"{name} v{chosen}", style="" if chosen == d.chosen else "cyan")
    out.append("\n")


def _observed_line(out: Text, observed: Observed, labels: list[str]) -> None:
    picks = ", ".join(f"v{v}×{n}" for v, n in sorted(observed.picked.items()))
    out.append(f"recorded calls at this key: {observed.calls} (Inductor ran {picks})")
    if observed.mispredicted:
        out.append(f"; {observed.mispredicted} differ from kinspect's prediction", style="red")
    out.append("\n")


def _shared_line(out: Text, site: Site, decided_by: CallSite | None) -> None:
    n = len(site.call_sites)
    out.append(f"shared by {n} call sites: ", style="bold")
    if decided_by is None:
        out.append(f"the first call at a new shape decides the variant for all {n}\n")
        return
    every, others = ("both", "the other") if n == 2 else (f"all {n}", f"the other {n - 1}")
    out.append(f"{literal(decided_by.label)} met this shape first (a cache miss) and decided for {every}; "
               f"{others} hit the shared cache\n")


def measured_shapes(session: Session, site: Site, timings: Mapping[tuple[str, Key], KeyTimings]
                    ) -> list[tuple[str, Text]]:
    """Each key where `site` was measured, in size order: the shape to type there (the
    user's sizes when the key tells them all, else the whole key) and a line saying
    which variant is fastest and what Inductor's pick costs (one compile's figures)."""
    keys = sorted(k for name, k in timings if name == site.name)
    out = []
    for key in keys:
        t = timings[(site.name, key)]
        values = site.symbol_values(key)
        if site.symbols <= values.keys():
            shape = " ".join(f"{session.label_of(n)}={v}" for n, v in sorted(values.items()))
        else:
            shape = format_key(key)
        line = Text(literal(shape), style="bold")
        if t.fastest is None:
            line.append("  no variant timed", style="dim")
        else:
            picked = site.decide(key).chosen
            fastest = " = ".join(f"v{i}" for i in site.kernel_members(t.fastest))
            line.append(f"  fastest {fastest} · Inductor picks v{picked}")
            regret = t.regret(picked)
            if t.is_fastest(picked):
                line.append(" (the fastest)", style="green")
            elif regret is not None:
                line.append(f" ×{regret:.2f}", style="red" if t.slower(picked) else "yellow")
        out.append((shape, line))
    return out


# ---------------------------------------------------------------- source and diff


def config_text(site: Site, v: Variant, twin: int | None) -> Text:
    out = Text()
    out.append(literal(v.label), style="bold")
    out.append("  ")
    out.append(literal(v.kernel_name))
    if v.source_hash:
        out.append(f"  sha {literal(v.source_hash)}", style="dim")
    if twin is not None:
        out.append(f"  identical to v{twin}", style="magenta")
    if v.config:
        out.append("\n")
        out.append(" ".join(f"{literal(str(k))}={literal(str(val))}" for k, val in v.config.items()))
    _choice_line(out, site, v)
    if v.source_path:
        out.append("\n")
        out.append(literal(v.source_path), style="dim")
    return out


def _choice_line(out: Text, site: Site, v: Variant) -> None:
    """Which autotune choice the kernel was generated from, and whether it won at its hint."""
    c = emitted_choice(site, v)
    if c is None:
        if v.winner:
            out.append("\nautotune winner at this hint: ", style="dim")
            out.append(literal(v.winner))
        return
    out.append("\nruns autotune choice ", style="dim")
    out.append(literal(c.name))
    if c.tuned_at is not None and c.tuned_at != v.hint:
        out.append(f" (from the hint-{c.tuned_at} table)")
    winner = literal(v.winner or "")
    if c.name == v.winner:
        out.append(" — this hint's autotune winner", style="green")
    elif c.is_winner:
        out.append(f" — the same config as this hint's autotune winner {winner}", style="green")
    else:
        out.append(f" — not this hint's autotune winner {winner}", style="yellow")
        if c.tuned_at == v.hint and c.row is not None and c.winner is not None and c.row.time_us and c.winner.time_us:
            out.append(f" ({c.row.time_us:.1f} µs against {c.winner.time_us:.1f} µs)", style="yellow")


def variant_diff(a: Variant, b: Variant) -> tuple[str, str | None]:
    """The unified diff of two sources, and why it is empty when it is."""
    if a.index == b.index:
        return "", f"{a.label} compared with itself"
    if (a.source_hash and a.source_hash == b.source_hash) or (a.source and a.source == b.source):
        return "", f"{a.label} and {b.label} are identical: same generated source"
    if not a.source or not b.source:
        return "", "no source recorded for " + (a.label if not a.source else b.label)
    lines = difflib.unified_diff(
        literal(a.source).splitlines(keepends=True),
        literal(b.source).splitlines(keepends=True),
        fromfile=f"{a.label} {literal(a.kernel_name)}",
        tofile=f"{b.label} {literal(b.kernel_name)}",
    )
    return "".join(lines), None


# ---------------------------------------------------------------- symbolic view


SYMBOLIC_LEGEND = (
    "Each hint column holds the size Inductor put in that variant's key (and tuned "
    "for); (true N) marks where the size expression is really N at that hint. "
    "i: Inductor's names (s33, arg3_1) or yours (B, x)."
)


def symbolic_columns(site: Site) -> list[str]:
    cols = ["tensor", "dim", "size"]
    cols += [f"v{v.index} @{v.hint}" for v in site.variants if v.hint is not None]
    return cols + ["runtime"]


def runtime_env(session: Session, shape: ParsedShape | None) -> dict[str, int] | None:
    if shape is None or isinstance(shape, FullKey):
        return None
    try:
        return session.resolve(shape.values)
    except ShapeError:
        return None


def symbolic_rows(site: Site, env: Mapping[str, int] | None, key: Key | None,
                  aliases: Mapping[str, str] | None = None) -> list[list[Text]]:
    """Per tensor dim: the expression, the key value and true value at each hint, and now.

    A hint cell reads `64` when the key holds the expression's true value and
    `64 (true 128)` when Inductor keyed (and benchmarked) a size the expression never
    takes at that hint. With `aliases` (Inductor's symbol names to the user's) sizes and
    tensors read by the user's names; without, by Inductor's.
    """
    names = tensor_names(site, site.tensors, aliases is None)
    rows = []
    hinted = [v for v in site.variants if v.hint is not None]
    use_key = key is not None and site.runtime_tensors is None and len(key) == len(site.tensors)
    for ti, t in enumerate(site.tensors):
        at = [t.at_hint(v.hint) for v in hinted]  # type: ignore[arg-type]
        for di, expr in enumerate(t.sizes):
            text = expr.text if aliases is None else expr.text_with(aliases)
            row = [plain(names[ti]) if di == 0 else Text(""), Text(str(di)), plain(text)]
            for dims in at:
                dim = dims[di]
                if dim.differs:
                    row.append(Text(f"{dim.key_value} (true {dim.true_text})", style="bold red"))
                else:
                    row.append(Text(str(dim.key_value), style="dim" if expr.is_constant else ""))
            row.append(_runtime_cell(t, di, env, key[ti] if use_key else None))
            rows.append(row)
    return rows


def _runtime_cell(t: TensorSpec, di: int, env: Mapping[str, int] | None, shape: Sequence[int] | None) -> Text:
    if shape is not None:
        return Text(str(shape[di]) if di < len(shape) else "?")
    if env is None:
        return Text("?", style="dim")
    try:
        return Text(str(t.sizes[di].evaluate(env)), style="bold")
    except SizeOverflow:
        return Text("> 2**62", style="bold red")
    except ShapeError:
        return Text("?", style="dim")


# ---------------------------------------------------------------- sites and findings


def site_prompt(site: Site, findings: int, calls: int, worst: float | None = None) -> Text:
    """Two lines: the name, marked `!` when it has findings, and its worst regret where it
    was measured (red beyond noise); its op, variants and calls (and how many places call
    it, when several share it)."""
    out = Text()
    out.append("! " if findings else "  ", style="bold yellow")
    out.append(literal(site.name))
    if worst is not None:
        out.append(f" ×{worst:.2f}", style="bold red" if worst > 1.0 else "green")
    detail = f"{literal(site.op)} · {len(site.variants)}v"
    if len(site.call_sites) > 1:
        detail += f" · {len(site.call_sites)} callers"
    if calls:
        detail += f" · {calls} calls"
    out.append("\n  " + detail, style="dim")
    return out


def call_site_prompt(call: CallSite, calls: int) -> Text:
    """One line under its site: the user's module path (or Inductor's buffer), its calls."""
    out = Text("  └ ", style="dim")
    out.append(literal(call.label))
    if calls:
        out.append(f" {calls}", style="dim")
    return out


def call_site_text(call: CallSite) -> Text:
    """Where a call site is in the user's code and in the wrapper, for the summary."""
    out = Text()
    out.append(literal(call.label), style="bold")
    if call.module_class:
        out.append(f" ({literal(call.module_class)})")
    if call.where:
        out.append(f" · {literal(call.where)}")
    if call.code:
        out.append(f"  {literal(call.code)}", style="dim")
    if call.line is not None:
        out.append(f" · wrapper line {call.line}", style="dim")
    return out


SEVERITY_STYLE = {"info": "cyan", "warning": "yellow", "error": "bold red"}


def finding_prompt(f: Finding) -> Text:
    out = Text()
    out.append(f"{f.severity:<7} ", style=SEVERITY_STYLE.get(f.severity, ""))
    where = f.site or f.graph
    if where:
        out.append(literal(where), style="bold")
        if f.variants:
            out.append(" " + ",".join(f"v{i}" for i in f.variants))
        out.append(": ")
    out.append(literal(f.message))
    return out
