"""Compile-time capture: what Inductor knew when it built each size-hint multi-kernel.

Inductor keeps these facts only transiently (the hint -> caller mapping survives only as
closures, per-hint autotune tables live on IR nodes that are dropped after codegen), so
kinspect wraps the few methods that see them, for the duration of one compile:

- `GraphLowering.compile_to_module`: one graph; its wrapper file, symbols and flags;
- `MultiTemplateBuffer.__init__`: a GEMM that max-autotune may render as a template;
- `MultiTemplateBuffer.choice_timings(hint)`: the autotune table at each hint;
- `MultiTemplateBuffer.finalize_as_triton_callers({hint: caller})`: the choice emitted;
- `SIMDScheduling._make_shape_cache_key(node, hint)`: the symbolic sizes and the key;
- `SizeHintMultiKernel.__init__`: the site's name and its kernels, in key order.

Each wrapper calls the original first and only reads what it returns, so the compiled
code is exactly what Inductor would have produced without kinspect. (While a capture is
active and Inductor autotunes in a subprocess, its template configs are precompiled in this
process: `kinspect/inductor/hooks/precompile.py` says why.)
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from kinspect.core.errors import KinspectError
from kinspect.core.printing import Passing
from kinspect.core.dispatch.operands import gemm_op
from kinspect.core.dispatch.shapes import Key
from kinspect.core.dispatch.hint_sizes import Assignment
from kinspect.inductor.hooks.fixes import hint_sizes
from kinspect.inductor.hooks.fixes.fusion_per_hint import FOREIGN
from kinspect.inductor.hooks import benchmark_tensors, precompile
from kinspect.inductor.hooks.origins import Origin, origin_of


@dataclass
class AutotuneChoice:
    name: str
    description: str
    time_ms: float | None
    is_triton: bool


@dataclass(frozen=True)
class Autotuning:
    """A GEMM being autotuned at one hint: what a compile that dies there was doing."""

    node: str
    op: str
    hint: int | None

    @property
    def where(self) -> str:
        """`hint 64`, or, for the autotuning Inductor does for the generic variant first,
        the example inputs' sizes it tunes at (there is no hint to name)."""
        return f"hint {self.hint}" if self.hint is not None else "the example sizes"


@dataclass
class SiteRecord:
    name: str
    node: str
    op: str
    tensors: list[tuple[str, str, tuple[Any, ...]]]
    """(name, role, symbolic sizes) in key order: template inputs, then the output."""
    hint_keys: dict[int, Key]
    kernel_names: list[str]
    keys: list[Key]
    runtime_args: list[tuple[str, tuple[Any, ...] | None]] = field(default_factory=list)
    """The call args of the multi-kernel with their symbolic sizes (None: not a tensor)."""
    origin: Origin | None = None
    """Where the template's GEMM came from in the user's code."""


@dataclass
class GraphRecord:
    index: int
    kind: str
    obj: Any
    wrapper_path: str | None = None
    cpp_wrapper: bool = False
    symbols: dict[str, list[str]] = field(default_factory=dict)
    dynamic_inputs: bool = False
    templates: int = 0
    finalized: set[str] = field(default_factory=set)
    sites: list[SiteRecord] = field(default_factory=list)
    timings: dict[tuple[str, int | None], list[AutotuneChoice]] = field(default_factory=dict)
    emitted: dict[tuple[str, int | None], tuple[str, str]] = field(default_factory=dict)
    tables: dict[tuple[str, int | None], Any] = field(default_factory=dict)
    """The timings dict each autotuning returned, as Inductor keeps it on the template: the
    fusion benchmark replaces it (`_choice_timings[hint] = new_timings`), which is how
    finalizing tells a fused choice from the table's."""
    fused: dict[tuple[str, int | None], list[tuple[str, float]]] = field(default_factory=dict)
    """Per template and hint finalized on fused timings: each choice's time in ms, fastest first."""
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    misfits: list[benchmark_tensors.Seen] = field(default_factory=list)
    """Benchmark tensors that did not hold what a template's kernel reads at a hint."""
    misfit_ops: dict[tuple[str, ...], str] = field(default_factory=dict)
    """The op of each template a misfit was seen in, by its inputs (before any site exists)."""
    hint_sizes: tuple[Assignment, ...] = ()
    """The sizes each hint was tuned at (`--one-size-per-symbol`); none under Inductor's own rule."""
    started: float = field(default_factory=time.monotonic)
    """When kinspect first saw the graph being lowered, for the progress it reports."""
    regions: dict[str, list[Origin]] = field(default_factory=dict)
    """Each nested compile region's subgraph (`repeated_subgraph0`, as the wrapper names its
    function) -> where each of its calls came from (`h.0`, `h.1`, ...), in graph order."""
    died_at: Autotuning | None = None
    """The autotuning that raised in this graph's compile: where it died (a CUDA fault is
    reported late, so it may have been made at an earlier hint of the same compile)."""
    per_symbol: bool = False
    """Lowered under `--one-size-per-symbol`."""

    @property
    def name(self) -> str:
        return f"graph_{self.index} ({self.kind})"


def _size_tuple(node: Any) -> tuple[Any, ...] | None:
    from torch._inductor import ir

    if not isinstance(node, ir.IRNode):
        return None
    if isinstance(node, ir.BaseView):
        node = node.unwrap_view()
    size = node.maybe_get_size()
    return None if size is None else tuple(size)


def _node_name(node: Any) -> str:
    from torch._inductor import ir

    if isinstance(node, ir.BaseView):
        node = node.unwrap_view()
    for attr in ("get_name", "get_origin_node"):
        try:
            got = getattr(node, attr)()
            if got:
                return str(got)
        except Exception:  # IR nodes without a name (constants, views of views)
            continue
    return type(node).__name__


def _op_of(node: Any) -> str:
    origin = getattr(node, "origin_node", None)
    target = getattr(origin, "target", None)
    if target is not None:
        return str(getattr(target, "_opname", None) or getattr(target, "__name__", target)).split(".")[0]
    names = sorted(str(getattr(o, "target", o)) for o in getattr(node, "origins", ()) or ())
    return next((op for n in names if (op := gemm_op(n))), names[0] if names else "template")


class CompileCapture:
    """`with CompileCapture() as cap:` around a compile; `cap.graphs` afterwards."""

    def __init__(self) -> None:
        self.graphs: list[GraphRecord] = []
        self.progress: Any = None
        """Optional callable(str) told what is happening (graph, hint being autotuned)."""
        self.autotuning: Autotuning | None = None
        """The autotuning under way; left set when it raises, to name where a compile died."""
        self.configs: tuple[int, int] | None = None
        """Of the autotuning under way, the configs timed and how many it times in this process."""
        self.fit_benchmark_tensors = False
        """Give each benchmark tensor the storage its kernel reads at the hint (else only check)."""
        self._watch: contextlib.ExitStack | None = None

    # ------------------------------------------------------------ helpers

    def current(self) -> GraphRecord | None:
        from torch._inductor.virtualized import V

        g = _outermost(V.graph)
        for rec in reversed(self.graphs):
            if rec.obj is g:
                return rec
        return None

    def _graph_for(self, g: Any) -> GraphRecord:
        g = _outermost(g)
        for rec in reversed(self.graphs):
            if rec.obj is g:
                return rec
        kind = "backward" if getattr(g, "is_backward", False) else (
            "inference" if getattr(g, "is_inference", False) else "forward")
        rec = GraphRecord(len(self.graphs), kind, g, per_symbol=hint_sizes.MODE.active)
        if g is not None:  # known before codegen, so a compile that dies still names its sizes
            with contextlib.suppress(Exception):
                rec.symbols, rec.dynamic_inputs = _symbols_of(g)
        self.graphs.append(rec)
        return rec

    def _say(self, text: str) -> None:
        if self.progress is not None:
            self.progress(text)

    def _autotuning_text(self) -> Passing:
        """One line for a terminal: the graph, op, node and hint being autotuned, the configs
        timed of those this process times, and the time since the graph began lowering."""
        at, rec = self.autotuning, self.current()
        if at is None:
            return Passing("compiling")
        done = f": {self.configs[0]} of {self.configs[1]} configs" if self.configs else ""
        took = f", {time.monotonic() - rec.started:.0f} s into {rec.name}" if rec is not None else ""
        return Passing(f"autotuning {at.op} ({at.node}) at {at.where}{done}{took}")

    def _counted(self, done: int, total: int) -> None:
        self.configs = (done, total)
        self._say(self._autotuning_text())

    # ------------------------------------------------------------ install

    def __enter__(self) -> CompileCapture:
        _install()
        _active_stack().append(self)
        self._watch = contextlib.ExitStack()
        self._watch.enter_context(self.watching_benchmarks())
        return self

    def watching_benchmarks(self) -> contextlib.AbstractContextManager[Any]:
        """Every benchmark tensor Inductor builds while this capture records a compile is
        checked against what its kernel reads at the hint (fitted, with
        `fit_benchmark_tensors`): `kinspect run` records a whole process without entering
        the capture itself."""
        return benchmark_tensors.watching(self._misfit, self.fit_benchmark_tensors)

    def __exit__(self, *exc: Any) -> None:
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        stack = _active_stack()
        if self in stack:
            stack.remove(self)

    @contextlib.contextmanager
    def everywhere(self) -> Iterator[CompileCapture]:
        """Inside, compiles on any thread without a capture of its own record here (a
        program under `kinspect run` may compile on any thread)."""
        global _everywhere
        _install()
        if _everywhere is not None:
            raise KinspectError("another capture of the whole process is active")
        _everywhere = self
        try:
            yield self
        finally:
            _everywhere = None

    def _misfit(self, seen: benchmark_tensors.Seen) -> None:
        rec = self.current()
        if rec is None:
            return
        if self.autotuning is not None:
            rec.misfit_ops.setdefault(seen.inputs, self.autotuning.op)
        self._keep(rec, seen)

    def add_misfit(self, seen: benchmark_tensors.Seen, op: str) -> None:
        """A misfit seen outside this capture (the synchronous rerun of a compile that died
        here), kept with the graph that died: this process may have died before it
        autotuned at that hint."""
        rec = self.graphs[-1] if self.graphs else self._graph_for(None)
        rec.misfit_ops.setdefault(seen.inputs, op)
        self._keep(rec, seen)

    @staticmethod
    def _keep(rec: GraphRecord, seen: benchmark_tensors.Seen) -> None:
        m = seen.misfit
        same = (seen.inputs, seen.index, m.hint, m.path)
        if all((s.inputs, s.index, s.misfit.hint, s.misfit.path) != same for s in rec.misfits):
            rec.misfits.append(seen)

    # ------------------------------------------------------------ sites

    def _site(self, rec: GraphRecord, mk: Any) -> None:
        """The multi-kernel Inductor just made, with the template its hints keyed. Hints whose
        sizes give one key (`--one-size-per-symbol` lowering hint 4096 to 256's sizes) share
        one variant: Inductor keeps one kernel per key, the last hint's, in the first's place."""
        keys = [tuple(tuple(int(s) for s in t) for t in k) for k in mk.kernel_shape_keys]
        node_name, pending = None, None
        for name, p in reversed(list(rec.pending.items())):
            if set(p["hint_keys"].values()) == set(mk.kernel_shape_keys):
                node_name, pending = name, p
                break
        if pending is None:
            pending = {"hint_keys": {}, "tensors": [], "op": "template"}
        rec.pending.pop(node_name, None)
        hint_keys = {int(h): tuple(tuple(int(s) for s in t) for t in k) for h, k in pending["hint_keys"].items()}
        rec.sites.append(SiteRecord(
            name=mk.kernel_name,
            node=node_name or "?",
            op=pending["op"],
            tensors=pending["tensors"],
            hint_keys=hint_keys,
            kernel_names=[str(k.kernel_name) for k in mk.kernels],
            keys=keys,
            runtime_args=_runtime_args(mk),
            origin=pending.get("origin"),
        ))


def _outermost(graph: Any) -> Any:
    """The graph a nested compile region's subgraph is lowered for: its templates, sites
    and benchmark tensors belong to the graph whose wrapper holds its code."""
    for _ in range(64):
        parent = getattr(graph, "parent", None)
        if parent is None or type(graph).__name__ != "SubgraphLowering":
            return graph
        graph = parent
    return graph


def _regions(graph: Any) -> dict[str, list[Origin]]:
    """Each `invoke_subgraph` call of the graph's FX module, by the subgraph it calls, with
    the module it came from (Dynamo's module stack at the call: `h.1` for the second layer)."""
    from kinspect.inductor.hooks.origins import describe

    out: dict[str, list[Origin]] = {}
    for node in getattr(getattr(graph, "module", None), "graph", None).nodes:
        if node.op != "call_function" or "invoke_subgraph" not in str(node.target) or not node.args:
            continue
        body = node.args[0]
        name = str(getattr(body, "target", body))
        out.setdefault(name, []).append(describe(node))
    return out


def _symbols_of(graph: Any) -> tuple[dict[str, list[str]], bool]:
    """Inductor symbol -> Dynamo source names, and whether any graph input is dynamic."""
    import sympy

    out: dict[str, list[str]] = {}
    shape_env = getattr(getattr(graph, "sizevars", None), "shape_env", None)
    if shape_env is not None:
        for sym, sources in getattr(shape_env, "var_to_sources", {}).items():
            names = []
            for s in sources:
                with contextlib.suppress(Exception):
                    names.append(str(s.name() if callable(s.name) else s.name))
            out[str(sym)] = names
    dynamic = False
    for inp in getattr(graph, "graph_inputs", {}).values():
        size = getattr(inp, "get_size", lambda: ())()
        if any(isinstance(s, sympy.Expr) and not s.is_number for s in size):
            dynamic = True
    return out, dynamic


def _fused_times(timings: dict[Any, float]) -> list[tuple[str, float]]:
    """The fusion benchmark's times, fastest first, without the choices it did not time:
    one that failed to compile fused (infinity) or, under `--fusion-per-hint`, another hint's."""
    out = [(str(getattr(c, "name", c)), float(t)) for c, t in timings.items()
           if t is not None and math.isfinite(t) and t < FOREIGN]
    return sorted(out, key=lambda ct: ct[1])


def _runtime_args(mk: Any) -> list[tuple[str, tuple[Any, ...] | None]]:
    """The multi-kernel's shared call args and what Inductor knows of their sizes."""
    from torch._inductor.virtualized import V

    out: list[tuple[str, tuple[Any, ...] | None]] = []
    with contextlib.suppress(Exception):
        _, call_args, _, _ = mk.kernels[0].args.python_argdefs()
        for name in call_args:
            node = V.graph.try_get_buffer(name) if hasattr(V.graph, "try_get_buffer") else None
            if node is None:
                node = V.graph.graph_inputs.get(name)
            out.append((str(name), _size_tuple(node) if node is not None else None))
    return out


# ---------------------------------------------------------------- the hooks
# Installed once per process and left in place: each wrapper records into the capture
# active on the calling thread (the thread that compiles), or just calls Inductor. Saving
# and restoring methods per capture instead breaks when two pipelines' runs overlap (a
# paused debugger run on one thread, a compile on another): the later restore would
# remove the other's hooks.

_local = threading.local()
_install_lock = threading.Lock()
_installed = False
_everywhere: CompileCapture | None = None


def _active_stack() -> list[CompileCapture]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def _active() -> CompileCapture | None:
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else _everywhere


def _patch(owner: Any, name: str, make: Any) -> None:
    setattr(owner, name, make(getattr(owner, name)))


def _install() -> None:
    global _installed
    with _install_lock:
        if _installed:
            return
        _install_hooks()
        _installed = True


def _install_hooks() -> None:
    hint_sizes.MODE.install()  # beneath the capture's own: the keys it records are the ones the mode gives
    try:
        from torch._inductor import config as inductor_config, ir
        from torch._inductor.codegen import multi_kernel, simd
        from torch._inductor.graph import GraphLowering
    except ImportError as e:
        raise KinspectError(f"this torch lacks an Inductor module kinspect needs: {e}") from e
    needed = [
        (GraphLowering, "compile_to_module"),
        (ir, "MultiTemplateBuffer"),
        (multi_kernel, "SizeHintMultiKernel"),
        (multi_kernel, "SizeHintMultiKernelCall"),
        (simd.SIMDScheduling, "_make_shape_cache_key"),
        (simd.SIMDScheduling, "_get_multikernel_shapes"),
    ]
    missing = [f"{getattr(o, '__name__', o)}.{n}" for o, n in needed if not hasattr(o, n)]
    if missing:
        raise KinspectError(
            "this torch has no size-hint multi-kernel support kinspect can observe "
            f"(missing {', '.join(missing)}); it needs torch >= 2.10 with multi_kernel_hints"
        )
    mtb = ir.MultiTemplateBuffer

    def compile_to_module(orig: Any) -> Any:
        def wrapped(graph: Any, *a: Any, **k: Any) -> Any:
            cap = _active()
            if cap is None:
                return orig(graph, *a, **k)
            rec = cap._graph_for(graph)
            cap._say(Passing(f"generating code for {rec.name}"))
            rec.cpp_wrapper = bool(getattr(graph, "cpp_wrapper", False))
            rec.symbols, rec.dynamic_inputs = _symbols_of(graph)
            with contextlib.suppress(Exception):  # FX metadata is optional
                rec.regions = _regions(graph)
            try:
                mod = orig(graph, *a, **k)
            finally:
                rec.tables.clear()  # Inductor's own objects, needed only while this graph is scheduled
            rec.wrapper_path = getattr(mod, "__file__", None)
            rec.hint_sizes = hint_sizes.assignments(graph) or (
                hint_sizes.inductors_own(graph, inductor_config.multi_kernel_hints) if rec.sites else ())
            tuned = len({node for node, hint in rec.timings if hint is not None})
            cap._say(f"compiled {rec.name} in {time.monotonic() - rec.started:.0f} s: {len(rec.sites)} size-hint "
                     f"multi-kernel{'s' if len(rec.sites) != 1 else ''}, {tuned} GEMM template"
                     f"{'s' if tuned != 1 else ''} autotuned at the hints")
            return mod
        return wrapped

    def mtb_init(orig: Any) -> Any:
        def wrapped(node: Any, *a: Any, **k: Any) -> None:
            orig(node, *a, **k)
            cap = _active()
            if cap is not None:
                from torch._inductor.virtualized import V

                cap._graph_for(V.graph).templates += 1
        return wrapped

    def choice_timings(orig: Any) -> Any:
        def wrapped(node: Any, hint_override: int | None = None) -> Any:
            cap = _active()
            if cap is None:
                return orig(node, hint_override)
            fresh = hint_override not in node._choice_timings
            if fresh:
                cap.autotuning = Autotuning(node.get_name(), _op_of(node), hint_override)
                cap.configs = None
                cap._say(cap._autotuning_text())
            try:
                timings = orig(node, hint_override)
            except BaseException:
                rec = cap.current()
                if rec is not None and rec.died_at is None:
                    rec.died_at = Autotuning(node.get_name(), _op_of(node), hint_override)
                raise
            cap.autotuning = None
            rec = cap.current()
            if rec is not None and fresh:
                rec.tables[(node.get_name(), hint_override)] = timings
                rec.timings[(node.get_name(), hint_override)] = [
                    AutotuneChoice(
                        str(getattr(c, "name", c)), str(getattr(c, "description", "")),
                        float(t) if t is not None else None,
                        type(c).__name__ == "TritonTemplateCaller",
                    )
                    for c, t in timings.items()
                ]
            return timings
        return wrapped

    def finalize(orig: Any) -> Any:
        def wrapped(node: Any, callers: dict[int | None, Any]) -> None:
            orig(node, callers)
            cap = _active()
            rec = cap.current() if cap is not None else None
            if rec is not None:
                rec.finalized.add(node.get_name())
                for hint, c in callers.items():
                    rec.emitted[(node.get_name(), hint)] = (
                        str(getattr(c, "name", c)), str(getattr(c, "description", "")))
                    key, now = (node.get_name(), hint), getattr(node, "_choice_timings", {}).get(hint)
                    if now is not None and now is not rec.tables.get(key, now):
                        rec.fused[key] = _fused_times(now)
                    else:  # the last finalizing is the kernel Inductor generates
                        rec.fused.pop(key, None)
        return wrapped

    def make_key(orig: Any) -> Any:
        def wrapped(sched: Any, node: Any, hint: int) -> Any:
            key = orig(sched, node, hint)
            cap = _active()
            rec = cap.current() if cap is not None else None
            if rec is not None:
                p = rec.pending.setdefault(node.get_name(), {"hint_keys": {}})
                p["hint_keys"][hint] = key
                if "tensors" not in p:
                    shapes = sched._get_multikernel_shapes(node)
                    names = [_node_name(i) for i in node.inputs] + [node.get_name()]
                    roles = ["input"] * len(node.inputs) + ["output"]
                    p["tensors"] = [
                        (n, r, tuple(s) if s is not None else ())
                        for n, r, s in zip(names, roles, shapes)
                    ]
                    p["op"] = _op_of(node)
                    p["origin"] = None
                    with contextlib.suppress(Exception):  # metadata is optional in FX
                        p["origin"] = origin_of(node)
            return key
        return wrapped

    def mk_init(orig: Any) -> Any:
        def wrapped(mk: Any, kernels: dict[Any, Any]) -> None:
            orig(mk, kernels)
            cap = _active()
            rec = cap.current() if cap is not None else None
            if rec is not None:
                cap._site(rec, mk)
        return wrapped

    _patch(GraphLowering, "compile_to_module", compile_to_module)
    _patch(mtb, "__init__", mtb_init)
    _patch(mtb, "choice_timings", choice_timings)
    _patch(mtb, "finalize_as_triton_callers", finalize)
    _patch(simd.SIMDScheduling, "_make_shape_cache_key", make_key)
    _patch(multi_kernel.SizeHintMultiKernel, "__init__", mk_init)
    _count_configs()
    precompile.install(lambda: _active() is not None)


def _count_configs() -> None:
    """Count the configs an autotuning times in this process, for its progress line:
    `benchmark_choices` gets them all, `benchmark_choice` times one (each where this torch
    has it; the autotune subprocess's are not counted)."""
    from torch._inductor import select_algorithm as sa

    asc = sa.AlgorithmSelectorCache
    if not (hasattr(asc, "benchmark_choices") and hasattr(asc, "benchmark_choice")):
        return
    many, one = asc.benchmark_choices, asc.benchmark_choice

    def benchmark_choices(cls: Any, choices: Any, *a: Any, **k: Any) -> Any:
        cap = _active()
        if cap is not None and cap.autotuning is not None:
            cap._counted(0, len(choices))
        return many.__func__(cls, choices, *a, **k)

    def benchmark_choice(cls: Any, choice: Any, *a: Any, **k: Any) -> Any:
        try:
            return one.__func__(cls, choice, *a, **k)
        finally:
            cap = _active()
            if cap is not None and cap.autotuning is not None and cap.configs is not None:
                cap._counted(min(cap.configs[0] + 1, cap.configs[1]), cap.configs[1])

    asc.benchmark_choices = classmethod(benchmark_choices)
    asc.benchmark_choice = classmethod(benchmark_choice)
