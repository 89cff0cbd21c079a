"""Recording an unmodified program: whatever it compiles, every size-hint dispatch it makes.

`kinspect run script.py` and `kinspect.recording()` record a program that calls
`torch.compile` itself, with its own settings, shapes and threads, so nothing here may
change what it computes:

- the compile capture and the dispatch recorder are installed for the whole process
  (any thread), and only read what Inductor does;
- a site is known the moment its `SizeHintMultiKernelCall` is created, when a wrapper
  module loads. Created while this process compiles that graph, it gets the compile's
  facts (autotune tables, symbolic sizes, call sites by module path). Loaded from
  Inductor's caches, no compile ran here: it gets what the loaded module holds (its keys,
  its kernels and their sources, the wrapper lines that call it) and a finding saying the
  rest was not seen;
- each site's record goes to the crash-safe log as it loads, before it can dispatch, so
  the log of a program that is killed still opens with its sites and every dispatch but
  those of its last `FLUSH_S` seconds (SIGKILL), or all of them (SIGTERM, where the
  program has no handler of its own: the log is written, then the signal kills it as it
  would have);
- a workload step is a call of a module the program compiled (`torch.compile(model)`,
  an `OptimizedModule`) from outside any other: one forward of a training loop (its
  backward and optimizer step run before the next one), one call of a generation loop.
  It needs nothing from the program, counts the same on every rank of a torchrun job
  (each rank runs the same loop), so the ranks' sessions line up step by step, and a
  recompile for new sizes is still the same entry. A compiled function
  (`torch.compile(fn)`) starts no step;
- with `hints` set, a program that sets no `multi_kernel_hints` is compiled with them
  (and max-autotune with Triton GEMMs), through the config patches of each compile: the
  program's own settings stay as they are, and a program that sets hints keeps its own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import re
import signal
import sys
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kinspect.core.errors import error_line
from kinspect.core.inductor_code.calls import dispatch_lines
from kinspect.core.dispatch.operands import OPERANDS
from kinspect.core.dispatch.symbolic import SizeExpr, TensorSpec
from kinspect.core.quality.findings import derive_findings
from kinspect.core.session.compile_changes import BlockGroup, CompileChanges, layers_config, marked_text
from kinspect.core.recording_files import RecordingFiles
from kinspect.core.session.format.log import LiveLog
from kinspect.core.session.size_names import with_source_names
from kinspect.core.session.model import (
    CallSite,
    Environment,
    Finding,
    Graph,
    ModelInfo,
    Session,
    Site,
    SymbolInfo,
    Variant,
)
from kinspect.inductor.recording import assembly, translate
from kinspect.inductor.hooks.fixes import device_time, fusion_per_hint, hint_sizes
from kinspect.inductor.hooks import layers_once
from kinspect.inductor.hooks.after_import import after_import, importing
from kinspect.inductor.hooks.compile_caches import RecordingCaches
from kinspect.inductor.hooks.capture import CompileCapture, GraphRecord
from kinspect.inductor.hooks.kernels import variant_facts
from kinspect.inductor.timing.program_measure import KeySnapshots
from kinspect.inductor.hooks.recorder import LiveSite, Recorder, loading_module_file
from kinspect.inductor.launch.torchrun import Rank

FROM_CACHE = "from-cache"
"""The finding kind of a site whose compile ran in another process."""


@dataclass
class RunOptions:
    files: RecordingFiles
    """The session file and its crash-safe log."""
    program: str
    """What the session names as its model: the script's path or the module's name."""
    hints: Sequence[int] | None = None
    """multi_kernel_hints for a program that sets none; None: leave it be."""
    measure: bool = False
    rank: Rank | None = None
    say: Callable[[str], None] = print
    changes: CompileChanges = CompileChanges()
    """What kinspect changes in every compile of the program: one size per symbol at each
    hint (compiled in a cache directory of the run's own, so nothing tuned so leaks into the
    program's caches, nor theirs in); benchmark tensors fitted at each hint, autotuning in a
    child process; the repeated blocks of each module it compiles compiled once, marked
    before its first call."""


class ProgramRecording:
    """`with ProgramRecording(options) as rec:` around the program; `rec.finish()` after it
    (measures, assembles and saves the session; `rec.session`)."""

    def __init__(self, options: RunOptions) -> None:
        self.options = options
        self.capture = CompileCapture()
        self.recorder = Recorder(namer=self._site_name, on_site=self._site_loaded)
        self.hints = _HintPolicy(options.hints, options.say, options.changes.fit_benchmark_tensors)
        self.snapshots = KeySnapshots() if options.measure else None
        self.session = Session(environment=Environment(created=""),  # this machine's, once torch is imported
                               model=ModelInfo(path=options.program, name=Path(options.program).stem))
        self.started = False
        """The hooks are in: the program imported torch (`_start`)."""
        self._graphs: dict[Any, int] = {}
        """A graph (compiled here: its capture record's index; loaded: its wrapper file) ->
        its number in the session, in the order its first site loaded."""
        self._loaded: dict[str, list[LiveSite]] = {}
        """Wrapper file -> the sites of a graph loaded from Inductor's caches."""
        self._logged: set[Any] = set()
        self._codes: dict[str, str | None] = {}
        self._died: dict[str, str] = {}
        """The graphs whose compile raised before Inductor wrote their code: name -> why."""
        self._stack = contextlib.ExitStack()
        self.log: LiveLog | None = None
        self.layer_groups: list[BlockGroup] = []
        self.saved = False
        self.kept = False
        """`finish` saved nothing because nothing was recorded and a file was there
        (`RecordingFiles.keeps`): its log went too."""
        self._pid = os.getpid()
        self.forks = 0
        """Processes the program forked while recorded: their dispatches are theirs, not in
        this session."""

    @property
    def forked(self) -> bool:
        """This process is a fork of the recorded one (the program's own `os.fork`): the
        recording is its parent's."""
        return os.getpid() != self._pid

    def __enter__(self) -> ProgramRecording:
        try:
            self._stack.enter_context(self._written_at_sigterm())
            self._stack.enter_context(after_import("torch", self._torch_imported))  # a program may never
        except BaseException:
            self._stack.close()
            raise
        return self

    def _torch_imported(self) -> None:
        """Inductor's hooks go in at the program's first `torch.compile`, or once it imports
        Dynamo or Inductor itself (a wrapper module loaded without compiling), whichever comes
        first (importing Inductor to patch it costs seconds a program that only imports torch
        never pays); now where Dynamo or Inductor is in already (a notebook that compiled
        before). Never while another of torch's modules is part-way through its import: the
        hooks import Dynamo's modules, and Dynamo's own import imports Inductor half-way
        (`import torch._dynamo`, or torchvision's import, then died of a circular import)."""
        import torch

        if "torch._dynamo" in sys.modules or "torch._inductor" in sys.modules:
            self._start()
        else:
            self._stack.enter_context(_before_first_compile(torch, self._start))
            for name in ("torch._dynamo", "torch._inductor"):
                self._stack.enter_context(after_import(name, functools.partial(self._start_unless_importing, name)))

    def _start_unless_importing(self, imported: str) -> None:
        """`_start` once `imported` is whole, unless it was imported by another of torch's
        modules still part-way through its own import (Inductor imported by Dynamo's import:
        Dynamo's end starts it; any other, the first compile)."""
        if not importing("torch", but=imported):
            self._start()

    def _start(self) -> None:
        """This machine stated, the crash-safe log opened and Inductor's hooks in, before
        anything can compile."""
        if self.started:
            return
        self.started = True
        self.session.environment = assembly.machine(self.options.rank)
        self._open_log()
        changes = self.options.changes
        said = []
        if changes.one_size_per_symbol:
            self._stack.enter_context(hint_sizes.one_size_per_symbol())
            said.append("--one-size-per-symbol: each hint tuned, keyed and launched at one size per symbol")
        if changes.fusion_per_hint:
            self._stack.enter_context(fusion_per_hint.fusion_per_hint())
            said.append("--fusion-per-hint: each hint's fused epilogue picked among that hint's own choices")
        if changes.autotune_device_time:
            self._stack.enter_context(device_time.autotune_device_time())
            said.append("--autotune-device-time: Inductor's benchmarks timed by the GPU's work alone"
                        + (" (not the GEMMs' in the autotune subprocess --fit-benchmark-tensors runs them in)"
                           if changes.fit_benchmark_tensors else ""))
        if said:  # what these switches tune must neither leak into the program's caches nor come from them
            self._stack.enter_context(RecordingCaches(allow_caches=False).active())
            for line in said[:-1]:
                self.options.say(line)
            self.options.say(f"{said[-1]}, compiled in a cache directory of this run's own")
        self._stack.enter_context(self.capture.everywhere())
        self.capture.progress = self.options.say
        self.capture.fit_benchmark_tensors = changes.fit_benchmark_tensors
        self._stack.enter_context(self.capture.watching_benchmarks())
        self._stack.enter_context(self.recorder.everywhere())
        self._stack.enter_context(self.hints.installed())
        self._stack.enter_context(_steps(self.recorder, self._compile_layers_once if changes.layers_once
                                         else None))

    def _open_log(self) -> None:
        try:
            self.log = LiveLog(self.options.files.log, self.session, on_failure=self.options.say)
        except BaseException:
            self.options.files.discard()
            raise
        self.recorder.configure(log=self.log)

    def __exit__(self, *exc: Any) -> None:
        self._stack.close()

    def _compile_layers_once(self, module: Any) -> None:
        """Before a compiled module's first call traces it: its repeated blocks marked for
        the rest of the run."""
        groups = self._stack.enter_context(layers_once.compiled_once(getattr(module, "_orig_mod", None)))
        self.layer_groups += groups
        self.options.say(marked_text(groups, type(getattr(module, "_orig_mod", module)).__name__))

    @contextlib.contextmanager
    def _written_at_sigterm(self) -> Iterator[None]:
        """A SIGTERM the program leaves to Python's default (death) writes the log first,
        then kills the process by the same signal, so its exit status is what it would
        have been. A program that sets its own handler replaces this one."""
        if threading.current_thread() is not threading.main_thread() or \
                signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            yield
            return

        def terminated(signum: int, frame: Any) -> None:
            if self.log is not None:
                self.log.flush()
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

        signal.signal(signal.SIGTERM, terminated)
        try:
            yield
        finally:
            if signal.getsignal(signal.SIGTERM) is terminated:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)

    # ------------------------------------------------------------ as sites load

    def _graph_key(self) -> tuple[Any, GraphRecord | None, str | None]:
        rec = self.capture.current()
        if rec is not None:
            return ("compiled", rec.index), rec, None
        wrapper = loading_module_file()
        return ("loaded", wrapper), None, wrapper

    def _site_name(self, call: Any) -> str:
        key, _, _ = self._graph_key()
        number = self._graphs.setdefault(key, len(self._graphs))
        return translate.site_name(number, call.multi_kernel_name)

    def _site_loaded(self, ls: LiveSite) -> None:
        """Log the site's record (and its graph's, the first time) before it dispatches."""
        key, rec, wrapper = self._graph_key()
        number = self._graphs[key]
        if self.snapshots is not None:
            self.snapshots.watch(ls)
        assert self.log is not None
        if rec is not None:
            if key in self._logged:
                return
            self._logged.add(key)
            g = dataclasses.replace(rec, index=number, wrapper_path=ls.wrapper_file)
            code = self._code(ls.wrapper_file)
            self.log.graph(translate.graph(g, code, self.hints.seen))
            for site in translate.sites(g, code, lambda name: []):
                self.log.site(site)
            return
        path = wrapper or ""
        self._loaded.setdefault(path, []).append(ls)
        self.log.site(loaded_site(ls, _loaded_graph_name(number), self._code(wrapper), []))

    def _code(self, path: str | None) -> str | None:
        """A wrapper file's text, read once."""
        if path is None:
            return None
        if path not in self._codes:
            code = None
            with contextlib.suppress(OSError, UnicodeDecodeError):
                code = Path(path).read_text()
            self._codes[path] = code
        return self._codes[path]

    # ------------------------------------------------------------ after the program

    def finish(self, measure_note: Callable[[str], None] | None = None) -> Session:
        """Assemble the session from what was captured and recorded, measure if asked
        (Ctrl-C keeps what was measured), save it and close the log."""
        say = self.options.say
        if self.forked:
            return self.session
        if not self.started:  # a program that never imported torch: nothing to patch, nothing to wait for
            self.session.environment = assembly.machine(self.options.rank, import_torch=False)
            self._open_log()
        try:
            self._assemble()
            if self.snapshots is not None:
                try:
                    self.session.measurements += self.snapshots.measure(self.session, self.recorder.sites,
                                                                        say, self.log)
                except KeyboardInterrupt:
                    say("measuring interrupted: saving what was measured")
                    self.session.measurements += self.snapshots.done
                except Exception as e:  # noqa: BLE001 - what was recorded is saved whatever measuring raised
                    say(f"measuring failed ({error_line(e)}): saving the session with the "
                        f"{len(self.snapshots.done)} measurements made before it")
                    self.session.measurements += self.snapshots.done
            self._save()
        finally:
            if self.log is not None:
                self.forks = self.log.forks
                self.recorder.configure(log=None)
                self.log.close()
                self.log = None
            if self.saved:
                self.options.files.settle()
            elif self.kept:
                self.options.files.discard()
        return self.session

    def _assemble(self) -> None:
        s = self.session
        compiled = [(g, self._graphs.get(("compiled", g.index))) for g in self.capture.graphs]
        numbered = []
        for g, number in compiled:  # graphs without a site are numbered after those with one
            if number is None:
                number = self._graphs.setdefault(("compiled", g.index), len(self._graphs))
            numbered.append(dataclasses.replace(g, index=number))
        numbered.sort(key=lambda g: g.index)
        names = sorted({_source_name(src) for g in numbered for srcs in g.symbols.values() for src in srcs} - {None})
        s.symbols = translate.symbols(numbered, [], names, {})
        s.graphs, s.sites = [], []
        self._died = {g.name: translate.died(g) for g in numbered if g.wrapper_path is None and g.templates}
        for g in numbered:
            code = self._code(g.wrapper_path)
            s.graphs.append(translate.graph(g, code, self.hints.seen))
            s.sites += translate.sites(g, code, self._kernel_facts)
        for wrapper, sites in self._loaded.items():
            number = self._graphs[("loaded", wrapper or None)]
            code = self._code(wrapper or None)
            name = _loaded_graph_name(number)
            loaded = [loaded_site(ls, name, code, variant_facts(ls.call, ls.wrapper_file)) for ls in sites]
            unique = list({site.name: site for site in loaded}.values())
            s.graphs.append(Graph(name, wrapper or None, tuple(site.name for site in unique), None, code))
            s.sites += unique
        s.symbols = _size_symbols(s.symbols, s.sites)
        lines = {site.name: {c.line: c.index for c in site.call_sites} for site in s.sites}
        s.events = self.recorder.dispatch_events(call_site=lambda name, line: lines.get(name, {}).get(line))
        s.environment = dataclasses.replace(s.environment, config={
            **_config(self.hints), **self.options.changes.config(),
            **(layers_config(self.layer_groups) if self.layer_groups else {})})
        s.model = dataclasses.replace(s.model, hints=tuple(self.hints.seen))
        s.findings = derive_findings(s) + [
            Finding(FROM_CACHE, f"{site.name} was loaded from Inductor's caches: no compile ran in this process, so "
                    "its autotune tables, hints and symbolic sizes were not seen (TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 "
                    "compiles afresh)", "info", site=site.name, graph=site.graph)
            for site in s.sites if site.graph.endswith(_LOADED)]

    def _kernel_facts(self, site_name: str) -> list[dict[str, Any]]:
        for ls in self.recorder.sites:
            if ls.name == site_name:
                return variant_facts(ls.call, ls.wrapper_file)
        return []

    def _save(self) -> None:
        from kinspect.core.store import save

        if self.options.files.keeps(self.session):
            self.kept = True
            return
        save(self.session, self.options.files.session)
        self.saved = True
        if self.log is not None:  # the log ends as the session does: every site with its sources
            for site in self.session.sites:
                self.log.site(site)

    def regions_failed(self, ended: BaseException) -> str | None:
        """With the layers as nested compile regions, a Dynamo error that no CUDA error is
        behind, in one line: the regions are the likely cause, and the switch the way round
        it. A CUDA fault is a compile's, said by `compile_died` or `no_site_reason`."""
        if not self.layer_groups or not type(ended).__module__.startswith("torch._dynamo"):
            return None
        chain: list[BaseException] = []
        e: BaseException | None = ended
        while e is not None and e not in chain and len(chain) < 16:
            chain.append(e)
            e = e.__cause__ or e.__context__
        if any("CUDA error" in str(c) for c in chain):
            return None
        return (f"Dynamo failed tracing the program with {', '.join(g.text for g in self.layer_groups)} as nested "
                "compile regions (--compile-layers-once); without the switch its blocks compile as stock Inductor's do")

    def compile_died(self) -> str | None:
        """Where some graphs got size-hint multi-kernels but a compile died (the program's
        error ended it): which graph, and why, in one line; None otherwise (a program with
        no site hears it from `no_site_reason`)."""
        if not self.session.sites or not self._died:
            return None
        name, why = list(self._died.items())[-1]
        return f"{name} died: {why}"

    def no_site_reason(self) -> str | None:
        """Why the program got no size-hint multi-kernel, in a few words; None if it got one."""
        s = self.session
        if s.sites:
            return None
        if not self.capture.graphs:
            return "it compiled nothing with Inductor in this process (no torch.compile ran, or every graph came " \
                   "from a cache with no size-hint multi-kernel in it)"
        reasons = list(dict.fromkeys(g.no_site_reason for g in s.graphs if g.no_site_reason))
        if not self.hints.seen:
            return "no multi_kernel_hints were set (--hints 64,256,4096 sets them for a program that sets none)"
        return "; ".join(reasons) if reasons else "no graph made one"


_LOADED = "(loaded from Inductor's cache)"


def _loaded_graph_name(number: int) -> str:
    return f"graph_{number} {_LOADED}"


_SIZE_SOURCE = re.compile(r"^(?P<base>.*\['(?P<name>[A-Za-z_][A-Za-z0-9_]*)'\])\.size\(\)\[(?P<dim>\d+)\]$")


def _size_symbols(symbols: list[SymbolInfo], sites: Sequence[Site]) -> list[SymbolInfo]:
    """The symbols a user types sizes for: each named by the tensor argument and dim it came
    from (`input_ids_1`, from Dynamo's `L['kwargs']['input_ids'].size()[1]`). Symbols of a
    program's scalars (a module's `eps` made dynamic) are left out unless a site's sizes use
    them."""
    used = frozenset().union(*(site.symbols for site in sites))
    out = []
    for sym in symbols:
        m = next((m for m in map(_SIZE_SOURCE.match, sym.sources) if m), None)
        if m is None and sym.name not in used:
            continue
        if m is not None and sym.input is None:
            sym = dataclasses.replace(sym, input=m["name"], dim=int(m["dim"]))
        out.append(sym)
    return with_source_names(out)


def _source_name(source: str) -> str | None:
    """`x` from Dynamo's source `L['x'].size()[0]`: the compiled frame's argument."""
    if source.startswith("L['") and "']" in source:
        return source[3:source.index("']")]
    return None


def loaded_site(ls: LiveSite, graph: str, code: str | None, facts: list[dict[str, Any]]) -> Site:
    """A site as the loaded wrapper module holds it, with no compile to tell more.

    Inductor keys each variant by the sizes of the template's inputs and output with
    every symbolic size replaced by the variant's hint (`_make_shape_cache_key`), so a
    size that differs between the keys is symbolic and holds each variant's hint, and
    one that is the same in every key is a constant. Symbolic sizes get a name per
    tensor and dim (`t0_0`): which symbol each one is was not seen."""
    keys = [k for k in ls.keys if k is not None]
    first = keys[0] if keys else ()
    tensors = []
    varying: list[tuple[int, int]] = []
    for i, shape in enumerate(first):
        sizes = []
        for d, size in enumerate(shape):
            same = all(len(k) > i and len(k[i]) > d and k[i][d] == size for k in keys)
            sizes.append(SizeExpr(size) if same else SizeExpr(f"t{i}_{d}"))
            if not same:
                varying.append((i, d))
        role = "output" if i == len(first) - 1 else "input"
        tensors.append(TensorSpec("out" if role == "output" else f"t{i}", role, tuple(sizes)))
    names = [str((getattr(k, "inductor_meta", None) or {}).get("kernel_name", f"{ls.name}_{i}"))
             for i, k in enumerate(_kernels(ls.call))]
    variants = []
    for i, key in enumerate(ls.keys):
        hint = key[varying[0][0]][varying[0][1]] if key is not None and varying else None
        f = facts[i] if i < len(facts) else {}
        variants.append(Variant(
            index=i, hint=hint, key=key, kernel_name=names[i] if i < len(names) else f"{ls.name}_{i}",
            source=f.get("source", ""), source_hash=f.get("source_hash", ""), source_path=f.get("source_path"),
            config=f.get("config", {}),
        ))
    calls = tuple(CallSite(index=j, call=text, line=n)
                  for j, (n, text) in enumerate(dispatch_lines(code, ls.call.multi_kernel_name)[0]))
    return Site(ls.name, graph, _op_named(names), tuple(tensors), tuple(variants),
                call=calls[0].call if calls else None, call_sites=calls)


def _kernels(call: Any) -> list[Any]:
    """The instance's kernels if they have resolved (they may still be compiling)."""
    kernels = getattr(call, "_kernels", None) or []
    return [k for k in kernels if hasattr(k, "inductor_meta")]


def _op_named(kernel_names: Sequence[str]) -> str:
    """The GEMM a template kernel is named for (`triton_tem_fused_addmm_0`: addmm)."""
    for name in kernel_names:
        for token in name.split("_"):
            if token in OPERANDS:
                return token
    return "template"


# ---------------------------------------------------------------- hints


class _HintPolicy:
    """Adds `hints` to each compile of a program that sets no multi_kernel_hints, through
    that compile's config patches (Inductor applies them for the compile only), and
    remembers the hints every compile ran with (`seen`)."""

    def __init__(self, hints: Sequence[int] | None, say: Callable[[str], None], fit: bool = False) -> None:
        self.hints = list(hints) if hints else None
        self.fit = fit
        self.say = say
        self.seen: list[int] = []
        self.added = False
        self._told = False

    def patches(self, program: dict[str, Any] | None) -> dict[str, Any] | None:
        """The config patches one compile runs with: the program's, with the hints (and
        max-autotune, Triton GEMMs) in front when it sets no hints of its own; with `fit`,
        autotuning in a child process, where a config that still faults is skipped."""
        import torch._inductor.config as cfg

        chosen = self._chosen(program)
        # Inductor applies the patches and calls compile_fx again without them: once set, leave be.
        if not self.fit or cfg.autotune_in_subproc:
            return chosen
        return {**(chosen or {}), "autotune_in_subproc": True}

    def _chosen(self, program: dict[str, Any] | None) -> dict[str, Any] | None:
        import torch._inductor.config as cfg

        theirs = list((program or {}).get("multi_kernel_hints", getattr(cfg, "multi_kernel_hints", [])) or [])
        if theirs or self.hints is None:
            if theirs and self.hints is not None and not self._told:
                self._told = True
                self.say(f"the program sets multi_kernel_hints {theirs}: --hints left unused")
            self.seen = list(dict.fromkeys([*self.seen, *theirs]))
            return program
        if not self._told:
            self._told = True
            self.say(f"the program sets no multi_kernel_hints: compiling with {self.hints}, max-autotune and "
                     "Triton GEMMs (--hints)")
        self.added = True
        self.seen = list(dict.fromkeys([*self.seen, *self.hints]))
        ours = {"multi_kernel_hints": list(self.hints), "max_autotune": True, "max_autotune_gemm": True,
                "max_autotune_gemm_backends": "TRITON"}
        return {**ours, **{k: v for k, v in (program or {}).items() if k != "multi_kernel_hints"}}

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """Inductor's compile entry wrapped for the program's run (the backend looks it up
        in its module at each compile)."""
        from torch._inductor import compile_fx as module

        original = module.compile_fx

        def compile_fx(model: Any, inputs: Any, *args: Any, config_patches: dict[str, Any] | None = None,
                       **kwargs: Any) -> Any:
            return original(model, inputs, *args, config_patches=self.patches(config_patches), **kwargs)

        module.compile_fx = compile_fx
        try:
            yield
        finally:
            module.compile_fx = original


@contextlib.contextmanager
def _before_first_compile(torch: Any, start: Callable[[], None]) -> Iterator[None]:
    """`start()` at the first call of `torch.compile` (a decorator too, and `nn.Module.compile`,
    which calls it), before it runs."""
    original = torch.compile

    @functools.wraps(original)
    def compile(*args: Any, **kwargs: Any) -> Any:
        start()
        return original(*args, **kwargs)

    torch.compile = compile
    try:
        yield
    finally:
        if torch.compile is compile:
            torch.compile = original


@contextlib.contextmanager
def _steps(recorder: Recorder, first_call: Callable[[Any], None] | None = None) -> Iterator[None]:
    """Each outermost call of a compiled module starts the next workload step (see the
    module's docstring); a torch without `OptimizedModule` records no steps. `first_call`
    sees each compiled module before its first call."""
    try:
        from torch._dynamo.eval_frame import OptimizedModule
    except ImportError:
        yield
        return
    own = OptimizedModule.__dict__.get("__call__")  # None: it has nn.Module's
    original = OptimizedModule.__call__
    inside = threading.local()
    count = iter(range(1 << 62))
    seen: weakref.WeakSet[Any] = weakref.WeakSet()

    def __call__(module: Any, *args: Any, **kwargs: Any) -> Any:
        if first_call is not None and module not in seen:
            seen.add(module)
            first_call(module)
        if getattr(inside, "call", False):  # a compiled module inside another's call: the same step
            return original(module, *args, **kwargs)
        recorder.set_step(next(count))
        inside.call = True
        try:
            return original(module, *args, **kwargs)
        finally:
            inside.call = False

    OptimizedModule.__call__ = __call__
    try:
        yield
    finally:
        if own is None:
            del OptimizedModule.__call__
        else:
            OptimizedModule.__call__ = own


def _config(hints: _HintPolicy) -> dict[str, Any]:
    """The Inductor settings the session names: the program's as they ended, and the hints
    its compiles ran with."""
    out: dict[str, Any] = {"multi_kernel_hints": list(hints.seen), "hints_added_by_kinspect": hints.added}
    cfg = sys.modules.get("torch._inductor.config")  # a program that never compiled: not imported for this
    for name in ("max_autotune", "max_autotune_gemm_backends", "force_disable_caches"):
        value = getattr(cfg, name, None)
        if isinstance(value, (bool, int, str)):
            out[name] = value
    if hints.added:
        out.update(max_autotune=True, max_autotune_gemm_backends="TRITON")
    return out


