"""The one layer that touches `torch._inductor`, grouped by what each part does:

- `launch`: the user's code as kinspect starts it (a model file loaded, a torchrun rank joined);
- `hooks`: what patches or reads Inductor while it compiles and runs (the compile capture,
  the dispatch recorder, benchmark tensors at a hint, origins, caches, kernels, repeated
  layers, precompiling, and `hooks/fixes`: kinspect's fixes of Inductor's hint tuning);
- `timing`: kernel and whole-model latency (variants at a key, a program's keys, baselines);
- `recording`: a compile and its run turned into a session (a model file's live pipeline,
  a program's recording, and what a failed compile leaves: the fault pinned down, a reproducer);
- `jobs`: whole compiles driven for a command (fresh compiles in a process of their own,
  advise, compare, sweep, the synchronous fault rerun).

Each part imports only those listed before it. The commands and `kinspect.recording()` reach
this layer only through the names below, imported when first used so that a command that
never compiles never loads the modules behind them (and none of them imports torch before
it is called).
"""

from __future__ import annotations

import importlib
from typing import Any

ENTRY_POINTS = {
    "ModelFile": "launch.modelfile", "load_model_file": "launch.modelfile", "check_model_file": "launch.modelfile",
    "check_syntax": "launch.modelfile", "missing_imports": "launch.modelfile",
    "torchrun": "launch.torchrun", "Rank": "launch.torchrun",
    "LivePipeline": "recording.pipeline", "Options": "recording.pipeline",
    "LiveSource": "recording.live_source",
    "ProgramRecording": "recording.program", "RunOptions": "recording.program",
    "Advice": "jobs.advise", "run_advise": "jobs.advise", "run_program_advise": "jobs.program_advise",
    "run_compare": "jobs.compare",
    "run_sweep": "jobs.sweep",
}
"""Each name the layers above may import from here, and the module it lives in (a name
that is the module's own last part is the module)."""

__all__ = sorted(ENTRY_POINTS)


def __getattr__(name: str) -> Any:
    where = ENTRY_POINTS.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{where}")
    value = module if where.rpartition(".")[2] == name else getattr(module, name)
    globals()[name] = value
    return value
