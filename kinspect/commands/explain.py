"""`kinspect explain`: the inspector's decisions, headless and scriptable.

Without `--shape` it lists the session's symbols and sites. With `--shape --json` it
prints `{"shape": TEXT, "sites": [SITE, ...]}`, one SITE per site the shape was asked of:

    {"name", "graph", "op", "runtime_key": [[int]], "heuristic",
     "variants": [{"index", "hint", "key", "kernel_name", "distance", "terms",
                   "mismatch"?, "median_us"?, "p20_us"?, "p80_us"?}],
     "chosen", "tied", "reason", "alternatives": {heuristic: index},
     "fastest"?, "regret"?}

or `{"name", "graph", "op", "error"}` for a site the shape does not determine (a symbol
it needs is missing). Keys marked ? appear only when they apply.
"""

from __future__ import annotations

import json
import sys

from rich.console import Console
from rich.table import Table
from rich.text import Text

from kinspect.core.errors import KinspectError
from kinspect.core.explain import SiteExplanation, explain
from kinspect.core.session import Session
from kinspect.core.sessionio import load
from kinspect.core.shapes import SymbolShape, format_key, parse_shape


def run(path: str, shape: str | None, site: str | None, heuristic: str, as_json: bool,
        measure: bool = False, hints: str | None = None) -> int:
    if path.endswith(".py"):
        session = _live(path, shape, site, measure, hints)
    elif measure:
        raise KinspectError("--measure runs the model: give model.py, not a recorded session")
    else:
        session = load(path)
    if shape is None:
        overview = _overview(session)
        if as_json:
            print(json.dumps(overview, indent=1))
        else:
            _print_overview(session)
        return 0
    results = explain(session, parse_shape(shape), site, heuristic)
    if as_json:
        print(json.dumps({"shape": shape, "sites": [r.to_json() for r in results]}, indent=1))
    else:
        console = Console(highlight=False)
        for r in results:
            console.print(_site_table(r))
    return 0


def _live(path: str, shape: str | None, site: str | None, measure: bool, hints: str | None) -> Session:
    """Compile model.py on the GPU, run (and measure) the shape, and explain that session."""
    from kinspect.commands.record import parse_hints, progress
    from kinspect.inductor.modelfile import load_model_file
    from kinspect.inductor.pipeline import LivePipeline, Options

    mf = load_model_file(path)
    options = Options(progress=progress)
    if hints:
        options.hints = parse_hints(hints)
    with LivePipeline(mf, options) as live:
        live.compile()
        if shape is not None:
            parsed = parse_shape(shape)
            if not isinstance(parsed, SymbolShape):
                raise KinspectError("with model.py, --shape takes symbol values like B=1000")
            unknown = sorted(set(parsed.values) - set(mf.names))
            if unknown:
                raise KinspectError(f"{mf.path.name}'s inputs() takes {', '.join(mf.names)}, not {unknown[0]}")
            if measure:
                live.measure(parsed.values, site)
            else:
                live.run_sizes(parsed.values)
        return live.session


def _overview(session: Session) -> dict:
    return {
        "environment": {"gpu": session.environment.gpu, "torch": session.environment.torch,
                        "created": session.environment.created},
        "truncated": session.truncated,
        "symbols": [
            {"name": s.name, "alias": s.alias, "input": s.input, "dim": s.dim, "example": s.example}
            for s in session.symbols
        ],
        "sites": [
            {
                "name": s.name, "graph": s.graph, "op": s.op,
                "tensors": [t.text() for t in s.tensors],
                "variants": [
                    {"index": v.index, "hint": v.hint,
                     "key": None if v.key is None else [list(t) for t in v.key],
                     "kernel_name": v.kernel_name}
                    for v in s.variants
                ],
                "findings": [f.message for f in session.findings if f.site == s.name],
            }
            for s in session.sites
        ],
    }


def _print_overview(session: Session) -> None:
    console = Console(highlight=False)
    env = session.environment
    console.print(Text(f"recorded {env.created} on {env.gpu or 'no GPU'} with torch {env.torch}"))
    if session.truncated:
        console.print(Text(f"truncated: {session.truncated}", style="yellow"))
    sym = Table(title="symbols")
    for col in ("name", "inductor", "input", "dim", "example"):
        sym.add_column(col)
    for s in session.symbols:
        sym.add_row(Text(s.alias or ""), Text(s.name), Text(s.input or ""), str(s.dim), str(s.example))
    console.print(sym)
    sites = Table(title="sites")
    for col in ("site", "op", "tensors", "variants (hint: kernel)"):
        sites.add_column(col)
    for s in session.sites:
        sites.add_row(
            Text(s.name), Text(s.op), Text(" ".join(t.text() for t in s.tensors)),
            Text("\n".join(f"{v.hint}: {v.kernel_name}" for v in s.variants)),
        )
    console.print(sites)


def _site_table(r: SiteExplanation) -> Table | Text:
    if r.decision is None:
        return Text(f"{r.site.name}: {r.error}", style="yellow")
    d = r.decision
    t = Table(title=Text(f"{r.site.name} ({r.site.op}) at {format_key(d.runtime_key)}"),
              caption=Text(d.reason(r.site.labels())))
    for col in ("", "variant", "hint", "key", "distance", "kernel", "median us"):
        t.add_column(col)
    for v, s in zip(r.site.variants, d.scores):
        mark = "▶" if v.index == d.chosen else ("=" if v.index in d.tied else "")
        m = (r.measured or {}).get(v.index)
        t.add_row(
            mark, str(v.index), str(v.hint), Text(format_key(v.key) if v.key else "none"),
            f"{s.distance:.4f}" + (" !" if s.mismatch else ""), Text(v.kernel_name),
            "" if m is None or m.median_us is None else f"{m.median_us:.1f}",
        )
    return t
