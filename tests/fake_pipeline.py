"""A stand-in for `LivePipeline`, so the CLI commands' real code runs on the CPU.

`kinspect record` and `kinspect explain model.py` build a `LivePipeline` and call it; the
tests put this class in its place (and say CUDA is there). The compile-time facts are
those of the model's recording made on the H200 (samples/NAME.session.json); every
run calls Inductor's real `SizeHintMultiKernelCall` (stand-in kernels, meta tensors)
inside a real `Recorder`, and the session and its crash-safe log are kept by the real
assembly code (kinspect.inductor.recording.assembly) where the options ask for a log;
measuring and baselines make up times, each variant timed by CUDA events and by CUPTI
as the real pipeline stores them, CUPTI ranking them differently. `kinspect compare`'s
whole-model timing sums the made-up times; `fake_compile_afresh` stands in for a compile in a
fresh process, in which `unstable_hint` autotunes to another, slower kernel.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from standins import StandIn

from kinspect.core.session.compile_changes import CompileChanges
from kinspect.core.session.runtime import Baseline, Measurement, Recompile
from kinspect.core.session.model import Session, Site, Variant
from kinspect.core.dispatch.shapes import Key
from kinspect.core.quality.variance import variants_of
from kinspect.core.store import load, save
from kinspect.inductor.recording.assembly import SessionLog, add_measurements, model_info, rank_fields, refresh
from kinspect.inductor.launch.modelfile import ModelFile
from kinspect.inductor.recording.pipeline import DEFAULT_HINTS, LivePipeline, Options, StepResult
from kinspect.inductor.hooks.recorder import Recorder

os.environ["TORCHINDUCTOR_DISABLE_MULTI_KERNEL_CACHE"] = "1"  # the class reads a disk cache keyed by real kernels

import torch  # noqa: E402
from torch._inductor.codegen.multi_kernel import SizeHintMultiKernelCall  # noqa: E402

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def made_up_us(site: Site, key: tuple, variant: int, method: str) -> float:
    """Grows with the distance from the variant's hint; CUPTI reads v0 faster than events do."""
    hint = site.variants[variant].hint or 1
    base = 10.0 * (1 + abs(math.log2(max(key[1][0], 1) / hint)))
    return round(base * (0.5 if method == "cupti" and variant == 0 else 1.0), 3)


class FakePipeline:
    made: list[FakePipeline] = []
    """Every instance, for tests to read what a command did with it."""
    unstable_hint: int | None = None
    """A hint whose kernel a recompile (`fake_compile_afresh`) autotunes to another, 1.5 times
    slower config: what the H200 showed for hint 256 of Linear(1024->4096)."""

    def __init__(self, model_file: ModelFile, options: Options | None = None) -> None:
        self.mf = model_file
        self.options = options or Options()
        self.hints = list(self.options.hints or self.mf.hints or DEFAULT_HINTS)
        recorded = load(SAMPLES / f"{model_file.path.stem}.session.json")
        self._compiled = recorded
        self.session = Session(
            environment=replace(recorded.environment, gpu="fake GPU (CPU stand-in)",
                                **rank_fields(self.options.rank)),
            model=model_info(model_file, self.hints),
        )
        self.recorder = Recorder()
        self.lock = threading.RLock()
        self.calls: list[SizeHintMultiKernelCall] = []
        self.log: SessionLog | None = None
        self.closed = False
        self.changed = False
        """This compile autotuned `unstable_hint` otherwise (set by `fake_compile_afresh`)."""
        FakePipeline.made.append(self)

    def _say(self, text: str) -> None:
        if self.options.progress is not None:
            self.options.progress(text)

    def __enter__(self) -> FakePipeline:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self.log is not None:
            self.recorder.configure(log=None)
            self.log.close()
            self.log = None
        self.closed = True

    def compile(self) -> Session:
        self._say(f"compiling {self.mf.path.name} with hints {self.hints} (stand-in)")
        if self.options.log_path is not None:
            self.log = SessionLog(self.options.log_path, self.session)
            self.recorder.configure(log=self.log.writer)
        s = self.session
        s.symbols, s.graphs = self._compiled.symbols, self._compiled.graphs
        s.sites = [self._with_hints(site) for site in self._compiled.sites]
        with self.recorder:
            self.calls = [self._call(site) for site in s.sites]
        refresh(s, self.recorder, self.log)
        self.run_sizes(self.mf.examples, step=None)
        return s

    def _with_hints(self, site: Site) -> Site:
        """The recorded site, with one variant per hint when other hints were asked for
        (keys by hint substitution, as Inductor makes them; a kernel named for its hint),
        and `unstable_hint`'s kernel another one in a compile that autotuned otherwise."""
        variants = site.variants
        if [v.hint for v in variants] != self.hints:
            variants = tuple(
                Variant(i, h, tuple(t.key_at_hint(h) for t in site.tensors), f"{site.variants[0].kernel_name}_h{h}",
                        source_hash=f"hash-h{h}")
                for i, h in enumerate(sorted(self.hints)))
        if self.changed:
            variants = tuple(replace(v, source_hash=v.source_hash + "-other") if v.hint == FakePipeline.unstable_hint
                             else v for v in variants)
        return replace(site, variants=variants)

    @property
    def examples(self) -> dict[str, int]:
        return dict(self.mf.examples)

    def _call(self, site: Site) -> SizeHintMultiKernelCall:
        n = len(site.runtime_tensors or site.tensors)
        kernels = {v.key: StandIn(v.kernel_name) for v in site.variants}
        return SizeHintMultiKernelCall(site.name, kernels, {v.index: [slice(0, n)] for v in site.variants})

    def run_sizes(self, sizes: Mapping[str, int], step: int | None = None) -> StepResult:
        sizes = {**self.mf.examples, **sizes}
        env = self.session.resolve(sizes)
        before = len(self.recorder)
        self.recorder.set_step(step)
        for site, call in zip(self.session.sites, self.calls):
            call.run(*(torch.empty(shape, device="meta") for shape in site.runtime_key(env)))
        refresh(self.session, self.recorder, self.log)
        return StepResult(step, dict(sizes), len(self.recorder) - before)

    def run_workload(self, steps: Sequence[Mapping[str, int]] | None = None,
                     on_step: Callable[[StepResult], None] | None = None,
                     cancel: threading.Event | None = None) -> list[StepResult]:
        out = []
        for i, sizes in enumerate(self.mf.workload if steps is None else steps):
            self._say(f"step {i}: {sizes}")
            out.append(self.run_sizes(sizes, step=i))
        return out

    def measure(self, sizes: Mapping[str, int], site: str | None = None, *, cupti: bool = True,
                l2_flush: bool = False, progress: Callable[[str], None] | None = None,
                cancel: threading.Event | None = None) -> list[Measurement]:
        self.run_sizes(sizes)
        env = self.session.resolve({**self.mf.examples, **sizes})
        out = []
        for s in self.session.sites:
            if site is not None and s.name != site:
                continue
            key = s.runtime_key(env)
            for v in s.variants:
                for method in ("cuda_events", "cupti") if cupti else ("cuda_events",):
                    us = made_up_us(s, key, v.index, method)
                    if self.changed and v.hint == FakePipeline.unstable_hint:
                        us = round(us * 1.5, 3)
                    out.append(Measurement(s.name, key, v.index, method, us, us * 0.98, us * 1.02, 20,
                                           l2_flush and method == "cuda_events"))
        add_measurements(self.session, out, self.log)
        return out

    def baselines(self, sizes: Mapping[str, int], kinds: Sequence[str],
                  progress: Callable[[str], None] | None = None,
                  cancel: threading.Event | None = None) -> list[Baseline]:
        full = {**self.mf.examples, **sizes}
        out = [Baseline(full, kind, 50.0 + i, 20.0 + i) for i, kind in enumerate(kinds)]
        self.session.baselines += out
        return out

    def time_model(self, sizes: Mapping[str, int], forced: Mapping[str, tuple[Key, int]] | None = None) -> Baseline:
        """The sum of the variants' made-up CUPTI times Inductor picks (or `forced` ones), plus 5 us."""
        full = {**self.mf.examples, **sizes}
        env = self.session.resolve(full)
        total = 5.0
        for s in self.session.sites:
            key = s.runtime_key(env)
            v = forced[s.name][1] if forced and s.name in forced else s.decide(key).chosen
            total += self.session.timings_at(s.name, key, "cupti").median(v) or 0.0
        out = Baseline(full, "hinted" if forced is None else "oracle", total + 3, total, inspected=True)
        self.session.baselines.append(out)
        return out

    time_at = LivePipeline.time_at  # the real ones, driving this stand-in's measure and baselines
    compare_at = LivePipeline.compare_at

    def save(self, path: str | Path) -> None:
        save(self.session, path)


def fake_compile_afresh(model: str | Path, hints: Sequence[int], sizes: Sequence[Mapping[str, int]], purpose: str,
                        workdir: str | Path, progress: Callable[[str], None], timeout: float = 0,
                        changes: CompileChanges = CompileChanges()) -> tuple[Recompile, Session]:
    """`kinspect.inductor.jobs.recompile.compile_afresh` on the CPU: a stand-in pipeline compiled
    with these hints and measured at each size, in this process (the `changes` reach it as
    the real child's flags would; the stand-ins have no benchmark tensors and no layers)."""
    from kinspect.inductor.launch.modelfile import load_model_file

    live = FakePipeline(load_model_file(model), Options(hints=list(hints), changes=changes))
    live.changed = True
    live.compile()
    for point in sizes:
        live.measure(point)
    progress(f"  compiled with hints {list(hints)} and timed {len(sizes)} sizes (stand-in)")
    return Recompile(tuple(hints), purpose, variants_of(live.session), tuple(live.session.measurements)), live.session


def interrupt_measuring(monkeypatch, at_call: int) -> list:
    """Ctrl-C as the pipeline measures for the `at_call`-th time; the sizes of each call."""
    real = FakePipeline.measure
    calls: list = []

    def interrupted(self, sizes, *args, **kwargs):
        calls.append(sizes)
        if len(calls) == at_call:
            raise KeyboardInterrupt
        return real(self, sizes, *args, **kwargs)

    monkeypatch.setattr(FakePipeline, "measure", interrupted)
    return calls
