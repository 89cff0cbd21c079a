"""One graph's output code read into the session's model: its graph and its sites.

Everything a site is made of is in the wrapper's text. The multi-kernel's definition gives
the hint keys in Inductor's order and the kernel each runs (`multi_kernels`), the kernels'
definitions their sources and configs (`kernels`), and its `.run(...)` lines where it is
called from (`calls`). The tensors its runtime key is made of are the tensors those lines
pass, whose sizes the wrapper states as expressions over the graph's symbols (`sizes`):
so a typed shape gives the runtime key as a recording's site gives it. Each variant's
hint is what its key holds where a size is symbolic (stock Inductor keys every symbolic
size by the hint itself), and that is checked. An Inductor that evaluates a hint per
symbol (the upstream patch) keys the sizes its kernel computes instead: where a key's
single-symbol dims give values that make every dim of it, the variant was tuned at those
sizes, which the graph records, at the compile's hints (one per key, in its order) where
it states them, else at the one value all its symbols hold, which is the hint unless that
Inductor lowered it (the graph says so). Tensors whose sizes give back the keys neither way are
dropped for sizes named by tensor and dim (`t1_0`), as a site loaded from Inductor's
caches has them.

Inductor's names restart per graph, so a site's name carries its graph after the first
(`multi_kernel_0@graph_1`), as a recording names it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kinspect.core.dispatch.hint_sizes import read_back
from kinspect.core.dispatch.symbolic import SizeExpr, TensorSpec
from kinspect.core.inductor_code.calls import call_lines, dispatch_lines
from kinspect.core.inductor_code.gemms import gemm_calls, module_of, op_of_kernel, why_no_multi_kernel
from kinspect.core.inductor_code.kernels import kernel_facts, kernel_sources, source_hash
from kinspect.core.inductor_code.multi_kernels import MultiKernel, multi_kernels
from kinspect.core.inductor_code.sizes import WrapperSizes, arg_shape
from kinspect.core.session.model import CallSite, Graph, Site, Variant

MAX_NAME = 256
_AOT_ID = re.compile(r"^# AOT ID: \['(?P<id>\d+)_(?P<kind>[a-z]+)'\]", re.M)
_INPUT_INDEX = re.compile(r"^(?:arg(?P<arg>\d+)_1|primals_(?P<primal>\d+))$")
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_LINE_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@dataclass
class GraphRead:
    graph: Graph
    sites: list[Site]
    notes: list[str]


def site_name(graph_index: int, name: str) -> str:
    return name if graph_index == 0 else f"{name}@graph_{graph_index}"


def aot_id(code: str) -> tuple[str, str] | None:
    """The AOT ID comment Inductor heads its code with (`# AOT ID: ['0_forward']`): the
    AOT graph's number, which a forward and its backward share, and inference, forward or
    backward."""
    m = _AOT_ID.search(code[:4096])
    return (m["id"], m["kind"]) if m else None


def graph_kind(code: str) -> str:
    found = aot_id(code)
    return found[1] if found else "graph"


def plain(text: str) -> tuple[str, int]:
    """The text with its control characters (other than tab and newlines) replaced: a trace
    is data, and what reaches a session must be what a session file may hold."""
    out, n = _CONTROLS.subn("\ufffd", text)
    return out, n


def one_line(text: str, limit: int = MAX_NAME) -> str:
    """A name or a line from the trace (a file name, a reason), its control characters
    replaced, cut to `limit`."""
    return _LINE_CONTROLS.sub("\ufffd", text[:limit])


def read_graph(code: str, index: int, label: str, path: str | None, inputs: Sequence[str],
               hints: Sequence[int] = ()) -> GraphRead:
    """The graph (`graph_{index} [label] (kind)`) and its sites, from its output code;
    `inputs` are the Dynamo graph's inputs (for the parameters' names), `hints` the ones its
    compile states. Why a graph has no site needs the hints every graph was compiled with:
    `no_site_reason`, once all are read."""
    code, controls = plain(code)
    notes = [f"{controls} control characters in the output code were replaced"] if controls else []
    name = f"graph_{index} [{label}] ({graph_kind(code)})"
    found, bad = multi_kernels(code)
    if bad:
        notes.append(f"{bad} multi-kernel definitions in {name} could not be read")
    params = parameters(code, inputs)
    sizes = WrapperSizes(code)
    sources = kernel_sources(code)
    sites = []
    tuned: dict[int, dict[str, int]] = {}
    agree = True  # one value per symbol at a hint across the graph's sites, as Inductor decides it per graph
    for mk in found:
        if len(mk.name) > MAX_NAME or any(len(k) > MAX_NAME for k in mk.kernels):
            notes.append(f"{name}: a multi-kernel's name is too long to be Inductor's; left out")
            continue
        site, note, per_symbol = _site(mk, site_name(index, mk.name), name, code, sizes, sources, params, hints)
        sites.append(site)
        if note:
            notes.append(note)
        for hint, values in zip(*(per_symbol or ((), ()))):
            have = tuned.setdefault(hint, {})
            agree = agree and all(have.setdefault(sym, v) == v for sym, v in values.items())
    if tuned and not hints:
        notes.append(f"{name}: keys made at one size per symbol, and the trace states no hints: each variant's "
                     "hint is read as the size its symbols hold (a hint Inductor lowered reads as the lowered size)")
    assignments = tuple(read_back(h, tuned[h]) for h in sorted(tuned)) if agree else ()
    graph = Graph(name, None if path is None else one_line(path, 4096), tuple(s.name for s in sites),
                  None, code, parameters=params, hint_sizes=assignments)
    return GraphRead(graph, sites, notes)


def no_site_reason(code: str, config: Mapping[str, object], hints: Sequence[int], sizes: WrapperSizes) -> str:
    """Why a graph's code has no size-hint multi-kernel, read from its GEMM calls."""
    if config.get("cpp_wrapper"):
        return "cpp_wrapper picks one kernel at compile time, so there is no runtime dispatch"
    calls = gemm_calls(code, (), sizes)
    if not calls:
        return "no GEMM here (no mm, addmm, bmm or baddbmm runs in this graph)"
    reasons = list(dict.fromkeys(why_no_multi_kernel(c, config, hints) for c in calls))
    return "; ".join(reasons)


def parameters(code: str, inputs: Sequence[str]) -> dict[str, str]:
    """Each wrapper input that is a parameter of the compiled module, by its path
    (`arg0_1` -> `fc1.weight`): AOT's inputs are Dynamo's in order (`arg{i}_1` for an
    inference graph, `primals_{i+1}` for training)."""
    out: dict[str, str] = {}
    if not inputs:
        return out
    for token in set(re.findall(r"\b(?:arg\d+_1|primals_\d+)\b", code)):
        m = _INPUT_INDEX.match(token)
        i = int(m["arg"]) if m and m["arg"] is not None else int(m["primal"]) - 1 if m else -1
        if 0 <= i < len(inputs):
            path = parameter_path(inputs[i])
            if path is not None:
                out[token] = path
    return dict(sorted(out.items(), key=lambda kv: _natural(kv[0])))


def _natural(name: str) -> tuple[str, int]:
    digits = re.search(r"\d+", name)
    return name.split("_", 1)[0], int(digits[0]) if digits else 0


def parameter_path(placeholder: str) -> str | None:
    """`transformer.h.0.attn.c_attn.weight` from Dynamo's input name
    `L_self_modules_transformer_modules_h_modules_0_modules_attn_modules_c_attn_parameters_weight_`."""
    if "_parameters_" not in placeholder:
        return None
    owner, attr = placeholder.rsplit("_parameters_", 1)
    parts = owner.split("_modules_")[1:]
    attr = attr.rstrip("_")
    path = ".".join([*parts, attr]) if attr else None
    return path if path and len(path) <= MAX_NAME else None


def _site(mk: MultiKernel, name: str, graph: str, code: str, sizes: WrapperSizes, sources: Mapping[str, str],
          params: Mapping[str, str], stated: Sequence[int]
          ) -> tuple[Site, str | None, tuple[list[int], list[dict[str, int]]] | None]:
    """The site, a note where its sizes could not be read, and each key's hint and size per
    symbol where its keys were made per symbol."""
    runs = call_lines(code, mk.name)
    note = None
    specs = _specs(mk, runs[0] if runs else None, sizes, sources) if runs else None
    per_symbol = None
    if specs is not None and not _gives_keys(specs, mk.keys):
        per_symbol = _sizes_per_symbol(specs, mk.keys, stated)
        if per_symbol is None:
            specs = None
    if specs is None:
        if runs:
            note = (f"{name}: the sizes its call passes do not give back its hint keys; its sizes are named by "
                    "tensor and dim (t1_0)")
        specs = _key_specs(mk.keys)
    hints: list[int | None] = list(per_symbol[0]) if per_symbol else [_hint(specs, key) for key in mk.keys]
    variants = []
    for i, (key, kernel) in enumerate(zip(mk.keys, mk.kernels)):
        src = sources.get(kernel, "")
        variants.append(Variant(index=i, hint=hints[i], key=key, kernel_name=kernel, source=src,
                                source_hash=source_hash(src) if src else "", config=dict(kernel_facts(src).config)))
    lines, _ = dispatch_lines(code, mk.name)
    calls = tuple(_call_site(j, n, text, specs, params) for j, (n, text) in enumerate(lines))
    op = next((op for k in mk.kernels if (op := op_of_kernel(k))), "template")
    return Site(name, graph, op, tuple(specs), tuple(variants), call=calls[0].call if calls else None,
                call_sites=calls), note, per_symbol


def _call_site(index: int, line: int, text: str, specs: Sequence[TensorSpec], params: Mapping[str, str]) -> CallSite:
    args = _arg_names(text)
    out = next((a for a, s in zip(args, specs) if s.role == "output"), None)
    return CallSite(index=index, node=out, call=text[:4096], line=line, module=module_of(args, params))


def _arg_names(text: str) -> list[str]:
    call = _parsed_call(text)
    if call is None:
        return []
    return [a.id if isinstance(a, ast.Name) else "" for a in call.args]


def _parsed_call(text: str) -> ast.Call | None:
    try:
        stmt = ast.parse(text.strip()).body[0]
    except (SyntaxError, ValueError, RecursionError, MemoryError, IndexError):
        return None
    value = getattr(stmt, "value", None)
    return value if isinstance(value, ast.Call) else None


def _specs(mk: MultiKernel, run: tuple[int, str], sizes: WrapperSizes,
           sources: Mapping[str, str]) -> list[TensorSpec] | None:
    """The tensors the first `.run(...)` line passes, with their sizes as the wrapper states
    them; None where one of them cannot be read."""
    line, text = run
    call = _parsed_call(text)
    if call is None:
        return None
    args = call.args[:mk.shared] if mk.shared is not None else call.args
    params = kernel_facts(sources.get(mk.kernels[0], "")).params if mk.kernels else ()
    out = []
    for i, a in enumerate(args):
        shape = arg_shape(a, sizes, line)
        if shape is None:
            continue
        name = a.id if isinstance(a, ast.Name) else f"t{len(out)}"
        output = i < len(params) and params[i].startswith(("out_ptr", "in_out_ptr"))
        out.append(TensorSpec(name, "output" if output else "input", tuple(SizeExpr.from_text(t) for t in shape)))
    if out and not any(t.role == "output" for t in out):
        last = out[-1]
        out[-1] = TensorSpec(last.name, "output", last.sizes)
    return out or None


def _gives_keys(specs: Sequence[TensorSpec], keys: Sequence[tuple[tuple[int, ...], ...]]) -> bool:
    """Whether the tensors' sizes, each symbolic one at the variant's hint, are its key."""
    for key in keys:
        if tuple(map(len, key)) != tuple(len(t.sizes) for t in specs):
            return False
        hint = _hint(specs, key)
        if hint is None and any(not e.is_constant for t in specs for e in t.sizes):
            return False
        if tuple(t.key_at_hint(hint or 0) for t in specs) != key:
            return False
    return True


def _sizes_per_symbol(specs: Sequence[TensorSpec], keys: Sequence[tuple[tuple[int, ...], ...]],
                      hints: Sequence[int]) -> tuple[list[int], list[dict[str, int]]] | None:
    """Each key's hint and size per symbol, where the keys were made per symbol: every
    symbol of the tensors has a dim of its own in the key, and those values make every
    other dim too (`B*S`, `768*S`); else None. The hints are the compile's, one per key in
    its order, where it states them; else a key whose symbols all hold one value was made
    at that value: the hint, unless Inductor lowered every symbol together, which the key
    cannot tell."""
    if hints and len(hints) != len(keys):
        return None
    out = []
    for key in keys:
        if tuple(map(len, key)) != tuple(len(t.sizes) for t in specs):
            return None
        values: dict[str, int] = {}
        for t, shape in zip(specs, key):
            for e, value in zip(t.sizes, shape):
                if isinstance(e.tree, str) and values.setdefault(e.tree, value) != value:
                    return None
        if not all(t.symbols <= values.keys() for t in specs):
            return None
        if tuple(t.key_at_hint(0, values) for t in specs) != key:
            return None
        out.append(values)
    if not hints:
        if any(len(set(v.values())) != 1 for v in out):
            return None
        hints = [next(iter(v.values())) for v in out]
    return list(hints), out


def _hint(specs: Sequence[TensorSpec], key: tuple[tuple[int, ...], ...]) -> int | None:
    """The hint a key was made at: what it holds where a size is symbolic."""
    for t, shape in zip(specs, key):
        for e, value in zip(t.sizes, shape):
            if not e.is_constant:
                return value
    return None


def _key_specs(keys: Sequence[tuple[tuple[int, ...], ...]]) -> list[TensorSpec]:
    """Tensors read off the keys alone: a size that differs between keys is symbolic (its
    own name per tensor and dim), one the same in every key a constant."""
    first = keys[0] if keys else ()
    out = []
    for i, shape in enumerate(first):
        dims = []
        for d, size in enumerate(shape):
            same = all(len(k) > i and len(k[i]) > d and k[i][d] == size for k in keys)
            dims.append(SizeExpr(size) if same else SizeExpr(f"t{i}_{d}"))
        role = "output" if i == len(first) - 1 else "input"
        out.append(TensorSpec("out" if role == "output" else f"t{i}", role, tuple(dims)))
    return out
