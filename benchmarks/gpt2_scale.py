"""GPT-2 small (12 layers) on the GPU: how long kinspect takes to compile and record a
real transformer whose every multi-kernel is called from 12 layers.

Prints the compile, workload, measurement and save times, and the session's size (sites,
call sites, events); saves the session so the CPU benchmarks can open it
(`benchmarks/tui_open.py --session FILE`, `benchmarks/tui_latency.py --session FILE`).

Usage (CUDA, transformers installed): python benchmarks/gpt2_scale.py [-o gpt2_small.session.json]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("-o", "--output", default="gpt2_small.session.json")
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--hints", help="comma-separated hints instead of the model file's (e.g. 256,4096)")
    p.add_argument("--fit-benchmark-tensors", action="store_true", help="patch Inductor's hint autotuning (kinspect's fit)")
    a = p.parse_args()
    os.environ["GPT2_LAYERS"] = str(a.layers)

    from kinspect.commands.options import parse_hints
    from kinspect.core.errors import KinspectError
    from kinspect.inductor.launch.modelfile import load_model_file
    from kinspect.core.session.compile_changes import CompileChanges
    from kinspect.inductor.recording.pipeline import LivePipeline, Options

    t0 = time.perf_counter()
    mf = load_model_file(ROOT / "samples" / "gpt2.py")
    hints = parse_hints(a.hints) if a.hints else None
    options = Options(hints=hints, failure_log=Path(a.output).with_suffix(".log"),
                      changes=CompileChanges(fit_benchmark_tensors=a.fit_benchmark_tensors))
    with LivePipeline(mf, options) as live:
        try:
            live.compile()
        except KinspectError as e:  # Inductor's own autotuning can fail (an illegal memory access)
            print(f"GPT-2 with {a.layers} layers: the compile failed after {time.perf_counter() - t0:.0f} s: {e}")
            raise SystemExit(1) from None
        t1 = time.perf_counter()
        live.run_workload()
        t2 = time.perf_counter()
        live.measure({"B": 4, "S": 128})
        t3 = time.perf_counter()
        live.save(a.output)
        t4 = time.perf_counter()
        s = live.session
        used_hints = live.hints
    calls = sum(len(site.call_sites) for site in s.sites)
    print(f"GPT-2 with {a.layers} layers: {len(s.sites)} sites, {calls} call sites, {len(s.events)} events, "
          f"{Path(a.output).stat().st_size / 1e6:.1f} MB")
    print(f"  compile (max-autotune, hints {used_hints})  {t1 - t0:7.1f} s")
    print(f"  workload ({len(mf.workload)} steps)          {t2 - t1:7.1f} s")
    print(f"  measure every variant at B=4 S=128 {t3 - t2:5.1f} s")
    print(f"  save                             {t4 - t3:7.1f} s")


if __name__ == "__main__":
    main()
