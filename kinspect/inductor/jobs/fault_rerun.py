"""The child side of `fault_probe`: the compile rerun with launches made synchronous.

`python -m kinspect.inductor.jobs.fault_rerun MODEL.py HINTS` compiles the model as the live
pipeline does, with `AlgorithmSelectorCache.benchmark_choice` wrapped to note the first
choice that raised a CUDA error and the autotuning under way, and prints one line:
`FAULT {json}` (`fault_probe.Fault`, or null where nothing faulted).
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import Any

from kinspect.inductor.recording.fault_probe import MARK, Fault, seen_to_json


def _probe(model: str, hints: list[int]) -> Fault | None:
    from torch._inductor import select_algorithm as sa

    from kinspect.inductor.recording import translate
    from kinspect.inductor.hooks.benchmark_tensors import sentence, short_at
    from kinspect.inductor.launch.modelfile import load_model_file
    from kinspect.inductor.recording.pipeline import LivePipeline, Options

    live = LivePipeline(load_model_file(model), Options(hints=hints))
    first: list[Fault] = []
    orig = sa.AlgorithmSelectorCache.benchmark_choice

    def benchmark_choice(cls: Any, choice: Any, autotune_args: Any) -> float:
        try:
            return orig(choice, autotune_args)
        except Exception as e:
            at = live.capture.autotuning
            if not first and at is not None and ("CUDA" in str(e) or "illegal" in str(e).lower()):
                rec = live.capture.current()
                inputs = tuple(_name(n) for n in getattr(choice, "input_nodes", ()))
                misses = short_at(rec.misfits if rec is not None else [], inputs or None, at.hint)
                symbols = translate.symbols(live.capture.graphs, live._dyn, live.mf.input_names, live._examples)
                names = {s.name: s.alias for s in symbols if s.alias}
                first.append(Fault(at.hint, at.node, at.op, str(getattr(choice, "description", "")),
                                   str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__,
                                   sentence(misses[0], at.op, names) if misses else None,
                                   seen_to_json(misses[0], at.op) if misses else None))
            raise

    sa.AlgorithmSelectorCache.benchmark_choice = classmethod(benchmark_choice)
    try:
        live.compile()
    except Exception:  # the compile is expected to die; the first fault is the answer
        pass
    return first[0] if first else None


def _name(node: Any) -> str:
    from kinspect.inductor.hooks.benchmark_tensors import _base_name

    return _base_name(node)


if __name__ == "__main__":
    fault = _probe(sys.argv[1], [int(h) for h in sys.argv[2].split(",")])
    print(MARK + json.dumps(None if fault is None else asdict(fault)), flush=True)
