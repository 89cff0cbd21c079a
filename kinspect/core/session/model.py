"""The session: everything one recording knows, as plain data.

A session is what `kinspect record` writes and what the inspector, `explain` and the
exports read, with or without a GPU. It holds compile-time facts (symbols, sites and
their variants), run-time facts (dispatch events, measurements) and kinspect's findings.
Reading and writing live in `kinspect.core.session.format`; this module only models.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from kinspect.core.dispatch.decision import Decision, decide
from kinspect.core.dispatch.hint_sizes import Assignment, same_sizes
from kinspect.core.dispatch.reach import never_sent, unreachable
from kinspect.core.dispatch.operands import operand_names
from kinspect.core.errors import KinspectError, ShapeError
from kinspect.core.dispatch.shapes import FullKey, Key, ParsedShape, SymbolShape
from kinspect.core.dispatch.symbolic import SizeOverflow, TensorSpec
from kinspect.core.session.benchmark_tensors import TemplateMisfit
from kinspect.core.session.runtime import Baseline, DispatchEvent, Measurement, Recompile, Sweep
from kinspect.core.session.timings import KeyTimings, first_of_kernel, key_timings, per_site, timings_by_key

FORMAT = "kinspect-session"
VERSION = 2
"""The session format version kinspect writes: measurements became columns in version 2."""
READ_VERSIONS = (1, 2)
"""The versions it reads (version 1 holds measurements as a list of objects)."""


@dataclass(frozen=True)
class Environment:
    """Where a recording was made; shown in the banner of a recorded session."""

    created: str
    torch: str | None = None
    triton: str | None = None
    python: str | None = None
    gpu: str | None = None
    cuda: str | None = None
    platform: str | None = None
    config: Mapping[str, Any] = field(default_factory=dict)
    peaks: Mapping[str, float] = field(default_factory=dict)
    """Measured ceilings of the GPU (`tflops_bf16`, `gbps`), for share-of-peak figures."""
    rank: int | None = None
    """The process's rank in a torchrun job (RANK); None outside one."""
    world_size: int | None = None
    """How many ranks the job had (WORLD_SIZE), so a merged view can say which are missing."""
    local_rank: int | None = None
    """The rank on its host (LOCAL_RANK): the CUDA device it was pinned to, which `gpu` names."""


@dataclass(frozen=True)
class ModelInfo:
    path: str | None = None
    name: str | None = None
    hints: tuple[int, ...] = ()
    workload: tuple[Mapping[str, int], ...] = ()

    @cached_property
    def distinct_steps(self) -> dict[tuple[tuple[str, int], ...], int]:
        """Each distinct set of sizes of the workload and how many steps run it: a workload
        of a million steps repeats a few sizes, and readers need each once."""
        return dict(Counter(map(tuple, map(operator.methodcaller("items"), self.workload))))

    @property
    def title(self) -> str:
        """What a user calls the model: its file's name (`mlp` for samples/mlp.py), as
        `name` is the variable compiled (`model`)."""
        if self.path:
            stem = self.path.replace("\\", "/").rsplit("/", 1)[-1]
            return stem[:-3] if stem.endswith(".py") else stem
        return self.name or "session"


@dataclass(frozen=True)
class SymbolInfo:
    """A symbol of the compiled graph and where it came from in the user's inputs."""

    name: str
    """Inductor's name (`s97`)."""
    alias: str | None = None
    """The user's name for it, from the model file's input builder (`B`)."""
    sources: tuple[str, ...] = ()
    """Dynamo's source names (`L['x'].size()[0]`)."""
    input: str | None = None
    dim: int | None = None
    example: int | None = None

    @property
    def label(self) -> str:
        return self.alias or self.name


@dataclass(frozen=True)
class AutotuneRow:
    """One benchmarked choice in the per-hint autotune table."""

    name: str
    time_us: float | None
    description: str = ""


@dataclass(frozen=True)
class Variant:
    index: int
    hint: int | None
    key: Key | None
    kernel_name: str
    source: str = ""
    source_hash: str = ""
    config: Mapping[str, Any] = field(default_factory=dict)
    autotune: tuple[AutotuneRow, ...] = ()
    winner: str | None = None
    """Name of the fastest Triton choice in this hint's autotune table."""
    emitted: str | None = None
    """Name of the choice Inductor finalized for this hint (the kernel it generated)."""
    source_path: str | None = None
    fused: tuple[AutotuneRow, ...] = ()
    """Where Inductor's fusion benchmark chose this variant: the time it gave each of the hint's
    choices compiled with the ops fused into the kernel, fastest first (empty: chosen by the
    autotune table, which times the GEMM alone)."""

    @property
    def label(self) -> str:
        return f"v{self.index} (hint {self.hint})" if self.hint is not None else f"v{self.index}"

    @property
    def identity(self) -> tuple[str, tuple[tuple[str, str], ...]]:
        """What makes two variants one kernel: the same source (its hash, else the text,
        else the kernel's name) and the same config."""
        code = self.source_hash or self.source or self.kernel_name
        return code, tuple(sorted((k, repr(v)) for k, v in self.config.items()))


@dataclass(frozen=True)
class CallSite:
    """One place the wrapper calls a site from: in a transformer, one layer's GEMM.

    Inductor defines one multi-kernel per distinct set of kernels, so repeated layers
    share it (`multi_kernel_0.run(...)` on twelve lines) and with it one shape cache: the
    first call at a new shape decides the variant for every later call at that shape."""

    index: int
    node: str | None = None
    """Inductor's template buffer behind this call (`buf3`)."""
    call: str | None = None
    """The wrapper line that launches it (`multi_kernel_0.run(arg7_1, buf3, ...)`)."""
    line: int | None = None
    """That line's number in the graph's wrapper code."""
    module: str | None = None
    """The module path in the user's model (`h.0.attn.c_attn`); "" for the root module."""
    module_class: str | None = None
    file: str | None = None
    """The user's source file that made the call, and its line and text."""
    lineno: int | None = None
    code: str | None = None

    @property
    def label(self) -> str:
        """What a user calls this place: the module path, else Inductor's buffer."""
        if self.module:
            if self.module_class and not any(ch.isalpha() for ch in self.module):
                return f"{self.module} ({self.module_class})"  # `0 (Linear)`: an index alone says little
            return self.module
        if self.module == "" and self.module_class:
            return self.module_class
        return self.node or f"call {self.index}"

    @property
    def where(self) -> str | None:
        """`modeling_gpt2.py:312`, the user's line, when the compile recorded it."""
        if self.file is None:
            return None
        name = self.file.replace("\\", "/").rsplit("/", 1)[-1]
        return f"{name}:{self.lineno}" if self.lineno is not None else name


@dataclass(frozen=True)
class Site:
    """One size-hint multi-kernel: a GEMM template with one variant per hint, called from
    one or more places in the wrapper (`call_sites`), all sharing its shape cache."""

    name: str
    graph: str
    op: str
    tensors: tuple[TensorSpec, ...]
    variants: tuple[Variant, ...]
    runtime_tensors: tuple[TensorSpec, ...] | None = None
    """The tensors whose shapes Inductor keys on at run time, when they differ from
    `tensors` (an epilogue that brings its own input adds one)."""
    call: str | None = None
    """The wrapper line that launches it (the first call site's, for one-line views)."""
    call_sites: tuple[CallSite, ...] = ()
    """Where the wrapper calls it from, in wrapper order; empty in sessions recorded
    before kinspect told call sites apart (read as one unnamed call site)."""

    @cached_property
    def keys(self) -> tuple[Key | None, ...]:
        return tuple(v.key for v in self.variants)

    @property
    def runtime_specs(self) -> tuple[TensorSpec, ...]:
        """The tensors whose shapes make the key Inductor sees at run time."""
        return self.runtime_tensors if self.runtime_tensors is not None else self.tensors

    @cached_property
    def symbols(self) -> frozenset[str]:
        specs = self.runtime_specs
        return frozenset().union(*(t.symbols for t in specs), *(t.symbols for t in self.tensors))

    def runtime_key(self, env: Mapping[str, int]) -> Key:
        """The key this site sees at `env`'s sizes, each set of its sizes worked out once:
        quality reads name each measured key by the workload's sizes and weigh it by them
        too, for every site (a workload of 5,000 distinct sizes: 30,000 evaluations)."""
        sizes = frozenset((k, v) for k, v in env.items() if k in self.symbols)
        key = self._runtime_keys.get(sizes)
        if key is None:
            specs = self.runtime_specs
            key = self._runtime_keys[sizes] = tuple(t.runtime_shape(env) for t in specs)
        return key

    @cached_property
    def _runtime_keys(self) -> dict[frozenset[tuple[str, int]], Key]:
        return {}

    def symbol_values(self, key: Key) -> dict[str, int]:
        """Symbol values readable off a runtime key: wherever a dim's size is exactly one
        symbol, the key holds its value. Symbols only inside expressions stay unknown, and
        so does every symbol of a key laid out otherwise than the site's tensors: a shared
        kernel called with a 4-D input where its hint keys have a 3-D one (Llama's o_proj,
        `(2, 8, 64, 64)`) holds the heads, not the sequence, where S would be."""
        if not self.lines_up(key):
            return {}
        out: dict[str, int] = {}
        for name, i, j in self.symbol_dims:
            out.setdefault(name, key[i][j])
        return out

    def lines_up(self, key: Key) -> bool:
        """Whether `key` has the site's tensors with their ranks, so its dims can be read
        by position."""
        return tuple(map(len, key)) == self.runtime_ranks

    @cached_property
    def runtime_ranks(self) -> tuple[int, ...]:
        specs = self.runtime_specs
        return tuple(len(t.sizes) for t in specs)

    @cached_property
    def symbol_dims(self) -> tuple[tuple[str, int, int], ...]:
        """Each runtime dim whose size is one symbol: (symbol, tensor, dim), in key order
        (naming a sweep's keys reads hundreds of thousands of them)."""
        specs = self.runtime_specs
        return tuple((expr.tree, i, j) for i, spec in enumerate(specs)
                     for j, expr in enumerate(spec.sizes) if isinstance(expr.tree, str))

    @cached_property
    def kernels(self) -> tuple[int, ...]:
        """Each variant's kernel: the index of the first variant with its source and config."""
        return first_of_kernel([v.identity for v in self.variants])

    def kernel_members(self, variant: int) -> tuple[int, ...]:
        """Every variant that runs the same kernel as `variant`, itself included."""
        k = self.kernels[variant]
        return tuple(i for i, x in enumerate(self.kernels) if x == k)

    def kernel_label(self, variant: int) -> str:
        """`v1 = v2 (hints 256, 4096)` for one kernel emitted at several hints."""
        members = self.kernel_members(variant)
        if len(members) == 1:
            return self.variants[variant].label
        hints = [self.variants[i].hint for i in members]
        names = " = ".join(f"v{i}" for i in members)
        return names + (f" (hints {', '.join(str(h) for h in hints)})" if all(h is not None for h in hints) else "")

    def decide(self, runtime: Key, heuristic: str = "inductor") -> Decision:
        return decide(self.keys, runtime, heuristic)

    def keyed_by_hint(self, v: Variant) -> bool:
        """Whether Inductor keyed a hint's variant by its stock rule (2.11 to 2.15), the hint
        for every size expression that is not constant, so a dim such as `B*S` holds the
        hint where the kernel computes more; False for a key at the sizes the kernel
        computes (an Inductor that evaluates a hint per symbol, which sessions on it record
        too). True where the key does not say: nothing shows another rule."""
        if v.hint is None:
            return False
        specs = None if v.key is None else self.specs_of(v.key)
        return specs is None or v.key == tuple(t.key_at_hint(v.hint) for t in specs)

    def specs_of(self, key: Key) -> tuple[TensorSpec, ...] | None:
        """The tensors a variant's key was made from: the site's (or its runtime tensors)
        whose ranks the key has; None where neither lines up."""
        ranks = tuple(map(len, key))
        for specs in (self.tensors, self.runtime_tensors):
            if specs is not None and tuple(len(t.sizes) for t in specs) == ranks:
                return specs
        return None

    def labels(self) -> list[str]:
        return [v.label for v in self.variants]

    def call_site(self, index: int | None) -> CallSite | None:
        if index is None or not 0 <= index < len(self.call_sites):
            return None
        return self.call_sites[index]

    @property
    def title(self) -> str:
        """The site as a user names it: its first call site's module, and how many more."""
        if not self.call_sites:
            return self.name
        first = self.call_sites[0].label
        more = len(self.call_sites) - 1
        return first + (f" +{more}" if more else "")


COMPILE_DIED = "Inductor raised before it wrote this graph's code"
"""How a graph's no-site reason begins where its compile died (a recording saves it)."""


@dataclass(frozen=True)
class Graph:
    name: str
    wrapper_path: str | None = None
    sites: tuple[str, ...] = ()
    no_site_reason: str | None = None
    """Why this graph has no size-hint multi-kernel, when it has none."""
    wrapper_code: str | None = None
    """The output code Inductor wrote (the wrapper file lives on the recording machine)."""
    misfits: tuple[TemplateMisfit, ...] = ()
    """The benchmark tensors of this compile that did not hold what their kernel reads at a hint."""
    hint_sizes: tuple[Assignment, ...] = ()
    """The size of each symbol this graph's variants were tuned, keyed and launched at, per
    hint (`--one-size-per-symbol`); none where Inductor's own rule applied."""
    parameters: Mapping[str, str] = field(default_factory=dict)
    """Each wrapper input that is a module's parameter, by its path in the model
    (`arg8_1` -> `transformer.h.0.attn.c_attn.weight`), where the compile said (a trace's
    Dynamo graph does): a GEMM is named by the module whose weight it reads."""

    @property
    def died(self) -> bool:
        """Its compile raised before Inductor wrote its code (a stock compile that faulted
        at a hint, say)."""
        return bool(self.no_site_reason and self.no_site_reason.startswith(COMPILE_DIED))


SEVERITIES = ("info", "warning", "error")


@dataclass(frozen=True)
class Finding:
    """Something kinspect noticed, stated in one sentence a user can act on."""

    kind: str
    message: str
    severity: str = "warning"
    site: str | None = None
    graph: str | None = None
    variants: tuple[int, ...] = ()


@dataclass
class Session:
    environment: Environment
    model: ModelInfo = field(default_factory=ModelInfo)
    symbols: list[SymbolInfo] = field(default_factory=list)
    graphs: list[Graph] = field(default_factory=list)
    sites: list[Site] = field(default_factory=list)
    events: Sequence[DispatchEvent] = field(default_factory=list)
    measurements: list[Measurement] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    baselines: list[Baseline] = field(default_factory=list)
    sweeps: list[Sweep] = field(default_factory=list)
    recompiles: list[Recompile] = field(default_factory=list)
    truncated: str | None = None
    """Set when the file was cut short (a killed recording): what was lost, in words."""
    _timings: _Timings | None = field(default=None, init=False, repr=False, compare=False)
    """`timings()` with the measurements and sites it was read from (`timings` says why)."""

    def site(self, name: str) -> Site:
        for s in self.sites:
            if s.name == name:
                return s
        known = ", ".join(s.name for s in self.sites) or "none"
        raise KinspectError(f"no site named {name!r}; this session has: {known}")

    def hint_assignments(self, site: Site) -> tuple[Assignment, ...]:
        """The sizes the site's variants were tuned at, per hint, where the session records
        them (`--one-size-per-symbol`); none for Inductor's own rule."""
        for g in self.graphs:
            if g.name == site.graph:
                return g.hint_sizes
        return ()

    def tuned_sizes(self, site: Site) -> dict[int, Mapping[str, int]]:
        """Each hint's symbol sizes the site's variants were tuned at (`hint_assignments`)."""
        return {a.hint: a.values for a in self.hint_assignments(site)}

    def stands_for(self, site: Site) -> list[frozenset[int]]:
        """Per variant, the compiled hints it stands for: its own, and each hint tuned at the
        same sizes, which keys alike and so has no variant of its own (Inductor keeps one
        kernel per key, the last hint's: `--one-size-per-symbol` lowering 4096 to 256's sizes)."""
        group = {h: g for g in same_sizes(self.tuned_sizes(site)) for h in g}
        own = {v.hint for v in site.variants}
        return [frozenset(h for h in group.get(v.hint, (v.hint,)) if h is not None and (h == v.hint or h not in own))
                for v in site.variants]

    def symbol_names(self) -> list[str]:
        """What a user may type on the left of `=`: aliases first, Inductor names too."""
        out = [s.alias for s in self.symbols if s.alias]
        out += [s.name for s in self.symbols if s.name not in out]
        return out

    def symbols_by_name(self) -> dict[str, SymbolInfo]:
        """Each symbol by every name a user may give it: Inductor's, and the user's where no
        symbol has that name already."""
        by_name: dict[str, SymbolInfo] = {}
        for s in self.symbols:
            by_name[s.name] = s
            if s.alias:
                by_name.setdefault(s.alias, s)
        return by_name

    def resolve(self, values: Mapping[str, int]) -> dict[str, int]:
        """Map user-typed names (alias or Inductor name) to Inductor symbol values."""
        by_name = self.symbols_by_name()
        env: dict[str, int] = {}
        given: dict[str, str] = {}
        for typed, value in values.items():
            sym = by_name.get(typed)
            if sym is None:
                known = ", ".join(s.label for s in self.symbols) or "none"
                raise ShapeError(f"unknown symbol {typed}; this session has: {known}")
            if sym.name in env and env[sym.name] != value:
                first = given[sym.name]
                raise ShapeError(f"{first}={env[sym.name]} and {typed}={value} are the same size "
                                 f"({sym.label}, Inductor's {sym.name}): give it once")
            env[sym.name] = value
            given.setdefault(sym.name, typed)
        return env

    def runtime_key(self, site: Site, shape: ParsedShape) -> Key:
        """The runtime key a site sees for a typed shape; errors say what is missing."""
        if isinstance(shape, FullKey):
            specs = site.runtime_specs
            why = unreachable(specs, shape.key, operand_names(site.op, specs), self.aliases)
            if why is not None:
                named = site.name if site.title == site.name else f"{site.name} ({site.title})"
                raise ShapeError(f"this key does not fit {named}: {why}")
            return shape.key
        assert isinstance(shape, SymbolShape)
        return self.site_key(site, self.resolve(shape.values))

    def site_key(self, site: Site, env: Mapping[str, int]) -> Key:
        """The runtime key a site sees at sizes already resolved (`resolve`): the
        inspector resolves a typed shape once and reads every site's key from that."""
        missing = sorted(site.symbols - env.keys())
        if missing:
            names = ", ".join(self.label_of(m) for m in missing)
            raise ShapeError(f"{site.name} needs a value for {names}")
        why = never_sent({k: v for k, v in env.items() if k in site.symbols}, self.aliases)
        if why is not None:
            raise ShapeError(why)
        try:
            return site.runtime_key(env)
        except SizeOverflow as e:
            raise e.named(self.aliases) from None

    @property
    def compiled_hints(self) -> tuple[int, ...]:
        """The hints this compile had, in order: the model's, else its variants'."""
        return tuple(sorted(self.model.hints or {v.hint for s in self.sites for v in s.variants if v.hint}))

    @property
    def advisable_program(self) -> str | None:
        """The program a `kinspect run` recording ran, where kinspect set its hints, so that
        `kinspect advise --run` can try others; None for a model file's recording or a
        program that sets its own hints (which kinspect keeps)."""
        return self.model.path if self.environment.config.get("hints_added_by_kinspect") is True else None

    @property
    def aliases(self) -> dict[str, str]:
        """Inductor's symbol names to the user's (`s33` to `B`), where the model named them."""
        return {s.name: s.alias for s in self.symbols if s.alias}

    def in_order(self, sizes: Mapping[str, int]) -> dict[str, int]:
        """Sizes by the user's names in the order of the session's symbols (Dynamo's: the
        batch before the sequence), any other name after them by name."""
        rank = {s.label: i for i, s in enumerate(self.symbols)}
        return dict(sorted(sizes.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))

    def label_of(self, symbol: str) -> str:
        for s in self.symbols:
            if s.name == symbol:
                return s.alias or s.name
        return symbol

    def baselines_at(self, sizes: Mapping[str, int]) -> list[Baseline]:
        """The latest baseline of each kind (a fresh `hinted` compile and the inspected one
        apart) taken where the model's sizes include `sizes` (by the model's size names or
        the symbols they alias): baselines are whole-model figures, not a site's."""
        aliases = self.aliases
        want = {aliases.get(k, k): v for k, v in sizes.items()}
        latest: dict[tuple[str, bool], Baseline] = {}
        for b in self.baselines:
            if all(b.sizes.get(k) == v for k, v in want.items()):
                latest.pop((b.kind, b.inspected), None)
                latest[(b.kind, b.inspected)] = b
        return list(latest.values())

    def measurements_at(self, site: str, key: Key, method: str | None = None) -> dict[int, Measurement]:
        """The measurement of each variant of a site at a key that counts there (see
        `kinspect.core.session.timings`); with `method`, the latest by that method alone."""
        return dict(self.timings_at(site, key, method).measured)

    def timings_at(self, site: str, key: Key, method: str | None = None) -> KeyTimings:
        """Fastest, regret and the noise rule at a site and key: `kinspect.core.session.timings`."""
        kernels = self.kernels.get(site, ())
        if method is None:  # the table read once (`timings()`) holds every measured key: a keystroke asks per site
            return self._timings_now().table.get((site, key)) or key_timings((), None, kernels)
        return key_timings((m for m in self.measurements if m.site == site and m.key == key), method, kernels)

    @property
    def kernels(self) -> dict[str, tuple[int, ...]]:
        """Per site, each variant's kernel (`Site.kernels`), for `timings_by_key`."""
        return {s.name: s.kernels for s in self.sites}

    def timings(self) -> dict[tuple[str, Key], KeyTimings]:
        """Every measured (site, key) read by the one rule (`timings_by_key`), one kernel as one.

        Opening a session asks for these several times (each finding rule, the explain
        table, the inspector, the debugger's breakpoints), and a long sweep has hundreds of
        thousands of keys, so they are worked out once while the measurements and sites
        are the same objects; a live session that adds measurements gets them afresh."""
        return dict(self._timings_now().table)

    def timings_per_site(self) -> dict[str, dict[tuple[str, Key], KeyTimings]]:
        """`timings()` split by site (`timings.per_site`), split once as they are read once:
        the quality overview and the far-below-peak rule both go site by site."""
        return {name: dict(part) for name, part in self._split().items()}

    def site_timings(self, site: str) -> Mapping[tuple[str, Key], KeyTimings]:
        """One site's part of `timings_per_site()`, not copied: for reads that only look."""
        return self._split().get(site, {})

    def _split(self) -> dict[str, dict[tuple[str, Key], KeyTimings]]:
        memo = self._timings_now()
        if memo.per_site is None:
            memo.per_site = per_site(memo.table)
        return memo.per_site

    def from_timings(self, name: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        """`make()`, worked out once while the measurements and sites stand (as `timings()`):
        the findings, explain and the inspector each ask for a site's measured points, which
        a 300,000-key sweep takes seconds to work out. Only for what depends on nothing else."""
        derived = self._timings_now().derived
        if name not in derived:
            derived[name] = make()
        return derived[name]

    def forget_derived(self) -> None:
        """Work `from_timings` out afresh: what it keeps names sizes, and their names changed."""
        if self._timings is not None:
            self._timings.derived.clear()

    def _timings_now(self) -> _Timings:
        memo = self._timings
        if memo is None or not (_same(memo.measurements, self.measurements) and _same(memo.sites, self.sites)):
            memo = self._timings = _Timings(list(self.measurements), list(self.sites),
                                            timings_by_key(self.measurements, self.kernels))
        return memo


@dataclass
class _Timings:
    """A session's timings with the measurements and sites they were read from."""

    measurements: list[Measurement]
    sites: list[Site]
    table: dict[tuple[str, Key], KeyTimings]
    per_site: dict[str, dict[tuple[str, Key], KeyTimings]] | None = None
    derived: dict[tuple[Any, ...], Any] = field(default_factory=dict)


def _same(was: Sequence[object], now: Sequence[object]) -> bool:
    """The same objects in the same order (these records are frozen: the same object is
    the same record)."""
    return len(was) == len(now) and all(map(operator.is_, was, now))
