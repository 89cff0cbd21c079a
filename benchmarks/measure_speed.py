"""Wall time to measure every variant of one site at one shape (GPU only).

Target: under 1 s for up to 8 variants of kernels under 1 ms. Compiles samples/linear.py
with eight hints (eight variants), then times `LivePipeline.measure` at several batch sizes,
with and without the CUPTI cross-check. The one-off peak and overhead calibration is done
first and not counted.

    python benchmarks/measure_speed.py [--hints 16,32,64,128,256,512,1024,4096]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    import torch

    from kinspect.commands.options import parse_hints
    from kinspect.inductor.launch.modelfile import load_model_file
    from kinspect.inductor.recording.pipeline import LivePipeline, Options

    ap = argparse.ArgumentParser()
    ap.add_argument("--hints", default="16,32,64,128,256,512,1024,4096")
    ap.add_argument("--model", default=str(ROOT / "samples" / "linear.py"))
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("measure_speed: needs a CUDA GPU")
    hints = parse_hints(args.hints)
    live = LivePipeline(load_model_file(args.model), Options(hints=hints))
    t0 = time.perf_counter()
    live.compile()
    print(f"compiled {args.model} with {len(hints)} hints in {time.perf_counter() - t0:.1f} s")
    live.measure({"B": 64})  # peaks and overhead calibration, once per session
    print(f"{'B':>6} {'variants':>8} {'kernel us (min-max)':>22} {'with CUPTI s':>13} {'events only s':>14}")
    for b in (64, 300, 1000, 4096, 16384):
        t = time.perf_counter()
        live.measure({"B": b})
        with_cupti = time.perf_counter() - t
        t = time.perf_counter()
        ms2 = live.measure({"B": b}, cupti=False)
        events_only = time.perf_counter() - t
        times = [m.median_us for m in ms2 if m.median_us]
        span = f"{min(times):.1f}-{max(times):.1f}" if times else "-"
        print(f"{b:>6} {len({m.variant for m in ms2}):>8} {span:>22} {with_cupti:>13.2f} {events_only:>14.2f}")
    live.close()


if __name__ == "__main__":
    main()
