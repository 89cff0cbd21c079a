"""Inductor's benchmark tensors at a size hint, checked and (opt-in) made to fit.

To autotune a GEMM template at a hint, Inductor builds example tensors and launches each
config on them with the hint for every size argument. Two paths build those tensors:

- in its own process, `AlgorithmSelectorCache.benchmark_example_value` (through
  `get_inputs`) puts the hint in for every non-constant expression, strides included,
  so `torch.bmm(q, k.transpose(1, 2))` at S=4096 gets stride 4096 where the kernel
  indexes with `128*S`;
- with `autotune_in_subproc`, each `TritonTemplateCaller`'s `bmreq` describes them by
  `TensorMeta.from_irnodes`, which applies no hint at all: the example size.

`watching(sink, fit)` wraps both, for the calling thread: every tensor a template is timed
on at a hint is checked against what the kernel reads there (the rule is
`kinspect.core.quality.benchmark_tensors`), each misfit goes to `sink`, and with `fit` the tensor
(or the subprocess's description of it) gets the storage the kernel reads, its shape and
strides left as Inductor made them: the kernel indexes with its own strides from its
base pointer, so only the storage was short. Keys, kernels and size arguments are
Inductor's own. Outside `watching`, every wrapper only calls Inductor.

A config that still faults in the autotune subprocess must cost only itself: a CUDA fault
is sticky, so the child's context then fails every later benchmark it runs, and one
faulting config at one hint would fail every config of every later GEMM of the compile
(`NoValidChoicesError`). While a fit is on, a child whose benchmark died of a sticky fault
is restarted before it runs the next one, and a restart Inductor asks for right after that
one is not made twice. (samples/generate.py's faults on the H200 came from its B*S rows:
the kernel's tiles reach past the grid's rows there, which the rule now sizes for.)
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from kinspect.core.quality import benchmark_tensors as rule
from kinspect.inductor.hooks.fixes import hint_sizes


@dataclass(frozen=True)
class Seen:
    """A misfit with the template it belongs to: its inputs' names (bases, as the site's
    tensors name them) and the tensor's place (an input's index, or None: the output)."""

    inputs: tuple[str, ...]
    index: int | None
    misfit: rule.Misfit
    fitted: bool
    operands: tuple[Operand, ...] = ()
    """Every input of the template, for a reproducer."""


@dataclass(frozen=True)
class Operand:
    """A template input as a standalone script rebuilds it: its base tensor's sizes and
    dtype, and the view the template reads."""

    base: tuple[str, ...]
    view: rule.Layout
    dtype: str


_local = threading.local()
_lock = threading.Lock()
_installed = False
_fitting = 0
"""Fits in progress on any thread: the autotune pool's threads, which run the subprocess's
benchmarks, see no thread-local watch."""

STICKY_FAULTS = ("illegal memory access", "misaligned address", "unspecified launch failure",
                 "illegal instruction", "device-side assert")
"""CUDA errors after which a context fails every later call."""


@contextlib.contextmanager
def watching(sink: Callable[[Seen], None], fit: bool = False) -> Iterator[None]:
    """Check (and with `fit`, fit) every benchmark tensor built on this thread meanwhile."""
    global _fitting
    _install()
    prev = getattr(_local, "watch", None)
    _local.watch = (sink, fit)
    with _lock:
        _fitting += fit
    try:
        yield
    finally:
        _local.watch = prev
        with _lock:
            _fitting -= fit


def _watch() -> tuple[Callable[[Seen], None], bool] | None:
    return getattr(_local, "watch", None)


def _in_subproc() -> bool:
    import torch._inductor.config as cfg

    return bool(getattr(cfg, "autotune_in_subproc", False))


def _base_name(node: Any) -> str:
    from torch._inductor import ir

    if isinstance(node, ir.BaseView):
        node = node.unwrap_view()
    with contextlib.suppress(Exception):
        return str(node.get_name())
    return type(node).__name__


def _view(node: Any) -> tuple[rule.Layout, Any, Any, Any]:
    """The layout the template reads (a view's own), and its size, stride and offset exprs."""
    from torch._inductor import ir

    layout = node if isinstance(node, ir.Layout) else node.get_layout()
    size = list(layout.size) if isinstance(node, ir.Layout) else list(node.get_size())
    stride = list(layout.stride) if isinstance(node, ir.Layout) else list(node.get_stride())
    offset = layout.offset
    return rule.Layout(tuple(map(str, size)), tuple(map(str, stride)), str(offset)), size, stride, offset


def _inductor_view(size: Any, stride: Any, offset: Any, hint: int | None) -> rule.Concrete:
    """The view as Inductor evaluates it with this hint override (None: no override)."""
    from torch._inductor.virtualized import V

    sv = V.graph.sizevars
    if hint is None:
        s, st, off = sv.optimization_hints(size), sv.optimization_hints(stride), sv.optimization_hint(offset)
    else:
        s = sv.optimization_hints_with_override(size, hint_override=hint)
        st = sv.optimization_hints_with_override(stride, hint_override=hint)
        off = sv.optimization_hint_with_override(offset, hint_override=hint)
    return rule.Concrete(tuple(map(int, s)), tuple(map(int, st)), int(off), 0)


def _tensor_facts(t: Any) -> rule.Concrete:
    """A built tensor: shape, strides, and the storage from its data pointer on."""
    elems = t.untyped_storage().nbytes() // t.element_size() - t.storage_offset()
    return rule.Concrete(tuple(t.shape), tuple(t.stride()), int(t.storage_offset()), int(elems))


def _check(node: Any, hint: int, given: rule.Concrete, built_at: int | None, path: str) -> rule.Misfit | None:
    """The rule on one tensor; None also where the IR cannot say (checking never stops a compile)."""
    from torch._inductor import ir
    from torch._inductor.virtualized import V

    try:
        layout, size, stride, offset = _view(node)
        extent = V.graph.sizevars.optimization_hints_with_override(size, hint_override=hint)
        name = "out" if isinstance(node, ir.Layout) else _base_name(node)
        return rule.check(name, layout, hint, extent, given, _inductor_view(size, stride, offset, built_at), path,
                          hint_sizes.named(V.graph.sizevars, hint))
    except Exception:  # an IR node of a kind without a plain layout, or an expression sympy cannot evaluate
        return None


def _operands(nodes: Any) -> tuple[Operand, ...]:
    from torch._inductor import ir

    out = []
    try:
        for n in nodes:
            base = n.unwrap_view() if isinstance(n, ir.BaseView) else n
            out.append(Operand(tuple(map(str, base.get_size())), _view(n)[0], str(n.get_dtype()).replace("torch.", "")))
    except Exception:  # a node kind without a plain layout: no reproducer for it
        return ()
    return tuple(out)


# ---------------------------------------------------------------- in Inductor's process

def _arguments(fn: Any, args: Any, kwargs: Any) -> dict[str, Any]:
    """The call's arguments by name (torch releases move them between positions)."""
    bound = inspect.signature(fn).bind_partial(*args, **kwargs)
    return bound.arguments


def _get_inputs(orig: Any) -> Any:
    def wrapped(cls: Any, *a: Any, **k: Any) -> Any:
        args = _arguments(orig, a, k) if _watch() is not None else {}
        nodes, hint = args.get("input_nodes"), args.get("hint_override")
        if nodes is None or hint is None or _in_subproc():
            return orig(*a, **k)
        prev = getattr(_local, "inputs", None)
        _local.inputs = ({_base_name(n): i for i, n in enumerate(nodes)},
                         tuple(_base_name(n) for n in nodes), _operands(nodes))
        try:
            return orig(*a, **k)
        finally:
            _local.inputs = prev
    return classmethod(wrapped)


def _example_value(orig: Any) -> Any:
    def wrapped(node: Any, hint_override: int | None = None) -> Any:
        t = orig(node, hint_override=hint_override)
        watch, inputs = _watch(), getattr(_local, "inputs", None)
        if watch is None or hint_override is None or inputs is None:
            return t
        sink, fit = watch
        m = _check(node, hint_override, _tensor_facts(t), hint_override, "in-process")
        if m is None:
            return t
        index = None if m.tensor == "out" else inputs[0].get(m.tensor)
        fitted = None
        if fit and m.short:
            with contextlib.suppress(Exception):  # no fitted tensor (out of memory): Inductor's, and said so
                fitted = _with_storage(t, m.needed.storage)
        sink(Seen(inputs[1], index, m, fitted is not None, inputs[2]))
        return t if fitted is None else fitted
    return staticmethod(wrapped)


def _with_storage(t: Any, needed: int) -> Any:
    """The same shape and strides on storage holding `needed` elements from its start."""
    import torch
    from torch._dynamo.testing import rand_strided
    from torch._dynamo.utils import preserve_rng_state

    used = rule.required_storage(tuple(t.shape), tuple(t.stride()))
    with preserve_rng_state():
        dtype = t.dtype if t.dtype.is_floating_point or t.dtype.is_complex else torch.float32
        out = rand_strided(tuple(t.shape), tuple(t.stride()), dtype=dtype, device=t.device,
                           extra_size=rule.enlarged(used, needed))
    return out if out.dtype == t.dtype else out.to(t.dtype)


# ---------------------------------------------------------------- the autotune subprocess

def _generate(orig: Any) -> Any:
    def wrapped(template: Any, *a: Any, **k: Any) -> Any:
        caller = orig(template, *a, **k)
        watch = _watch()
        bmreq = getattr(caller, "bmreq", None)
        if watch is None or bmreq is None or not _in_subproc():
            return caller
        args = _arguments(orig, (template, *a), k)
        input_nodes, layout, hint = args.get("input_nodes"), args.get("layout"), args.get("hint_override")
        if hint is None or input_nodes is None or layout is None:
            return caller
        sink, fit = watch
        with contextlib.suppress(Exception):  # checking never stops a compile: Inductor's description stays
            _fit_bmreq(bmreq, input_nodes, layout, hint, sink, fit)
        return caller
    return wrapped


def _fit_bmreq(bmreq: Any, input_nodes: Any, layout: Any, hint: int, sink: Callable[[Seen], None],
               fit: bool) -> None:
    """Check (and fit) the subprocess's description of each tensor, matched to the template's inputs by name."""
    names = tuple(_base_name(n) for n in input_nodes)
    operands = _operands(input_nodes)
    metas = bmreq.input_tensor_meta if isinstance(bmreq.input_tensor_meta, list) else [bmreq.input_tensor_meta]
    by_name = {m.name: i for i, m in enumerate(metas)}
    for index, node in enumerate(input_nodes):
        i = by_name.get(names[index])
        if i is not None:
            metas[i] = _fit_meta(metas[i], node, hint, names, index, sink, fit, operands)
    if isinstance(bmreq.input_tensor_meta, list):
        bmreq.input_tensor_meta = metas
    out = bmreq.output_tensor_meta
    if not isinstance(out, list):
        bmreq.output_tensor_meta = _fit_meta(out, layout, hint, names, None, sink, fit, operands)


def _fit_meta(meta: Any, node: Any, hint: int, names: tuple[str, ...], index: int | None,
              sink: Callable[[Seen], None], fit: bool, operands: tuple[Operand, ...] = ()) -> Any:
    """Check a subprocess tensor description; with `fit`, describe the tensor Inductor's own
    process would build at this hint, with the storage the kernel reads there."""
    from torch._inductor import ir
    from torch._inductor import select_algorithm as sa
    from torch._inductor.virtualized import V

    storage = rule.required_storage(tuple(meta.sizes), tuple(meta.strides)) + int(meta.offset)
    given = rule.Concrete(tuple(meta.sizes), tuple(meta.strides), 0, storage)
    m = _check(node, hint, given, None, "subprocess")
    if m is None:
        return meta
    sink(Seen(names, index, m, fit, operands))
    if not fit:
        return meta
    base = ir.Buffer(name="fake", layout=node) if isinstance(node, ir.Layout) else node
    if isinstance(base, ir.BaseView):
        base = base.unwrap_view()
    sv = V.graph.sizevars
    # The strides benchmark_example_value builds with (torch 2.13 applies layout constraints; 2.11 has none).
    strides_of = getattr(sa, "get_strides_with_layout_constraints", lambda n: n.get_stride())
    sizes = sv.optimization_hints_with_override(base.get_size(), hint_override=hint)
    strides = sv.optimization_hints_with_override(strides_of(base), hint_override=hint)
    used = rule.required_storage(tuple(sizes), tuple(strides))
    return dataclasses.replace(meta, sizes=tuple(sizes), strides=tuple(strides),
                               offset=rule.enlarged(used, m.needed.storage))


def sticky(message: str) -> bool:
    """Whether an error leaves the CUDA context that raised it failing every later call."""
    return any(f in message for f in STICKY_FAULTS)


def _get(orig: Any) -> Any:
    @functools.wraps(orig)
    def wrapped(process: Any, *a: Any, **k: Any) -> Any:
        process.kinspect_restarted = False
        try:
            return orig(process, *a, **k)
        except Exception as e:
            if _fitting and sticky(str(e)) and process.alive():
                # A fresh context for the next config. Killed, not asked to exit: a child
                # whose context faulted has nothing to finish, and may not finish exiting.
                process.kill()
                process.start()
                process.kinspect_restarted = True
            raise
    return wrapped


def _restart(orig: Any) -> Any:
    @functools.wraps(orig)
    def wrapped(process: Any, *a: Any, **k: Any) -> Any:
        if getattr(process, "kinspect_restarted", False):  # this fault's child is already fresh
            process.kinspect_restarted = False
            return None
        return orig(process, *a, **k)
    return wrapped


# ---------------------------------------------------------------- install

def _install() -> None:
    global _installed
    with _lock:
        if _installed:
            return
        from torch._inductor import select_algorithm as sa

        asc = sa.AlgorithmSelectorCache
        # Each path is watched where this torch has it; a missing one is simply not watched.
        if hasattr(asc, "get_inputs") and hasattr(asc, "benchmark_example_value"):
            asc.get_inputs = _get_inputs(asc.get_inputs)
            asc.benchmark_example_value = _example_value(asc.benchmark_example_value)
        if hasattr(sa, "TritonTemplate") and hasattr(sa.TritonTemplate, "generate"):
            sa.TritonTemplate.generate = _generate(sa.TritonTemplate.generate)
        from torch._inductor import autotune_process as ap

        tp = getattr(ap, "TuningProcess", None)
        if tp is not None:
            restart_child_after_faults(tp)
        _installed = True


def restart_child_after_faults(tp: type) -> bool:
    """Wrap a `TuningProcess` class so that a sticky fault costs only its config; False
    where the class lacks what that needs. Older releases' class has no `restart` (they
    never restart the child); a class that has one gets it wrapped too, so that a restart
    it asks for after the same fault is not made twice."""
    if not all(hasattr(tp, n) for n in ("get", "alive", "kill", "start")):
        return False
    tp.get = _get(tp.get)
    if hasattr(tp, "restart"):
        tp.restart = _restart(tp.restart)
    return True


def sentence(seen: Seen, op: str, names: dict[str, str] | None = None) -> str:
    """A misfit in the words of a one-line error: a faulting compile names the benchmark
    tensor that can make its kernel read past its storage at the hint."""
    return rule.message(seen.misfit, op, rule.part(op, seen.index, seen.inputs), names or {})


def short_at(seen: Iterable[Seen], node_inputs: tuple[str, ...] | None, hint: int | None) -> list[Seen]:
    """The misfits that can make a kernel read past its tensor at this hint (of the template
    on these inputs, or of any), for naming a fault's cause."""
    return [s for s in seen
            if s.misfit.short and (hint is None or s.misfit.hint == hint)
            and (node_inputs is None or s.inputs == node_inputs)]
