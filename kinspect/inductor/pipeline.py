"""The live pipeline: compile a model.py with size hints on a CUDA GPU and record it.

One `LivePipeline` owns one compiled model. It marks the dims the input builder moves
as dynamic, compiles under max-autotune with the Triton GEMM backend and Inductor's
caches off (a cache hit would skip the compile-time facts), and keeps the compile
capture and the dispatch recorder installed for its whole life, so a recompile met
later in the workload is captured like the first compile.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import itertools
import math
import platform
import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kinspect.core.errors import KinspectError
from kinspect.core.quality import benchmark_fit
from kinspect.core.quality.findings import derive_findings
from kinspect.core.quality.roofline import gemm_flops, min_bytes
from kinspect.core.session.model import (
    Baseline,
    Environment,
    Measurement,
    ModelInfo,
    Session,
)
from kinspect.core.session.format.log import LiveLog
from kinspect.core.dispatch.shapes import Key, format_key
from kinspect.inductor import fault_probe, fit_findings, reproducer, translate
from kinspect.inductor.baseline import run_baseline, time_call
from kinspect.inductor.capture import CompileCapture, GraphRecord
from kinspect.inductor.kernels import variant_facts
from kinspect.inductor.measure import (
    Timing,
    VariantLauncher,
    cupti_times,
    measure_overheads,
    measure_peaks,
    time_variants,
)
from kinspect.inductor.modelfile import DynamicDim, ModelFile, distinct_examples
from kinspect.inductor.recorder import LiveSite, Recorder
from kinspect.inductor.torchrun import Rank

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
    fit_benchmark_tensors: bool = False
    """Patch Inductor's hint autotuning: benchmark tensors get the storage each kernel
    reads at the hint, and configs are timed in a child process, where one that faults is
    skipped (`autotune_in_subproc`, with the subprocess's tensors fitted too)."""


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
    """One compiled model.py: compile once, run sizes, measure, save."""

    def __init__(self, model_file: ModelFile, options: Options | None = None) -> None:
        require_cuda()
        self.mf = model_file
        self.options = options or Options()
        self.hints = list(self.options.hints or self.mf.hints or DEFAULT_HINTS)
        self.capture = CompileCapture()
        self.capture.progress = self.options.progress
        self.capture.fit_benchmark_tensors = self.options.fit_benchmark_tensors
        self.recorder = Recorder(namer=self._site_name)
        self.results: list[StepResult] = []
        self.lock = threading.RLock()
        """Held while the model runs; measurement takes it too (one GPU user at a time)."""
        self._compiled: Any = None
        self._model: Any = None
        self._dyn: list[DynamicDim] = []
        self._examples: dict[str, int] = {}
        self._log: LiveLog | None = None
        self._logged_sites: set[str] = set()
        self._codes: dict[str, str | None] = {}
        self._reproduced: set[tuple[str, int]] = set()
        self.session = Session(environment=self._environment(), model=self._model_info())

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
        self._configure_inductor()
        self._compiled = torch.compile(fresh_entry(model))
        if self.options.log_path is not None:
            self._log = LiveLog(self.options.log_path, self.session)
        self.recorder.configure(log=self._log)
        self._say(f"compiling {self.mf.path.name} with hints {self.hints} (max-autotune: this takes a while)")
        self.run_sizes(self._examples, step=None, what="compile")
        self._refresh()
        self.write_reproducers()
        return self.session

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
        if not self.options.allow_caches:
            cfg.force_disable_caches = True
        # Set every time: an earlier pipeline in this process may have fitted, this one may not.
        cfg.autotune_in_subproc = self.options.fit_benchmark_tensors or _user_autotunes_in_subproc()

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
        with self.lock, self.capture, self.recorder:
            self.recorder.set_step(step)
            try:
                args = self._inputs(sizes)
                grad = torch.enable_grad() if self.options.train else torch.no_grad()
                with grad:
                    self._compiled(*args)
                torch.cuda.synchronize()
            except torch.cuda.OutOfMemoryError:
                torch.cuda.empty_cache()
                result.error = f"CUDA out of memory at {_fmt(sizes)}"
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
        detail = f"{type(e).__name__}: {_first_line(e)}"
        if at is not None and "CUDA error" in detail:
            at, detail = fault_probe.pin_down(self.mf.path, self.hints, at, detail,
                                              self.options.fit_benchmark_tensors, self._say)
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
            self._say(f"step {i}: {_fmt(sizes)}")
            r = self.run_sizes(sizes, step=i)
            out.append(r)
            if on_step is not None:
                on_step(r)
        return out

    # ------------------------------------------------------------ measuring

    def estimate_bytes(self, sizes: Mapping[str, int]) -> int | None:
        """GPU memory a run at these sizes needs: inputs (built on the meta device, so
        nothing is allocated), each site's tensors, and the snapshot measuring takes."""
        import torch

        try:
            with torch.device("meta"):
                built = self.mf.build({**self._examples, **sizes})
        except Exception:  # a builder that cannot run on meta: no estimate, OOM still caught
            return None
        tensors = [t for t in built if isinstance(t, torch.Tensor)]
        itemsize = tensors[0].element_size() if tensors else 4
        total = sum(t.numel() * t.element_size() for t in tensors)
        env = self.session.resolve(sizes) if self.session.symbols else {}
        for site in self.session.sites:
            try:
                key = site.runtime_key(env)
            except KinspectError:
                continue
            total += 2 * sum(math.prod(shape) for shape in key) * itemsize
        return total

    def _check_memory(self, sizes: Mapping[str, int]) -> None:
        import torch

        need = self.estimate_bytes(sizes)
        if need is None:
            return
        free, _ = torch.cuda.mem_get_info()
        if need > 0.9 * free:
            raise KinspectError(
                f"{_fmt(sizes)} needs about {need / 2**30:.1f} GiB of GPU memory and "
                f"{free / 2**30:.1f} GiB is free; try smaller sizes"
            )

    def measure(self, sizes: Mapping[str, int], site: str | None = None, *, cupti: bool = True,
                l2_flush: bool = False, progress: Callable[[str], None] | None = None,
                cancel: threading.Event | None = None) -> list[Measurement]:
        """Time every variant of each site (or one) at these sizes, on the args of a real
        call; the measurements join the pipeline's session (its owner) and are returned."""
        import torch

        sizes = {**self._examples, **sizes}
        self._check_memory(sizes)
        say = progress or self._say
        with self.lock:
            if "tflops_bf16" not in self.session.environment.peaks:
                say("measuring the GPU's peaks (bf16 matmul, device copy) and timing overheads")
                peaks = measure_peaks() | measure_overheads()
                self.session.environment = replace(self.session.environment, peaks=peaks)
            targets = [ls for ls in self.recorder.sites if site is None or ls.name == site]
            if not targets:
                raise KinspectError(f"no site named {site!r} has run yet")
            captured: dict[int, tuple[Any, Any]] = {}
            originals = {}
            for ls in targets:
                originals[ls.index] = ls.call.run

                def grab(*args: Any, _ls: LiveSite = ls, **kwargs: Any) -> None:
                    captured[_ls.index] = (args, kwargs)
                    originals[_ls.index](*args, **kwargs)

                ls.call.run = grab
            try:
                result = self.run_sizes(sizes, step=None, what="measure")
            finally:
                for ls in targets:
                    ls.call.run = originals[ls.index]
            if result.error:
                raise KinspectError(f"running at {_fmt(sizes)} failed: {result.error}")
            out: list[Measurement] = []
            for ls in targets:
                if ls.index not in captured:
                    continue
                args, kwargs = captured[ls.index]
                key = ls.call._get_shape_cache_key(*args)
                say(f"measuring {ls.name} at {format_key(key)}")
                out += self._measure_site(ls, key, args, kwargs, cupti, l2_flush, say, cancel)
                torch.cuda.empty_cache()
            self.session.measurements += out
            if self._log is not None:
                for m in out:
                    self._log.measurement(m)
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

    def _measure_site(self, ls: LiveSite, key: Key, args: Any, kwargs: Any, cupti: bool,
                      l2_flush: bool, say: Callable[[str], None],
                      cancel: threading.Event | None) -> list[Measurement]:
        import torch

        site = next((s for s in self.session.sites if s.name == ls.name), None)
        itemsize = next((a.element_size() for a in args if isinstance(a, torch.Tensor)), 2)
        flops = gemm_flops(site, key) if site is not None else None
        nbytes = min_bytes(key, itemsize)
        try:
            launcher = VariantLauncher(ls.call, args, kwargs)
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            return [Measurement(ls.name, key, v, "cuda_events", None, error="CUDA out of memory")
                    for v in range(len(ls.keys))]
        variants = list(range(len(ls.keys)))
        try:
            overheads = dict(self.session.environment.peaks)
            timed = time_variants(launcher, variants, overheads, l2_flush=l2_flush, progress=say, cancel=cancel)
            profiled = cupti_times(launcher, [v for v in variants if isinstance(timed.get(v), Timing)]) if cupti else {}
        finally:
            launcher.release()
        out = []
        for v in variants:
            t = timed.get(v)
            if not isinstance(t, Timing):
                out.append(Measurement(ls.name, key, v, "cuda_events", None, error=str(t)))
                continue
            for method, tm in (("cuda_events", t), ("cupti", profiled.get(v))):
                if tm is None:
                    continue
                sec = tm.median_us * 1e-6
                out.append(Measurement(
                    ls.name, key, v, method, round(tm.median_us, 3), round(tm.p20_us, 3),
                    round(tm.p80_us, 3), tm.samples, l2_flush and method == "cuda_events",
                    tflops=None if flops is None else round(flops / sec / 1e12, 3),
                    gbps=round(nbytes / sec / 1e9, 2),
                ))
        return out

    # ------------------------------------------------------------ the session

    def _refresh(self) -> None:
        """Bring the session up to date with the capture and the recorder."""
        s = self.session
        s.symbols = translate.symbols(self.capture.graphs, self._dyn, self.mf.input_names, self._examples)
        codes = [self._wrapper_code(g) for g in self.capture.graphs]
        s.graphs = [translate.graph(g, code, self.hints) for g, code in zip(self.capture.graphs, codes)]
        s.sites = [site for g, code in zip(self.capture.graphs, codes)
                   for site in translate.sites(g, code, self._kernel_facts)]
        lines = {site.name: {c.line: c.index for c in site.call_sites} for site in s.sites}
        s.events = self.recorder.dispatch_events(call_site=lambda name, line: lines.get(name, {}).get(line))
        s.findings = derive_findings(s) + fit_findings.findings(self.capture.graphs, s.symbols)
        if self._log is not None:
            self._log_new(s)

    def _wrapper_code(self, g: GraphRecord) -> str | None:
        """A graph's wrapper file, read once: the session is refreshed after every run."""
        if g.wrapper_path is None:
            return None
        if g.wrapper_path not in self._codes:
            code = None
            with contextlib.suppress(OSError, UnicodeDecodeError):
                code = Path(g.wrapper_path).read_text()
            self._codes[g.wrapper_path] = code
        return self._codes[g.wrapper_path]

    def _log_new(self, s: Session) -> None:
        assert self._log is not None
        if "__symbols__" not in self._logged_sites and s.symbols:
            self._log.symbols(s.symbols)
            self._logged_sites.add("__symbols__")
        for site in s.sites:  # runtime_site records are the recorder's to write
            if site.name not in self._logged_sites:
                self._log.site(site)
                self._logged_sites.add(site.name)

    def _environment(self) -> Environment:
        import torch

        try:
            import triton

            triton_version = triton.__version__
        except ImportError:
            triton_version = None
        rank = self.options.rank
        return Environment(
            created=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            torch=torch.__version__,
            triton=triton_version,
            python=platform.python_version(),
            gpu=torch.cuda.get_device_name() if torch.cuda.is_available() else None,
            cuda=torch.version.cuda,
            platform=platform.platform(terse=True),
            config={
                "multi_kernel_hints": list(self.hints),
                "max_autotune": True,
                "max_autotune_gemm_backends": "TRITON",
                "force_disable_caches": not self.options.allow_caches,
                "train": self.options.train,
                **({benchmark_fit.PATCH_KEY: True} if self.options.fit_benchmark_tensors else {}),
            },
            rank=None if rank is None else rank.rank,
            world_size=None if rank is None else rank.world_size,
            local_rank=None if rank is None else rank.local_rank,
        )

    def _model_info(self) -> ModelInfo:
        return ModelInfo(
            path=str(self.mf.path), name=self.mf.model_name, hints=tuple(self.hints),
            workload=tuple(dict(w) for w in self.mf.workload),
        )

    def _kernel_facts(self, site_name: str) -> list[dict[str, Any]]:
        for ls in self.recorder.sites:
            if ls.name == site_name:
                return variant_facts(ls.call, ls.wrapper_file)
        return []

    def baselines(self, sizes: Mapping[str, int], kinds: Sequence[str],
                  progress: Callable[[str], None] | None = None,
                  cancel: threading.Event | None = None) -> list[Baseline]:
        """Eager, static, exact-hint and hinted whole-model timings at these sizes, each in a
        process of its own (minutes each for the compiled kinds); `cancel` stops between
        kinds. They join the pipeline's session and are returned."""
        say = progress or self._say
        sizes = {**self._examples, **sizes}
        out = []
        for i, kind in enumerate(kinds):
            if cancel is not None and cancel.is_set():
                break
            say(f"baseline {i + 1}/{len(kinds)}: {kind} at {_fmt(sizes)} (compiles in a process of its own)")
            r = run_baseline(str(self.mf.path), kind, sizes, self.hints)
            out.append(Baseline(dict(sizes), kind, r.get("wall_us"), r.get("gpu_us"), r.get("error")))
        self.session.baselines += out
        return out

    def time_model(self, sizes: Mapping[str, int], forced: Mapping[str, tuple[Key, int]] | None = None) -> Baseline:
        """The compile under inspection timed whole at these sizes, the way baselines are
        (CUDA events per call, summed CUPTI kernel time per call): Inductor's own picks
        (`hinted`) or, with `forced` (site: (key, variant)), those variants at those keys
        (`oracle`), dispatched without recording (`Recorder.unrecorded`)."""
        import torch

        sizes = {**self._examples, **sizes}
        kind = "hinted" if forced is None else "oracle"
        with self.lock, self.recorder.unrecorded(forced):
            args = self._inputs(sizes)
            try:
                grad = torch.enable_grad() if self.options.train else torch.no_grad()
                with grad:
                    wall, gpu = time_call(lambda: self._compiled(*args))
                out = Baseline(dict(sizes), kind, round(wall, 3), round(gpu, 3), inspected=True)
            except torch.cuda.OutOfMemoryError:
                torch.cuda.empty_cache()
                out = Baseline(dict(sizes), kind, error=f"CUDA out of memory at {_fmt(sizes)}", inspected=True)
        self.session.baselines.append(out)
        return out

    def compare_at(self, sizes: Mapping[str, int], kinds: Sequence[str],
                   progress: Callable[[str], None] | None = None) -> list[Baseline]:
        """`kinspect compare` at one shape: every variant of every site timed (which one is
        fastest there), the compile timed whole with Inductor's picks and with the fastest
        forced at every site, then the kinds compiled afresh."""
        say = progress or self._say
        measured = self.measure(sizes, progress=say)
        keys = {m.site: m.key for m in measured}
        forced = {}
        for site in self.session.sites:
            fastest = None if site.name not in keys else self.session.timings_at(site.name, keys[site.name]).fastest
            if fastest is not None:
                forced[site.name] = (keys[site.name], fastest)
        say(f"timing the whole model at {_fmt(sizes)}: Inductor's picks, then the fastest variant forced")
        out = [self.time_model(sizes)]
        untimed = [s.name for s in self.session.sites if s.name not in forced]
        if untimed:
            full = {**self._examples, **sizes}
            oracle = Baseline(full, "oracle", error=f"no variant timed at {', '.join(untimed)}", inspected=True)
            self.session.baselines.append(oracle)
            out.append(oracle)
        else:
            out.append(self.time_model(sizes, forced))
        return out + self.baselines(sizes, kinds, say)

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


def _fmt(sizes: Mapping[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in sizes.items())


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:300] if text else ""

