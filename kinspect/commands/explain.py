"""`kinspect explain`: the inspector's decisions, headless and scriptable.

Both forms start with the dispatch quality over the measured shapes (`--json`: a top-level
"quality" list, one object per measured site: `site`, `shapes`, `fastest_picked`,
`slower_shapes`, `geomean_regret`, `worst_regret`, `worst_sizes` ({symbol: size}),
`worst_key`, `workload_lost`, `workload_calls`, `workload_source`).

Without `--shape` it lists the session's symbols and sites (each with its call sites)
and the what-if table ("what_if": heuristic, hints, regret figures, best first). With
`--shape --json` it prints `{"shape": TEXT, "quality": [...], "sites": [SITE, ...]}`, one
SITE per site the shape was asked of:

    {"name", "graph", "op", "runtime_key": [[int]], "heuristic",
     "variants": [{"index", "hint", "key", "kernel_name", "distance", "terms",
                   "mismatch"?, "median_us"?, "p20_us"?, "p80_us"?}],
     "chosen", "tied", "reason", "alternatives": {heuristic: index},
     "method"?, "fastest"?, "regret"?, "slower"?}

Times, fastest and regret follow `kinspect.core.session.timings` (one method per key, CUDA
events before CUPTI; "slower": the chosen variant is slower than the fastest beyond
noise).

or `{"name", "graph", "op", "error"}` for a site the shape does not determine (a symbol
it needs is missing). Keys marked ? appear only when they apply.

Given a torchrun job's rank sessions (several files, or their folder) it shows the ranks
side by side (`kinspect.core.ranks.merged`); `--json` prints `{"ranks": [{"rank", "gpu",
"local_rank", "source"}], "world_size", "missing_ranks", "steps": [{"step", "slowest",
"waits_us": {rank: us}, "ranks": [{"rank", "sizes", "gpu_us", "sites": {site: {"picks",
"keys", "calls", "gpu_us"}}}]}], "divergences": [{"site", "variants", "groups": [{"ranks",
"kernels"}]}], "stragglers": [{"step", "site", "rank", "picks", "sizes", "step_us",
"cost_us", "share"}], "findings": [{"kind", "severity", "site", "message"}]}`.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from rich.table import Table
from rich.text import Text

from kinspect.commands import recording
from kinspect.commands.hints_view import print_hints, with_hints
from kinspect.commands.options import name_flag, renames
from kinspect.commands.quality_view import print_paste, print_what_if, quality_table
from kinspect.commands.range_view import print_ranges
from kinspect.commands.rank_sessions import is_merged, load_merged
from kinspect.commands.rank_view import print_ranks
from kinspect.commands import terminal
from kinspect.core.printing import say
from kinspect.core.quality.variance import regret_spread
from kinspect.commands.model_output import model_output
from kinspect.commands.stderr_log import log_path_for
from kinspect.core.dispatch.heuristics import distance_text
from kinspect.core.dispatch.operands import tensor_texts
from kinspect.core.errors import KinspectError
from kinspect.core.numbers import US, ratio as fmt_ratio, spread, us, us_text
from kinspect.core.session.compile_changes import notes, tuned_lines
from kinspect.core.cut import KERNEL_LEAST, cut_middle
from kinspect.core.quality.estimate import basis_text, nearest_text
from kinspect.core.quality.explain import ShapeCost, SiteExplanation, explain, overview_json, shape_cost, shape_json
from kinspect.core.quality.finding_groups import SHOWN_GROUPS, SHOWN_MEMBERS, group_findings, more_text
from kinspect.core.quality.measured_shapes import shapes_lines
from kinspect.core.quality.overview import ModelQuality, model_quality
from kinspect.core.session.call_sites import LayerGroup, group_layers
from kinspect.core.session.runtime import Baseline
from kinspect.core.session.model import Session
from kinspect.core.store import load, renamed
from kinspect.core.trace.files import is_output_code
from kinspect.core.dispatch.shapes import SymbolShape, format_key, parse_shape, sizes_text
from kinspect.core.session.timings import method_title
from kinspect.core.quality.whatif import what_ifs

if TYPE_CHECKING:
    from kinspect.inductor import ModelFile


def add_args(e: argparse.ArgumentParser) -> None:
    e.add_argument("session", nargs="+", help="a session or model.py; several rank sessions or a folder of them merge")
    e.add_argument("--shape", help='runtime shape: "B=1000", or with --site the whole key it sees, '
                        '"(4096,),(1000,1024),(4096,1024),(1000,4096)" for samples/mlp.py\'s first site')
    e.add_argument("--site", help="one site only: its decision at --shape (needed with a full key), else its quality, "
                                  "measured shapes and findings")
    e.add_argument("--range", metavar="NAME=LO..HI",
                   help="which variant runs along a range of one size, at each site, with the compiled hints and every "
                        "subset of them (from the compiled code: no measurement needed); --shape gives the other sizes")
    from kinspect.core.dispatch.heuristics import HEURISTICS

    e.add_argument("--heuristic", default="inductor", metavar="NAME",
                   help="distance to decide by: " + ", ".join(f"{h.name} ({h.title})" for h in HEURISTICS.values())
                   + "; default: inductor")
    e.add_argument("--json", action="store_true", help="print JSON instead of tables")
    e.add_argument("--inductor-names", action="store_true",
                   help="shapes and tensors by Inductor's names (the whole key, arg3_1 (s33, 1024)), "
                        "not yours (B=1000, x (B, 1024))")
    e.add_argument("--measure", action="store_true", help="with model.py: time every variant at --shape on the GPU")
    e.add_argument("--hints", help="with model.py: multi_kernel_hints, comma-separated")
    e.add_argument("--l2-flush", action="store_true", help="with --measure: flush L2 between launches (cold-cache timings)")
    e.add_argument("--baselines", metavar="KINDS",
                   help="with model.py: whole-model baselines at --shape, comma-separated from eager,static,exact_hint,hinted "
                        "(each compiled kind costs a compile)")
    name_flag(e)


def run(args: argparse.Namespace) -> int:
    paths, shape, site, heuristic, as_json = list(args.session), args.shape, args.site, args.heuristic, args.json
    measure, hints, l2_flush, baselines = args.measure, args.hints, args.l2_flush, args.baselines
    inductor_names, names = args.inductor_names, renames(args)
    if is_merged(paths):
        return _ranks(paths, shape, measure or bool(baselines) or bool(hints), as_json)
    path = paths[0]
    if path.endswith(".py") and not is_output_code(path):
        session = renamed(_model(path, shape, site, measure, hints, l2_flush, baselines), names)
    elif measure or baselines:
        raise KinspectError("--measure and --baselines run the model: give model.py, not a recorded session")
    else:
        session = load(path, names)
    if args.range:
        return print_ranges(session, args.range, shape, site, as_json)
    quality = _quality(session, site, heuristic)
    if shape is None:
        results = what_ifs(session)
        overview = overview_json(session, quality, results, site)
        if as_json:
            print(strict_json(with_hints(overview, session)))
        else:
            console = terminal.table_console()
            print_hints(session, console)
            if quality.shapes:
                console.print(quality_table(quality, regret_spread(session), inductor_names, heuristic, site is None))
            _print_overview(session, console, inductor_names, site)
            if results:
                print_what_if(console, results, session)
        return 0
    parsed = parse_shape(shape)
    results = explain(session, parsed, site, heuristic)
    baselines = _baselines_at(session, parsed)
    if as_json:
        print(strict_json(with_hints(shape_json(shape, quality, results, baselines), session)))
    else:
        console = terminal.table_console()
        print_hints(session, console)
        if quality.shapes:
            console.print(quality_table(quality, regret_spread(session), inductor_names, heuristic, site is None))
        for r in results:
            console.print(_site_table(r, console.width >= 150, _shape_named(parsed, r, inductor_names), inductor_names))
        if baselines:
            console.print(_baseline_table(baselines))
        cost = shape_cost(results)
        if cost is not None:
            console.print(Text(_cost_line(shape, cost)))
        print_paste(console, what_ifs(session), session)
    return 0


def strict_json(value: Any) -> str:
    """`--json`'s text: JSON as every parser reads it, a figure too large or undefined to
    be a JSON number (×inf regret, 1e308 µs over 1e-300) written as null."""
    return json.dumps(_finite(value), indent=1, allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _quality(session: Session, site: str | None, heuristic: str) -> ModelQuality:
    """The quality over the measured shapes decided by `heuristic`, of `site` alone where one
    is named: both refused in one line where the session has no such thing."""
    from kinspect.core.dispatch.heuristics import HEURISTICS

    if heuristic not in HEURISTICS:
        raise KinspectError(f"unknown heuristic {heuristic!r}; known: {', '.join(HEURISTICS)}")
    if site is not None:
        session.site(site)
    quality = model_quality(session, heuristic)
    return quality if site is None else ModelQuality(tuple(q for q in quality.sites if q.site == site))


def _cost_line(shape: str, cost: ShapeCost) -> str:
    """The answer to "how much slower at my shape": the picks against the fastest variants."""
    sites = cost.measured + cost.estimated
    figures = ("measured" if not cost.estimated else
               "estimated" if not cost.measured else f"measured at {cost.measured} sites, estimated at {cost.estimated}")
    mark = "~" if cost.estimated else ""
    out = (f"at {shape}, over {sites} site{'s' if sites != 1 else ''} (each once per call site, {figures}): "
           f"Inductor's picks {mark}{us_text(cost.picked_us)} per model call, the fastest variants "
           f"{mark}{us_text(cost.fastest_us)}: {mark}{fmt_ratio(cost.ratio)}")
    if cost.missing:
        out += f"; left out, with no figure: {', '.join(cost.missing)}"
    return out


def _ranks(paths: list[str], shape: str | None, runs: bool, as_json: bool) -> int:
    """Several rank sessions of a torchrun job (or their folder), side by side."""
    if runs:
        raise KinspectError("--measure, --baselines and --hints run a model: give model.py, not rank sessions")
    if shape is not None:
        raise KinspectError("--shape explains one session: give one rank's file, not several")
    merged = load_merged(paths)
    if as_json:
        print(strict_json(merged.to_json()))
    else:
        print_ranks(merged, terminal.table_console())
    return 0


def _baselines_at(session: Session, shape: object) -> list[Baseline]:
    """Baselines recorded at the typed sizes (symbol shapes only: baselines are per model sizes)."""
    if not isinstance(shape, SymbolShape):
        return []
    return session.baselines_at(shape.values)


def _baseline_table(baselines: list[Baseline]) -> Table:
    t = Table(title=Text("whole model, compiled afresh per kind (\"this compile\": the one inspected)"),
              title_justify="left")
    for col in ("kind", "sizes", f"GPU {US} (CUPTI)", f"wall {US} (events)", "error"):
        t.add_column(col, justify="right" if US in col else "left")
    for b in baselines:
        t.add_row(
            Text(b.label), Text(sizes_text(b.sizes)),
            "" if b.gpu_us is None else us(b.gpu_us), "" if b.wall_us is None else us(b.wall_us),
            Text(b.error or "", style="red"),
        )
    return t


def _model(path: str, shape: str | None, site: str | None, measure: bool, hints: str | None,
           l2_flush: bool, baselines: str | None) -> Session:
    """The session to explain for model.py: live on a GPU; elsewhere its recording, with
    a note on stderr (stdout stays the explanation, JSON included)."""
    from kinspect.inductor import check_model_file, missing_imports

    model = Path(path)
    cuda = recording.cuda_available()
    found = None if cuda else recording.existing_recording(model)
    if cuda or found is None or not missing_imports(model):  # a recording needs none of the model's libraries
        with model_output(model.name):
            mf = check_model_file(path)  # its problems first, on any machine
        if cuda:
            return _live(mf, shape, site, measure, hints, l2_flush, baselines)
    running = [flag for flag, given in (("--measure", measure), ("--baselines", baselines), ("--hints", hints)) if given]
    if running:
        raise KinspectError(recording.no_cuda(model, f"{running[0]} (it runs the model)", "kinspect explain"))
    if found is None:
        raise KinspectError(recording.no_cuda(model, "explaining a model live"))
    session = recording.recording_of(model, load(found), found)
    env = session.environment
    missing = recording.missing_libraries(model)
    say(f"kinspect: no CUDA GPU here: explaining the recording {found} "
        f"(made on {env.gpu or 'an unknown GPU'}, {env.created})" + (f"; {missing}" if missing else ""), err=True)
    return session


def _live(mf: ModelFile, shape: str | None, site: str | None, measure: bool, hints: str | None,
          l2_flush: bool, baselines: str | None) -> Session:
    """Compile model.py on the GPU, run (and measure) the shape, and explain that session."""
    from kinspect.commands.options import parse_baselines, parse_hints
    from kinspect.core.printing import progress
    from kinspect.inductor import LivePipeline, Options

    kinds = parse_baselines(baselines)
    if kinds and shape is None:
        raise KinspectError("--baselines needs --shape")
    sizes = None if shape is None else _model_sizes(mf, shape)  # checked before minutes of compiling
    options = Options(progress=progress, failure_log=log_path_for(mf.path))
    if hints:
        options.hints = parse_hints(hints)
    with LivePipeline(mf, options) as live:
        live.compile()
        if sizes is not None:
            live.time_at(sizes, measure=measure, kinds=kinds, site=site, l2_flush=l2_flush)
        return live.session


def _model_sizes(mf: ModelFile, shape: str) -> dict[str, int]:
    parsed = parse_shape(shape)
    if not isinstance(parsed, SymbolShape):
        raise KinspectError("with model.py, --shape takes symbol values like B=1000")
    mf.check_names(parsed.values, "--shape")
    return dict(parsed.values)


def _shape_named(parsed: object, r: SiteExplanation, inductor_names: bool) -> str | None:
    """The shape a site's table is at, as the user gave it (`B=157`); None for the key."""
    if inductor_names or r.decision is None or not isinstance(parsed, SymbolShape):
        return None
    return sizes_text(parsed.values)


def _print_overview(session: Session, console: Console, inductor_names: bool = False, only: str | None = None) -> None:
    """The recording, its sizes and its sites (`only`: that site), where they were
    measured, and the findings."""
    env = session.environment
    console.print(Text(f"recorded {env.created} on {env.gpu or 'no GPU'} with torch {env.torch}"))
    for _, note in notes(env.config):
        console.print(Text(note, style="yellow"))
    for line in tuned_lines(session.graphs, {} if inductor_names else session.aliases):
        console.print(Text(line, style="yellow"))
    if session.truncated:
        console.print(Text(f"truncated: {session.truncated}", style="yellow"))
    sym = Table(title="symbols")
    for col in ("name", "inductor", "input", "dim", "example"):
        sym.add_column(col)
    for s in session.symbols:
        sym.add_row(Text(s.alias or ""), Text(s.name), Text(s.input or ""), "" if s.dim is None else str(s.dim),
                    "" if s.example is None else str(s.example))
    console.print(sym)
    room = max(KERNEL_LEAST, console.width // 3 - 6)  # the kernels' column: a third of the terminal
    sites = Table(title="sites")
    for col in ("site", "op", "called from", "tensors"):
        sites.add_column(col)
    hints = max((len(str(v.hint)) for s in session.sites for v in s.variants), default=4)
    names = max((len(v.kernel_name) for s in session.sites for v in s.variants), default=0)
    sites.add_column("variants (hint: kernel)", no_wrap=True, min_width=hints + 2 + min(room, names))
    for s in session.sites:
        if only is not None and s.name != only:
            continue
        sites.add_row(
            Text(s.name), Text(s.op), Text("\n".join(_call_text(g) for g in group_layers(s.call_sites))),
            Text("\n".join(tensor_texts(s.op, s.tensors, None if inductor_names else session.aliases))),
            Text("\n".join(f"{v.hint}: {cut_middle(v.kernel_name, room)}" for v in s.variants)),
        )
    console.print(sites)
    lines = shapes_lines(session, only)
    if lines:
        console.print(Text("measured shapes (explain --shape at any other shows the nearest and estimates)", style="bold"))
        for line in lines:
            console.print(Text("  " + line))
    _print_findings(session, console, only)


def _print_findings(session: Session, console: Console, only: str | None = None) -> None:
    """The findings by kind, worst first, each group's members under it (`only`: that site's)."""
    findings = [f for f in session.findings if only is None or f.site == only]
    groups = group_findings(findings)
    if not groups:
        return
    console.print(Text(f"findings ({len(findings)}{f' at {only}' if only else ''}, by kind, worst first)", style="bold"))
    for g in groups[:SHOWN_GROUPS]:
        console.print(Text(f"  {g.title} ({g.severity})"))
        shared = g.shared
        if shared is not None:
            console.print(Text(f"    {', '.join(g.sites) or 'each'}: {shared}"))
        for f in g.members[:SHOWN_MEMBERS]:
            own = g.own(f)
            where = f.site or f.graph or ""
            if own or shared is None:
                console.print(Text(f"    {where}{': ' if where else ''}{own}"))
        more = more_text(len(g.members) - SHOWN_MEMBERS, f"{g.kind} findings")
        if more:
            console.print(Text(f"    {more}", style="dim"))
    more = more_text(len(groups) - SHOWN_GROUPS, "kinds of finding")
    if more:
        console.print(Text(f"  {more}", style="dim"))



def _call_text(g: LayerGroup) -> str:
    """`h.{0..11}.attn.c_attn (Conv1D) modeling_gpt2.py:312 · 12 callers`: the user's names
    for the call sites, repeated layers on one line (a count, not `×12`, which reads as a regret)."""
    c = g.first
    parts = [g.label]
    if c.module_class and c.module_class != c.label and not g.label.endswith(f"({c.module_class})"):
        parts.append(f"({c.module_class})")
    if c.where:
        parts.append(c.where)
    if len(g.members) > 1:
        parts.append(f"· {len(g.members)} callers")
    return " ".join(parts)


def _site_table(r: SiteExplanation, wide: bool, shape: str | None = None, inductor_names: bool = False) -> Table | Text:
    """One site's decision at `shape` (else at its runtime key); the hint keys only on wide
    terminals (they repeat the hint)."""
    if r.decision is None:
        return Text(f"{r.site.name}: {r.error}", style="yellow")
    d = r.decision
    mismatches = [f"! key mismatch, v{x.index}: {x.mismatch}" for x in d.scores if x.mismatch]
    caption = "\n".join(filter(None, (d.reason(r.site.labels()), _timing_line(r, inductor_names), *mismatches)))
    called = f" · {r.site.title}" if r.site.call_sites else ""
    t = Table(title=Text(f"{r.site.name} ({r.site.op}){called} at {shape or format_key(d.runtime_key)}"),
              caption=Text(caption), title_justify="left", caption_justify="left")
    cols = ["", "v", "hint", "distance", f"median {US}", f"p20–p80 {US}", "× fastest", "kernel"]
    if wide:
        cols.insert(3, "key")
    for col in cols:
        t.add_column(col, no_wrap=col != "kernel", justify="right" if col in ("distance", f"median {US}", "× fastest") else "left")
    timings, est = r.timings, r.estimate
    for v, s in zip(r.site.variants, d.scores):
        mark = "▶" if v.index == d.chosen else ("=" if v.index in d.tied else "")
        m = (r.measured or {}).get(v.index)
        timed = timings is not None and timings.median(v.index) is not None
        ratio = timings.regret(v.index) if timings is not None else None
        if timed and m is not None and m.median_us is not None:
            median: str | Text = us(m.median_us)
        elif est is not None and est.median(v.index) is not None:
            median, ratio = Text("~" + us(est.median(v.index)), style="cyan"), est.regret(v.index)
        else:
            median = Text(m.error or "", style="red") if m else ""
        row = [
            mark, str(v.index), str(v.hint),
            distance_text(s.distance, d.heuristic) + (" !" if s.mismatch else ""),
            median,
            spread(m.p20_us, m.p80_us) if timed and m is not None else "",
            "" if ratio is None else (Text("~" + fmt_ratio(ratio), style="cyan") if est is not None else fmt_ratio(ratio)),
            Text(v.kernel_name),
        ]
        if wide:
            row.insert(3, Text(format_key(v.key) if v.key else "none"))
        t.add_row(*row)
    return t


def _timing_line(r: SiteExplanation, inductor_names: bool = False) -> str:
    """Under the table: which method the times are, and the verdict of the noise rule."""
    t = r.timings
    if r.decision is None:
        return ""
    if t is None or t.fastest is None:
        return _estimate_lines(r, inductor_names)
    line = f"timed by {method_title(t.method)}; fastest {' = '.join(f'v{i}' for i in r.site.kernel_members(t.fastest))}"
    regret = r.regret
    if t.is_fastest(r.decision.chosen):
        return line + ": the chosen variant"
    if regret is None:
        return line + "; the chosen variant was not timed"
    verdict = "slower beyond noise" if r.slower else "within noise"
    return line + f"; the chosen v{r.decision.chosen} takes {fmt_ratio(regret)} ({verdict})"


def _estimate_lines(r: SiteExplanation, inductor_names: bool) -> str:
    """Under an unmeasured key's table: what the estimates are and the nearest measured keys."""
    est = r.estimate
    if est is None:
        return "not measured at this key, nor at any key laid out like it"
    assert r.decision is not None
    lines = ["not measured at this key; " + basis_text(est, r.site, inductor_names)]
    regret, fastest = est.regret(r.decision.chosen), est.fastest
    if regret is not None and fastest is not None:
        if r.site.kernels[fastest] == r.site.kernels[r.decision.chosen]:
            lines.append(f"estimated: the chosen v{r.decision.chosen} is the fastest")
        else:
            lines.append(f"estimated: the chosen v{r.decision.chosen} takes ~{fmt_ratio(regret)} as long as v{fastest}")
    lines.append("nearest measured: " + "; ".join(nearest_text(est, r.site, inductor_names)))
    return "\n".join(lines)
