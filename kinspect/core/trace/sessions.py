"""A TORCH_TRACE log (or a saved Inductor output-code module) as a session.

The session holds what the compiled code says, as a recording would hold it: graphs with
their output code, sites by the model's module paths, variants with source and config,
hint keys, symbolic sizes named by the inputs they came from. It holds no dispatch
events and no measurements (nothing ran under kinspect), and says so: its
`environment.config` names the trace (`stated`), which the banner and explain read.

Graphs are numbered in the order their code was logged, across compiles, and each name
carries its compile's id (`graph_1 [1/1] (inference)`), so recompiles and several models
in one log stay apart. Symbols are per compile: two compiles that give one name to sizes
from different sources keep both, the later renamed (`s27_1`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from kinspect.core.dispatch.symbolic import SYMBOL_NAME, TensorSpec
from kinspect.core.inductor_code.sizes import WrapperSizes
from kinspect.core.session.model import Environment, Finding, Graph, ModelInfo, Session, Site, SymbolInfo
from kinspect.core.trace.framing import Reading
from kinspect.core.trace.graphs import aot_id, no_site_reason, one_line, read_graph
from kinspect.core.trace.log import Compile, OutputCode, TraceLog, iso_time
from kinspect.core.trace.stated import COMPILES_KEY, TRACE_KEY

FINDING = "trace"
"""The kind of the findings that say what reading the trace met."""

_SIZE_SOURCE = re.compile(r"^.*\['(?P<name>[A-Za-z_][A-Za-z0-9_]*)'\](?:\[(?P<pos>\d+)\])?\.size\(\)\[(?P<dim>\d+)\]$")
"""A size's source: the input it came from (`L['kwargs']['input_ids']`, `L['args'][0]`) and its dim."""
_DEVICE = re.compile(r"DeviceProperties\(type='(?P<type>\w+)', index=\d+, multi_processor_count=(?P<sms>\d+), "
                     r"cc=(?P<cc>\d+)")


def session_from_log(log: TraceLog, source: str, name: str) -> Session:
    """The session a log's compiles make; `source` is the log's file name, `name` what the
    session calls the program (the trace folder's name)."""
    graphs: list[Graph] = []
    sites: list[Site] = []
    symbols: list[SymbolInfo] = []
    notes: list[str] = []
    taken: dict[str, tuple[str, ...]] = {}
    compiled: list[tuple[Compile, list[Graph]]] = []
    forwards: dict[str, list[str]] = {}
    stated_hints = _hints(log.compiles)  # a compile's own, else the first any states (Dynamo's frame states them)
    for c in log.compiles:
        renames = _symbols(c, taken, symbols)
        own: list[Graph] = []
        pieces = iter(c.pieces or [c.inputs])
        for code in c.codes:
            read = read_graph(code.code, len(graphs), c.id, code.path, _inputs(code.code, pieces, forwards),
                              _hints([c]) or stated_hints)
            own.append(read.graph)
            graphs.append(read.graph)
            sites += [_renamed(s, renames) for s in read.sites]
            notes += read.notes
        compiled.append((c, own))
    hints = stated_hints
    stated = bool(hints)
    if not hints:  # given per compile (config patches): the variants' keys say them
        hints = sorted({v.hint for s in sites for v in s.variants if v.hint is not None})
    graphs = [_with_reason(g, c, hints) for c, own in compiled for g in own]
    used = frozenset().union(*(s.symbols for s in sites))
    symbols = [s for s in symbols if s.input is not None or s.name in used]
    declared = {s.name for s in symbols}  # a log cut before Dynamo's entries, or output code alone, names none
    symbols += [SymbolInfo(name) for name in sorted(used - declared)]
    env = _environment(log, source, hints, graphs, stated)
    session = Session(environment=env, model=ModelInfo(name=name, hints=tuple(hints)), symbols=symbols,
                      graphs=graphs, sites=sites)
    session.truncated = None if log.reading.cut_short is None else one_line(log.reading.cut_short, 4096)
    session.findings = _findings(log, notes)
    return session


def session_from_codes(codes: Sequence[tuple[str, str, str]], source: str, name: str) -> Session:
    """Saved Inductor output-code modules (a debug folder's `output_code.py` files, or the
    module in Inductor's cache), each (code, path, label) a graph: its symbols have no
    sources, nothing says which input is which parameter."""
    compiles = []
    for code, path, label in codes:
        c = Compile(label, 0)
        c.codes.append(OutputCode(code, path))
        compiles.append(c)
    return session_from_log(TraceLog(compiles, Reading()), source, name)


def _inputs(code: str, pieces: Iterator[list[str]], forwards: dict[str, list[str]]) -> list[str]:
    """The inputs of the graph this code was compiled from: the next of the compile's graphs
    (Dynamo's, or each piece DDP split it into) for an inference or forward graph; for a
    backward graph, its forward's (the same AOT id), whose inputs it names `primals_N`."""
    found = aot_id(code)
    if found is not None and found[1] == "backward":
        return forwards.get(found[0], [])
    inputs = next(pieces, [])
    if found is not None:
        forwards[found[0]] = inputs
    return inputs


def _hints(compiles: Sequence[Compile]) -> list[int]:
    """The hints the compiles ran with, as their settings state them (the first that set
    any); a program that gave them per compile (config patches) states none, and its
    variants' keys say them instead (`_with_reason` reads those)."""
    for c in compiles:
        value = c.config.get("multi_kernel_hints")
        if isinstance(value, list) and value and all(type(h) is int and 0 < h <= 2**62 for h in value):
            return list(value)
    return []


def _with_reason(g: Graph, c: Compile, hints: Sequence[int]) -> Graph:
    if g.sites or g.wrapper_code is None:
        return g
    config = c.config if c.config.get("multi_kernel_hints") else {}
    return dataclasses.replace(g, no_site_reason=no_site_reason(g.wrapper_code, config, hints,
                                                                 WrapperSizes(g.wrapper_code)))


def _symbols(c: Compile, taken: dict[str, tuple[str, ...]], out: list[SymbolInfo]) -> dict[str, str]:
    """The compile's symbols joined to the session's: a name already given to another
    source is renamed for this compile. Returns the renames."""
    renames: dict[str, str] = {}
    for sym in c.symbols.values():
        if not SYMBOL_NAME.match(sym.name) or sym.name in c.specialized:  # made a constant: no size to type
            continue
        sources = (sym.source,) if sym.source and one_line(sym.source) == sym.source else ()
        name = sym.name
        if name in taken and taken[name] != sources:
            name = next(f"{sym.name}_{i}" for i in range(1, 10_000) if f"{sym.name}_{i}" not in taken
                        or taken[f"{sym.name}_{i}"] == sources)
            renames[sym.name] = name
        if name in taken:
            continue
        taken[name] = sources
        m = next((m for m in map(_SIZE_SOURCE.match, sources) if m), None)
        what = None if m is None else m["name"] + (f"[{m['pos']}]" if m["pos"] is not None else "")
        out.append(SymbolInfo(name, None, sources, what, int(m["dim"]) if m else None, sym.value))
    return renames


def _renamed(site: Site, renames: Mapping[str, str]) -> Site:
    if not renames or not site.symbols & renames.keys():
        return site

    def spec(t: TensorSpec) -> TensorSpec:
        return TensorSpec(t.name, t.role, tuple(e.renamed(renames) for e in t.sizes))

    return dataclasses.replace(site, tensors=tuple(map(spec, site.tensors)),
                               runtime_tensors=None if site.runtime_tensors is None
                               else tuple(map(spec, site.runtime_tensors)))


def _environment(log: TraceLog, source: str, hints: Sequence[int], graphs: Sequence[Graph],
                 stated: bool) -> Environment:
    """Versions and settings as the compiles' metrics state them; settings only where they
    state the hints too (a program that set them per compile ran with settings its
    process-wide config, which the metrics copy, does not hold)."""
    versions: dict[str, str] = {}
    config: dict[str, object] = {}
    for c in log.compiles:
        for k, v in c.versions.items():
            versions.setdefault(k, v)
        for k, v in c.config.items():
            if stated and _plain(v):
                config.setdefault(k, v)
    config["multi_kernel_hints"] = list(hints)
    config[TRACE_KEY] = one_line(source, 4096)
    config[COMPILES_KEY] = [one_line(_compile_text(c)) for c in log.compiles[:256]]
    started = next((c.started for c in log.compiles if c.started is not None), None)
    return Environment(created=iso_time(started) or "at an unknown time", torch=versions.get("torch"),
                       triton=versions.get("triton"), python=versions.get("python"), gpu=_device(graphs),
                       cuda=versions.get("cuda"), config=config, rank=log.rank)


def _compile_text(c: Compile) -> str:
    what = f" {c.function}" if c.function else ""
    return f"[{c.id}]{what}: {len(c.codes)} graph{'s' if len(c.codes) != 1 else ''}" + (" (failed)" if c.failure else "")


def _plain(v: object) -> bool:
    """What a session's config may hold (`a_scalar_map`), of the settings kept."""
    if v is None or isinstance(v, bool):
        return True
    if isinstance(v, int):
        return abs(v) <= 2**62
    if isinstance(v, str):
        return len(v) <= 256 and one_line(v) == v
    return isinstance(v, list) and len(v) <= 256 and all(type(x) is int and abs(x) <= 2**62 for x in v)


def _device(graphs: Sequence[Graph]) -> str | None:
    """The GPU the code was compiled for, as the kernels' metadata describe it (a trace
    names no GPU)."""
    for g in graphs:
        m = _DEVICE.search(g.wrapper_code or "")
        if m is not None:
            cc = int(m["cc"])
            return f"a {m['type'].upper()} GPU of compute capability {cc // 10}.{cc % 10} ({m['sms']} SMs)"
    return None


def _findings(log: TraceLog, notes: Sequence[str]) -> list[Finding]:
    r = log.reading
    out = [Finding(FINDING, one_line(n, 4096), "warning") for n in notes]
    if r.garbage:
        out.append(Finding(FINDING, f"{r.garbage} lines of the log are not trace entries: they were skipped", "warning"))
    if r.long_lines:
        out.append(Finding(FINDING, f"{r.long_lines} lines of the log are longer than kinspect reads: skipped", "warning"))
    out += [Finding(FINDING, one_line(d, 4096), "warning") for d in r.damaged[:20]]
    for c in log.compiles:
        if c.failure:
            out.append(Finding(FINDING, one_line(f"compile [{c.id}] {c.function or ''} failed: {c.failure}", 1000),
                               "warning"))
    if not any(c.codes for c in log.compiles):
        out.append(Finding(FINDING, "the log holds no Inductor output code (no graph was compiled by Inductor, or "
                           "the log was cut short before the first)", "warning"))
    return out


def trace_name(path: Path) -> str:
    """What a trace's session calls its program: the folder TORCH_TRACE named, for the logs
    torch names itself (`dedicated_log_torch_trace_...`), else the file's own name."""
    stem = path.name.split(".")[0]
    if stem.startswith("dedicated_log_torch_trace") and path.parent.name:
        return path.parent.name
    return stem or "trace"
