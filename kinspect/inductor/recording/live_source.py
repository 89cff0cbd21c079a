"""The inspector's live session source: a model.py compiling and running on this GPU.

The inspector (kinspect.tui) takes any object with the `SessionSource` shape of
kinspect.core.source; this one wraps a `LivePipeline`. Everything slow (the compile,
running the workload, measuring) happens in methods the inspector calls from a thread
worker, with progress reported as text and a cancel event honoured between steps. The pipeline's lock serialises GPU work,
so a measurement never interleaves with a workload step.

Live stepping: `set_gate` installs a callable the recorder calls before each dispatch
launches, with the decision as a `DispatchEvent`; it may block (the debugger pauses the
model's thread there) and may return a variant to force instead of Inductor's choice.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kinspect.core.errors import KinspectError
from kinspect.core.session.compile_changes import CompileChanges
from kinspect.core.session.runtime import BASELINE_KINDS, Baseline, Measurement
from kinspect.core.session.model import Session, Site
from kinspect.core.dispatch.shapes import Key, format_key
from kinspect.core.source import EventGate, ProgressCallback
from kinspect.inductor.launch.modelfile import load_model_file
from kinspect.inductor.recording.pipeline import DEFAULT_HINTS, LivePipeline, Options, StepResult


class LiveSource:
    live = True

    def __init__(self, model: str | Path, options: Options | None = None) -> None:
        self.model = Path(model)
        self.options = options or Options()
        self.pipeline: LivePipeline | None = None
        self.prepared = False
        self._mf = load_model_file(self.model)

    # ------------------------------------------------------------ SessionSource

    @property
    def session(self) -> Session:
        if self.pipeline is None:
            return Session(environment=_placeholder_env())
        return self.pipeline.session

    @property
    def can_measure(self) -> bool:
        return self.prepared

    def banner(self) -> str:
        env = self.session.environment
        hints = ",".join(str(h) for h in (self.options.hints or self._mf.hints or DEFAULT_HINTS))
        state = "live" if self.prepared else "compiling"
        text = f"{state}: {self.model} on {env.gpu or 'CUDA'} · torch {env.torch or '?'} · hints {hints}"
        # What was asked for until the compile has said what it did (a model without
        # repeated layers compiles as it is).
        changed = (CompileChanges.stated(env.config) if self.prepared else self.options.changes).banner()
        return f"{text} · {changed}" if changed else text

    def prepare(self, progress: Callable[[str], None], cancel: threading.Event) -> None:
        """Compile (minutes under max-autotune) at the example sizes, once.

        The workload is not run here: the debugger runs it, so that its first pass meets
        Inductor's shape cache empty and every cache miss can be stopped at."""
        if self.prepared:
            return
        self.options.progress = progress
        self.pipeline = LivePipeline(self._mf, self.options)
        self.pipeline.compile()
        self.prepared = True

    def measure(self, site: Site, key: Key, progress: ProgressCallback, cancel: threading.Event) -> list[Measurement]:
        pipeline = self._ready()
        sizes = self.sizes_for(site, key)
        done = [0]

        def say(text: str) -> None:
            done[0] += 1
            progress(done[0], done[0] + 1, text)

        return pipeline.measure(sizes, site.name, progress=say, cancel=cancel)

    def baselines(self, site: Site, key: Key, progress: Callable[[str], None],
                  cancel: threading.Event) -> list[Baseline]:
        """The whole model at the sizes that give `key`: eager, static, exact hint, hinted."""
        return self._ready().baselines(self.sizes_for(site, key), BASELINE_KINDS, progress=progress,
                                       cancel=cancel)

    # ------------------------------------------------------------ running

    def run_workload(self, on_step: Callable[[StepResult], None] | None = None,
                     cancel: threading.Event | None = None) -> list[StepResult]:
        return self._ready().run_workload(on_step=on_step, cancel=cancel)

    def set_gate(self, gate: EventGate | None) -> None:
        """Pause or override before each dispatch launches; None removes the gate."""
        self._ready().recorder.set_event_gate(gate)

    def sizes_for(self, site: Site, key: Key) -> dict[str, int]:
        """The model's named sizes that produce `key` at `site` (a dim that is one symbol
        gives that symbol's value); the other names keep their example values."""
        values = site.symbol_values(key)
        sizes: dict[str, int] = {}
        for sym in self.session.symbols:
            if sym.name in values and sym.alias:
                sizes[sym.alias] = values[sym.name]
        missing = [s for s in site.symbols if s not in values]
        if missing:
            raise KinspectError(
                f"cannot tell the model's sizes from {format_key(key)}: "
                f"{', '.join(self.session.label_of(s) for s in missing)} appear only inside expressions"
            )
        return sizes

    def close(self) -> None:
        if self.pipeline is not None:
            self.pipeline.close()

    def _ready(self) -> LivePipeline:
        if self.pipeline is None or not self.prepared:
            raise KinspectError("the model is still compiling")
        return self.pipeline


def _placeholder_env() -> Any:
    from kinspect.core.session.model import Environment

    return Environment(created="", gpu=None, torch=None)
