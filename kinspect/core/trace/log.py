"""One process's TORCH_TRACE log read into its compiles, each kept apart.

Dynamo numbers each compile by its frame and the frame's compile (`[0/0]`, a recompile of
the same frame `[0/1]`; under compiled autograd `[!0/1/0]`), and every entry a compile
logs carries that id, so a trace of many recompiles or several models still says which
symbols, which Dynamo graph and which Inductor output code belong together. A compile
holds, in the order they were logged:

- `create_symbol`: each symbol Dynamo made, with the source it came from (`L['x'].size()[0]`);
- `dynamo_output_graph`: the FX graph Dynamo handed the backend, whose inputs are, in
  order, the inputs Inductor's wrapper takes (`arg{i}_1`, `primals_{i+1}`); under
  DistributedDataParallel, `optimize_ddp_split_child`: the pieces DDP split it into, each
  compiled on its own, in order;
- `inductor_output_code`: the wrapper module of each graph Inductor compiled (forward,
  backward or inference), every size-hint multi-kernel in it;
- `compilation_metrics`: torch's and Triton's versions and Inductor's configuration.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from dataclasses import dataclass, field
from typing import BinaryIO

from kinspect.core.trace.framing import Entry, Reading, entries

KINDS = frozenset({"str", "dynamo_start", "create_symbol", "symbolic_shape_specialization", "dynamo_output_graph",
                   "optimize_ddp_split_child", "inductor_output_code", "compilation_metrics", "bwd_compilation_metrics"})
"""The entry kinds read; every other kind is skipped without being decoded."""

CONFIG_KEYS = ("multi_kernel_hints", "max_autotune", "max_autotune_gemm", "max_autotune_gemm_backends",
               "cpp_wrapper", "force_disable_caches", "autotune_in_subproc", "benchmark_epilogue_fusion")
"""Inductor settings a session states: those that decide whether a GEMM gets a multi-kernel."""

_INPUT = re.compile(r"(?:^|[(,])\s*(?P<name>[A-Za-z_]\w*)\s*:\s*\"")
_VERSION = re.compile(r"[\w.+-]{1,64}")


@dataclass
class OutputCode:
    code: str
    path: str | None


@dataclass
class Symbol:
    name: str
    source: str | None
    value: int | None
    """The size Dynamo first saw."""


@dataclass
class Compile:
    """Everything one compile of one frame logged."""

    id: str
    """`0/1`, as tlparse writes it (`!0/1/0` under compiled autograd)."""
    pid: int
    symbols: dict[str, Symbol] = field(default_factory=dict)
    specialized: dict[str, str] = field(default_factory=dict)
    """Symbols Dynamo made a constant, with why (`s27` -> `32: range_refined_to_singleton`)."""
    inputs: list[str] = field(default_factory=list)
    """The Dynamo graph's inputs in order (`L_self_modules_fc1_parameters_weight_`, `s77`, `L_x_`)."""
    pieces: list[list[str]] = field(default_factory=list)
    """The inputs of each piece DDP split the Dynamo graph into, in the order they compile."""
    codes: list[OutputCode] = field(default_factory=list)
    config: dict[str, object] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    function: str | None = None
    """What was compiled: `forward (model.py:8)`."""
    started: float | None = None
    """Unix time the compile started (from its metrics)."""
    failure: str | None = None


@dataclass
class TraceLog:
    """One process's log: its compiles in the order each first appeared."""

    compiles: list[Compile]
    reading: Reading
    rank: int | None = None


def read_log(stream: BinaryIO) -> TraceLog:
    """Stream a log (already decompressed) into its compiles."""
    reading = Reading()
    compiles: dict[str, Compile] = {}
    strings: dict[int, str] = {}
    rank = None
    for e in entries(stream, KINDS, reading):
        if e.kind == "str":
            _intern(e, strings)
            continue
        c = compiles.get(_compile_id(e))
        if c is None:
            c = compiles[_compile_id(e)] = Compile(_compile_id(e), e.pid)
        r = e.metadata.get("rank")
        if rank is None and type(r) is int and 0 <= r < 2**31:
            rank = r
        _read(e, c, strings)
    return TraceLog(list(compiles.values()), reading, rank)


def _compile_id(e: Entry) -> str:
    """tlparse's notation: `frame/compile`, `!autograd/frame/compile` under compiled
    autograd, `-` for entries logged outside any compile."""
    m = e.metadata
    parts = [m.get("frame_id"), m.get("frame_compile_id")]
    if not all(type(p) is int for p in parts):
        return "-"
    text = f"{parts[0]}/{parts[1]}"
    ca = m.get("compiled_autograd_id")
    return f"!{ca}/{text}" if type(ca) is int else text


def _intern(e: Entry, strings: dict[int, str]) -> None:
    """`{"str": ["/path/model.py", 1]}`: a file name the stacks refer to by number."""
    value = e.metadata.get("str")
    if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str) and type(value[1]) is int:
        strings[value[1]] = value[0]


def _read(e: Entry, c: Compile, strings: dict[int, str]) -> None:
    d = e.data
    if e.kind == "create_symbol":
        name, source = d.get("symbol"), d.get("source")
        if isinstance(name, str):
            c.symbols[name] = Symbol(name, source if isinstance(source, str) else None, _int(d.get("val")))
    elif e.kind == "symbolic_shape_specialization":
        name = d.get("symbol")
        if isinstance(name, str):
            c.specialized[name] = f"{d.get('value')}: {d.get('reason')}"
    elif e.kind == "dynamo_output_graph" and e.payload is not None:
        c.inputs = graph_inputs(e.payload)
    elif e.kind == "optimize_ddp_split_child" and e.payload is not None:
        c.pieces.append(graph_inputs(e.payload))
    elif e.kind == "inductor_output_code" and e.payload is not None:
        path = d.get("filename")
        c.codes.append(OutputCode(e.payload, path if isinstance(path, str) else None))
    elif e.kind == "dynamo_start" and c.function is None:
        c.function = _user_frame(d.get("stack"), strings)
    elif e.kind in ("compilation_metrics", "bwd_compilation_metrics"):
        _metrics(d, c)


def graph_inputs(payload: str) -> list[str]:
    """The inputs of a Dynamo graph as `print_readable` writes its `forward` (every input
    annotated: `L_x_: "f32[s77, 32][32, 1]cpu"`, `s77: "Sym(s77)"`)."""
    start = payload.find("def forward(self")
    if start < 0:
        return []
    end = payload.find("):", start)
    return [m["name"] for m in _INPUT.finditer(payload[start + len("def forward(self"):end if end > 0 else None])]


def _user_frame(stack: object, strings: dict[int, str]) -> str | None:
    """The last frame of Dynamo's start stack: where the compiled function was called."""
    if not isinstance(stack, list) or not stack or not isinstance(stack[-1], dict):
        return None
    f = stack[-1]
    name, line, index = f.get("name"), f.get("line"), f.get("filename")
    file = strings.get(index) if type(index) is int else None
    if not isinstance(name, str):
        return None
    where = f" ({file.rsplit('/', 1)[-1]}:{line})" if isinstance(file, str) and type(line) is int else ""
    return f"{name}{where}"


def _metrics(d: dict[str, object], c: Compile) -> None:
    name, file, line = d.get("co_name"), d.get("co_filename"), d.get("co_firstlineno")
    if isinstance(name, str):
        where = f" ({file.rsplit('/', 1)[-1]}:{line})" if isinstance(file, str) and type(line) is int else ""
        c.function = f"{name}{where}"
    start = d.get("start_time")
    if isinstance(start, (int, float)) and not isinstance(start, bool) and 0 < start < 2**40:
        c.started = float(start)
    for key, field_name in (("pytorch_version", "torch"), ("triton_version", "triton"), ("cuda_version", "cuda"),
                            ("python_version", "python")):
        value = d.get(key)
        if isinstance(value, str) and value:
            m = _VERSION.match(value)
            if m is not None:
                c.versions[field_name] = m[0]
    kind, reason = d.get("fail_type"), d.get("fail_reason")
    if isinstance(kind, str):
        c.failure = f"{kind}: {reason}" if isinstance(reason, str) else kind
    text = d.get("inductor_config")
    if isinstance(text, str):
        try:
            config = json.loads(text)
        except (ValueError, RecursionError):
            return
        if isinstance(config, dict):
            c.config = {k: config[k] for k in CONFIG_KEYS if k in config}


def _int(value: object) -> int | None:
    """Dynamo writes a symbol's value as text (`"3"`)."""
    if isinstance(value, str) and value.isdigit() and len(value) <= 19:
        return int(value)
    return value if type(value) is int else None


def iso_time(started: float | None) -> str | None:
    if started is None:
        return None
    return _dt.datetime.fromtimestamp(started, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
