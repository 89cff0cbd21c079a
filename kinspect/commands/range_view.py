"""`kinspect explain S --range NAME=LO..HI [--shape OTHER=...]`: which variant runs along a
range of one size at every site, with the compiled hints and with every subset of them
(`kinspect.core.quality.pick_map`); from the compiled code alone, so a trace or a session
with nothing measured answers it. `--json`: {"range": TEXT, "fixed": {name: size},
"sites": [{"name", "maps": [{"hints", "spans": [{"lo", "hi", "variants"}]}]} or {"name", "error"}]}.
"""

from __future__ import annotations

import json

from rich.table import Table
from rich.text import Text

from kinspect.commands import terminal
from kinspect.commands.hints_view import print_hints, with_hints
from kinspect.core.dispatch.shapes import SymbolShape, parse_shape
from kinspect.core.errors import KinspectError, ShapeError
from kinspect.core.quality.pick_map import what_if_maps
from kinspect.core.quality.sweep_plan import parse_range
from kinspect.core.session.model import Session, Site


def print_ranges(session: Session, text: str, shape: str | None, site_name: str | None, as_json: bool) -> int:
    symbol, (lo, hi) = parse_range(text)
    fixed = _fixed(shape)
    session.resolve({**fixed, symbol: lo})  # an unknown name is said once, not per site
    sites = [session.site(site_name)] if site_name else session.sites
    found = [(site, _maps(session, site, symbol, lo, hi, fixed)) for site in sites]
    if as_json:
        print(json.dumps(with_hints({"range": text, "fixed": fixed, "sites": [
            {"name": site.name, "error": maps} if isinstance(maps, str) else
            {"name": site.name, "maps": [m.to_json() for m in maps]} for site, maps in found]}, session), indent=1))
        return 0
    console = terminal.table_console()
    print_hints(session, console)
    at = f" with {' '.join(f'{k}={v}' for k, v in fixed.items())}" if fixed else ""
    for site, maps in found:
        if isinstance(maps, str):
            console.print(Text(f"{site.name}: {maps}", style="yellow"))
            continue
        t = Table(title=Text(f"{site.name} ({site.op}) · {site.title}: which variant runs along {symbol}={lo}..{hi}{at}"),
                  caption=Text("first row: the compiled hints; then each subset of them, its variants as compiled "
                               "(a compile with fewer hints may autotune other kernels)"),
                  title_justify="left", caption_justify="left")
        t.add_column("hints")
        t.add_column("variant run: sizes")
        labels = {v.index: v.label for v in site.variants}
        for m in maps:
            t.add_row(Text(", ".join(map(str, m.hints))), Text(m.text(labels)))
        console.print(t)
    return 0


def _fixed(shape: str | None) -> dict[str, int]:
    if shape is None:
        return {}
    parsed = parse_shape(shape)
    if not isinstance(parsed, SymbolShape):
        raise KinspectError("with --range, --shape gives the other sizes by name (S=128), not a whole key")
    return dict(parsed.values)


def _maps(session: Session, site: Site, symbol: str, lo: int, hi: int, fixed: dict[str, int]) -> list | str:
    try:
        session.runtime_key(site, SymbolShape({**fixed, symbol: lo}))
    except ShapeError as e:
        return str(e)
    return what_if_maps(session, site, symbol, lo, hi, fixed)
