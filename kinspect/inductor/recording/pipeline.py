"""The live pipeline: compile a model.py with size hints on a CUDA GPU and record it.

One `LivePipeline` owns one compiled model. It marks the dims the input builder moves
as dynamic, compiles under max-autotune with the Triton GEMM backend and Inductor's
caches in a directory of the recording's own (`compile_caches`: nothing that skips the
compile-time facts, each GEMM layout autotuned once per hint), and keeps the compile
capture and the dispatch recorder installed for its whole life, so a recompile met
later in the workload is captured like the first compile.

This module compiles and runs, and says in one line why a run failed. The rest lives
where the next measurement or comparison lands, each usable without a pipeline:
`measurements` (every variant timed on a real call's arguments), `assembly` (the session
from the capture and the recorder, and the crash-safe log kept in step with it) and
`whole_model` (the model timed whole: hinted, oracle, and the kinds compiled afresh).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kinspect.core.errors import KinspectError, error_line
from kinspect.core.dispatch.shapes import sizes_text
from kinspect.core.session.compile_changes import CompileChanges, layers_config, marked_text
from kinspect.core.session.runtime import Baseline, Measurement
from kinspect.core.session.model import Session
from kinspect.inductor.recording import fault_probe, reproducer, translate
from kinspect.inductor.hooks.fixes import device_time, fusion_per_hint, hint_sizes
from kinspect.inductor.hooks import layers_once
from kinspect.inductor.recording.assembly import (
    SessionLog, WrapperCodes, add_measurements, compile_facts, environment, kernel_facts, model_info, refresh,
)
from kinspect.inductor.hooks.capture import CompileCapture
from kinspect.inductor.hooks.compile_caches import RecordingCaches
from kinspect.inductor.timing.measurements import check_memory, measure_sites, with_peaks
from kinspect.inductor.launch.modelfile import DynamicDim, ModelFile, distinct_examples
from kinspect.inductor.hooks.recorder import Recorder
from kinspect.inductor.launch.torchrun import Rank
from kinspect.inductor.timing.whole_model import Forced, compare_at, fresh_baselines, time_whole

DEFAULT_HINTS = (64, 256, 4096)


@dataclass
class Options:
    hints: Sequence[int] | None = None
    """Overrides the model file's `hints`; neither: DEFAULT_HINTS."""
    train: bool = False
    allow_caches: bool = False
    log_path: Path | None = None
    progress: Callable[[str], None] | None = None
    failure_log: Path | None = None
    """Where the full traceback of a failed compile or run is appended (the message
    itself is one line)."""
    rank: Rank | None = None
    """This process's rank in a torchrun job, which the session names."""
    changes: CompileChanges = CompileChanges()
    """What kinspect changes in Inductor's compile: one size per symbol at each hint
    (`hooks.hint_sizes`); benchmark tensors given the storage each kernel reads at the hint,
    with configs timed in a child process where one that faults is skipped
    (`autotune_in_subproc`, the subprocess's tensors fitted too); the model's repeated
    blocks compiled once, as nested compile regions (`hooks.layers_once`)."""


@dataclass
class StepResult:
    step: int | None
    sizes: dict[str, int]
    events: int
    error: str | None = None


def _user_autotunes_in_subproc() -> bool:
    """Whether the user asked Inductor to autotune in a subprocess (its own switch)."""
    import os

    return os.environ.get("TORCHINDUCTOR_AUTOTUNE_IN_SUBPROC") == "1"


def require_cuda() -> None:
    import torch

    if not torch.cuda.is_available():
        raise KinspectError(
            "the live pipeline needs a CUDA GPU (Inductor's size-hint multi-kernel is Triton-only)"
        )


class LivePipeline:
    """One compiled model.py: compile once, run sizes, measure, time it whole, save."""

    def __init__(self, model_file: ModelFile, options: Options | None = None) -> None:
        require_cuda()
        self.mf = model_file
        self.options = options or Options()
        self.hints = list(self.options.hints or self.mf.hints or DEFAULT_HINTS)
        self.capture = CompileCapture()
        self.capture.progress = self.options.progress
        self.capture.fit_benchmark_tensors = self.options.changes.fit_benchmark_tensors
        self.recorder = Recorder(namer=self._site_name)
        self.results: list[StepResult] = []
        self.lock = threading.RLock()
        """Held while the model runs; measurement takes it too (one GPU user at a time)."""
        self._compiled: Any = None
        self._model: Any = None
        self._dyn: list[DynamicDim] = []
        self._examples: dict[str, int] = {}
        self._log: SessionLog | None = None
        self._codes = WrapperCodes()
        self._reproduced: set[tuple[str, int]] = set()
        self.caches = RecordingCaches(self.options.allow_caches)
        self._marked = contextlib.ExitStack()
        """The blocks marked as nested compile regions, and the modes of one size per symbol,
        fusion per hint and device time, for the pipeline's life (a size met later compiles again, under the same changes)."""
        if self.options.changes.one_size_per_symbol:
            self._marked.enter_context(hint_sizes.one_size_per_symbol())
        if self.options.changes.fusion_per_hint:
            self._marked.enter_context(fusion_per_hint.fusion_per_hint())
        if self.options.changes.autotune_device_time:
            self._marked.enter_context(device_time.autotune_device_time())
        o = self.options
        self.session = Session(
            environment=environment(self.hints, train=o.train, allow_caches=o.allow_caches, rank=o.rank,
                                    changes=o.changes),
            model=model_info(self.mf, self.hints))

    # ------------------------------------------------------------ lifecycle

    @property
    def examples(self) -> dict[str, int]:
        """The model's example sizes as compiled (distinct, so Dynamo keeps their symbols apart)."""
        return dict(self._examples) if self._examples else distinct_examples(self.mf.examples)

    def _say(self, text: str) -> None:
        if self.options.progress is not None:
            self.options.progress(text)

    def _site_name(self, call: Any) -> str:
        rec = self.capture.current()
        return translate.site_name(0 if rec is None else rec.index, call.multi_kernel_name)

    def close(self) -> None:
        self._marked.close()
        if self._log is not None:
            self.recorder.configure(log=None)
            self._log.close()
            self._log = None

    def __enter__(self) -> LivePipeline:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------ compile

    def compile(self) -> Session:
        """Compile at the example sizes; returns the session with its compile-time facts."""
        import torch

        self._dyn = self.mf.dynamic_dims()
        self._examples = distinct_examples(self.mf.examples)
        model = self.mf.model
        if isinstance(model, torch.nn.Module):
            model = model.to("cuda")
            model.train(self.options.train)
        self._model = model
        if self.options.changes.layers_once:
            self._compile_layers_once(model)
        self._configure_inductor()
        self._compiled = torch.compile(fresh_entry(model))
        if self.options.log_path is not None:
            self._log = SessionLog(self.options.log_path, self.session, self.options.progress)
        self.recorder.configure(log=None if self._log is None else self._log.writer)
        self._say(f"compiling {self.mf.path.name} with hints {self.hints} (max-autotune: this takes a while)")
        self.run_sizes(self._examples, step=None, what="compile")
        self._refresh()
        self.write_reproducers()
        return self.session

    def _compile_layers_once(self, model: Any) -> None:
        groups = self._marked.enter_context(layers_once.compiled_once(model))
        if groups:
            env = self.session.environment
            self.session.environment = dataclasses.replace(env, config={**env.config, **layers_config(groups)})
        self._say(marked_text(groups))

    def write_reproducers(self) -> list[reproducer.Files]:
        """A standalone script and an upstream report per template and hint whose benchmark
        tensor was short, beside the model; each said where it is."""
        symbols = translate.symbols(self.capture.graphs, self._dyn, self.mf.input_names, self._examples)
        return reproducer.write_beside(self.mf.path, self.capture.graphs, symbols, self.hints,
                                       self.session.environment, self._reproduced, self._say)

    def _configure_inductor(self) -> None:
        import torch._inductor.config as cfg

        if not hasattr(cfg, "multi_kernel_hints"):
            raise KinspectError("this torch has no torch._inductor.config.multi_kernel_hints")
        cfg.multi_kernel_hints = list(self.hints)
        cfg.max_autotune = True
        cfg.max_autotune_gemm = True
        cfg.max_autotune_gemm_backends = "TRITON"
        # Set every time: an earlier pipeline in this process may have fitted, this one may not.
        cfg.autotune_in_subproc = self.options.changes.fit_benchmark_tensors or _user_autotunes_in_subproc()

    def _inputs(self, sizes: Mapping[str, int]) -> tuple[Any, ...]:
        import torch

        with torch.device("cuda"):
            built = self.mf.build(sizes)
        out = tuple(t.to("cuda") if isinstance(t, torch.Tensor) else t for t in built)
        for d in self._dyn:
            t = out[d.input]
            if isinstance(t, torch.Tensor):
                torch._dynamo.mark_dynamic(t, d.dim)
        return out

    # ------------------------------------------------------------ running

    def run_sizes(self, sizes: Mapping[str, int], step: int | None = None, what: str = "run") -> StepResult:
        """Run the compiled model once at these sizes, recording its dispatches."""
        import torch

        sizes = {**self._examples, **sizes}
        self._expect(sizes)
        before = len(self.recorder)
        result = StepResult(step, dict(sizes), 0)
        # The hooks are installed only while this pipeline runs its model, so that two
        # pipelines in one process (tests, baselines) never capture each other's graphs.
        with self.lock, self.caches.active(), self.capture, self.recorder:
            self.recorder.set_step(step)
            try:
                args = self._inputs(sizes)
                grad = torch.enable_grad() if self.options.train else torch.no_grad()
                with grad:
                    self._compiled(*args)
                torch.cuda.synchronize()
            except torch.cuda.OutOfMemoryError:
                torch.cuda.empty_cache()
                result.error = f"CUDA out of memory at {sizes_text(sizes)}"
            except KinspectError:
                raise
            except Exception as e:
                where, detail = self._failure(e)
                if what == "compile":
                    raise KinspectError(f"compiling {self.mf.path.name} failed{where}: {detail}") from e
                result.error = f"{where.strip()}: {detail}" if where else detail
        result.events = len(self.recorder) - before
        self.results.append(result)
        self._refresh()
        return result

    def _failure(self, e: BaseException) -> tuple[str, str]:
        """Where it died (" while autotuning bmm (buf0) at hint 4096", or "") and what,
        in one line, with the hints that leave a failing one out; the full traceback is
        appended to the failure log."""
        at = self.capture.autotuning
        self.capture.autotuning = None
        detail = error_line(e)
        if at is not None and "CUDA error" in detail:
            at, detail, seen = fault_probe.pin_down(self.mf.path, self.hints, at, detail,
                                                    self.options.changes.fit_benchmark_tensors, self._say)
            if seen is not None:
                self.capture.add_misfit(seen, at.op)
        where = "" if at is None else f" while autotuning {at.op} ({at.node}) at hint {at.hint}"
        files = self.write_reproducers()
        if files:
            detail += f"; reproducer and upstream report in {files[0].report.parent}"
        others = [h for h in self.hints if at is not None and h != at.hint]
        if at is not None and at.hint in self.hints and others:
            detail += f"; without hint {at.hint} it may compile: --hints {','.join(map(str, others))}"
        log = self.options.failure_log
        if log is not None:
            try:
                with open(log, "a", encoding="utf-8") as f:
                    f.write(f"\n--- kinspect: {self.mf.path.name} failed{where}\n")
                    f.write("".join(traceback.format_exception(e)))
                detail += f" (traceback in {log})"
            except OSError:  # an unwritable folder: the one line still says what happened
                pass
        return where, detail

    def _expect(self, sizes: Mapping[str, int]) -> None:
        """Predict each known site's key at these sizes before the model runs, so that a
        cache miss in the run only looks the prediction up (the recorder's miss path)."""
        try:
            env = self.session.resolve(sizes)
        except KinspectError:
            return
        for site in self.session.sites:
            try:
                self.recorder.expect(site.name, site.runtime_key(env))
            except KinspectError:  # a size this site's key cannot be computed from
                continue

    def run_workload(self, steps: Sequence[Mapping[str, int]] | None = None,
                     on_step: Callable[[StepResult], None] | None = None,
                     cancel: threading.Event | None = None) -> list[StepResult]:
        """Run each step (the model file's workload by default); `cancel` stops between steps."""
        out = []
        for i, sizes in enumerate(self.mf.workload if steps is None else steps):
            if cancel is not None and cancel.is_set():
                break
            self._say(f"step {i}: {sizes_text(sizes)}")
            r = self.run_sizes(sizes, step=i)
            out.append(r)
            if on_step is not None:
                on_step(r)
        return out

    # ------------------------------------------------------------ measuring

    def measure(self, sizes: Mapping[str, int], site: str | None = None, *, cupti: bool = True,
                l2_flush: bool = False, progress: Callable[[str], None] | None = None,
                cancel: threading.Event | None = None) -> list[Measurement]:
        """Time every variant of each site (or one) at these sizes, on the args of a real
        call; the measurements join the pipeline's session (its owner) and are returned."""
        sizes = {**self._examples, **sizes}
        check_memory(self.session, self.mf.build, sizes)
        say = progress or self._say
        with self.lock:
            self.session.environment = with_peaks(self.session.environment, say)
            targets = [ls for ls in self.recorder.sites if site is None or ls.name == site]
            if not targets:
                raise KinspectError(f"no site named {site!r} has run yet")

            def run() -> None:
                result = self.run_sizes(sizes, step=None, what="measure")
                if result.error:
                    raise KinspectError(f"running at {sizes_text(sizes)} failed: {result.error}")

            out = measure_sites(self.session, targets, run, cupti=cupti, l2_flush=l2_flush, say=say, cancel=cancel)
            add_measurements(self.session, out, self._log)
            return out

    def time_at(self, sizes: Mapping[str, int], *, measure: bool = False, kinds: Sequence[str] = (),
                site: str | None = None, l2_flush: bool = False) -> None:
        """What the headless commands ask at a set of sizes: every variant timed (or the
        model just run there, recording its dispatches), then the whole-model baselines."""
        if measure:
            self.measure(sizes, site, l2_flush=l2_flush)
        else:
            self.run_sizes(sizes)
        if kinds:
            self.baselines(sizes, kinds)

    # ------------------------------------------------------------ the whole model

    def baselines(self, sizes: Mapping[str, int], kinds: Sequence[str],
                  progress: Callable[[str], None] | None = None,
                  cancel: threading.Event | None = None) -> list[Baseline]:
        """Eager, static, exact-hint and hinted whole-model timings at these sizes, each in a
        process of its own (minutes each for the compiled kinds); `cancel` stops between
        kinds. They join the pipeline's session and are returned."""
        out = fresh_baselines(str(self.mf.path), {**self._examples, **sizes}, kinds, self.hints,
                              progress or self._say, cancel)
        self.session.baselines += out
        return out

    def time_model(self, sizes: Mapping[str, int], forced: Forced | None = None) -> Baseline:
        """The compile under inspection timed whole at these sizes, the way baselines are:
        Inductor's own picks (`hinted`) or, with `forced` (site: (key, variant)), those
        variants at those keys (`oracle`), dispatched without recording (`Recorder.unrecorded`)."""
        import torch

        sizes = {**self._examples, **sizes}
        with self.lock, self.caches.active(), self.recorder.unrecorded(forced):
            args = self._inputs(sizes)
            grad = torch.enable_grad() if self.options.train else torch.no_grad()
            with grad:
                out = time_whole(lambda: self._compiled(*args), sizes, "hinted" if forced is None else "oracle")
        self.session.baselines.append(out)
        return out

    def compare_at(self, sizes: Mapping[str, int], kinds: Sequence[str],
                   progress: Callable[[str], None] | None = None) -> list[Baseline]:
        """`kinspect compare` at one shape (`whole_model.compare_at`)."""
        return compare_at(self, sizes, kinds, progress or self._say)

    # ------------------------------------------------------------ the session

    def _refresh(self) -> None:
        """Bring the session, and the log, up to date with the capture and the recorder."""
        s = self.session
        s.symbols, s.graphs, s.sites = compile_facts(
            self.capture.graphs, dyn=self._dyn, input_names=self.mf.input_names, examples=self._examples,
            hints=self.hints, code_of=self._codes, facts_of=kernel_facts(self.recorder))
        refresh(s, self.recorder, self._log)

    def save(self, path: str | Path) -> None:
        from kinspect.core.store import save

        self._refresh()
        save(self.session, path)


def fresh_entry(model: Any) -> Callable[..., Any]:
    """`model` behind a function with a code object and a name of its own, so that this
    compile starts from nothing Dynamo kept of an earlier one in this process.

    Dynamo caches compiled graphs on the code object of the frame it compiles. Compiling
    a module compiles its `forward`, whose code object every instance of the class shares
    (all `nn.Linear`s): a second pipeline in one process (a test, a benchmark) would meet
    the first one's graph, compile nothing, and capture no site. Dynamo also remembers
    which dims changed size per (file, line, name) of a code object and compiles them
    dynamic next time (automatic dynamic shapes): hence a new name as well, or one
    model's sizes would make another's static dims dynamic."""

    def entry(*args: Any) -> Any:
        return model(*args)

    entry.__code__ = entry.__code__.replace(co_name=f"kinspect_model_{next(_entries)}")
    return entry


_entries = itertools.count()
