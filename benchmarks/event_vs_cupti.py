"""Where CUDA-event timing and CUPTI part ways, per variant (GPU only).

kinspect times a variant as a CUDA graph of n back-to-back launches, divided by n; CUPTI
times each kernel alone. The two differ by what happens between back-to-back kernels (the
front end's launch gap, and the next kernel meeting the last one's dirty L2). This prints,
per variant and shape, the figures that separate those effects:

- `eager`: CUPTI's median duration of eager launches (what the cross-check compares with);
- `in graph`: CUPTI's median duration of the same kernel inside the timed CUDA graph;
- `gap`: CUPTI's median time from one kernel's end to the next one's start in that graph;
- `events/n`: the graph's CUDA-event span divided by n, before any correction;
- `slope`, `icpt`: a line fitted to the event span of graphs of 1, 2, 4, ... launches
  (up to ~2 ms): the per-launch cost and the fixed cost of a timed graph replay;
- `kinspect`: what `time_variants` reports (after its calibrated correction).

    python benchmarks/event_vs_cupti.py [--model samples/mlp.py] [--sizes 100,1000,4096]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def probe(launcher, variants, label: str) -> list[tuple]:
    import torch
    from torch.profiler import ProfilerActivity, profile

    from kinspect.inductor.timing.measure import kernel_durations, launch_graph, warm_up

    rows = []
    for v in variants:
        name = str(launcher.kernels[v].inductor_meta.get("kernel_name", ""))
        eager = statistics.median(kernel_durations(lambda: launcher.launch(v), 20, name))
        launcher.restore()
        rough = max(warm_up(launcher, v), 1.0)
        n = min(50, max(1, int(200 / rough)))
        graph = launch_graph(launcher, v, n)
        if graph is None:
            rows.append((label, v, eager, None, None, None, None, None))
            continue
        graph.replay()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                graph.replay()
            torch.cuda.synchronize()
        ks = sorted((e.time_range.start, e.time_range.end) for e in prof.events()
                    if getattr(e, "device_type", None) is not None and e.device_type.name == "CUDA"
                    and name in e.name)
        durs = [b - a for a, b in ks]
        gaps = [ks[i + 1][0] - ks[i][1] for i in range(len(ks) - 1) if ks[i + 1][0] - ks[i][1] < 50]
        per_launch = _median_span(graph, 10) / n
        launcher.restore()
        slope, icpt = _fit(launcher, v, rough)
        rows.append((label, v, eager, statistics.median(durs), statistics.median(gaps) if gaps else None,
                     per_launch, slope, icpt))
    return rows


def _median_span(graph, reps: int) -> float:
    """Median CUDA-event span (us) of one replay, queued behind a sleep kernel so the CPU's launch never shows."""
    import torch

    from kinspect.inductor.timing.measure import event_span, span_us

    spans = []
    for _ in range(reps):
        torch.cuda._sleep(2_000_000)
        timed = event_span(graph.replay)
        torch.cuda.synchronize()
        spans.append(span_us(timed))
    return statistics.median(spans)


def _fit(launcher, v: int, rough: float) -> tuple[float, float]:
    """Least-squares line through (n, median span of a graph of n launches)."""
    from kinspect.inductor.timing.measure import launch_graph

    points = []
    n = 1
    while n == 1 or n * rough <= 2000:
        g = launch_graph(launcher, v, n)
        points.append((n, _median_span(g, 7)))
        del g
        n *= 2
    launcher.restore()
    if len(points) < 2:
        return float("nan"), float("nan")
    mx = statistics.fmean(p[0] for p in points)
    my = statistics.fmean(p[1] for p in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    return slope, my - slope * mx


def main() -> None:
    import torch

    import kinspect.inductor.timing.measurements as measurements
    import kinspect.inductor.recording.pipeline as pipeline_mod
    from kinspect.commands.options import parse_hints
    from kinspect.inductor.launch.modelfile import load_model_file

    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=str(ROOT / "samples" / "mlp.py"))
    ap.add_argument("--hints", default="64,256,4096")
    ap.add_argument("--sizes", default="100,1000,4096", help="values of the model's first size name")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("event_vs_cupti: needs a CUDA GPU")

    rows: list[tuple] = []
    real = measurements.time_variants
    current = {"label": ""}

    def probing(launcher, variants, *a, **kw):
        probed = probe(launcher, variants, f"{launcher.call.multi_kernel_name} {current['label']}")
        timed = real(launcher, variants, *a, **kw)
        rows.extend(r + (getattr(timed.get(r[1]), "median_us", None),) for r in probed)
        return timed

    measurements.time_variants = probing
    mf = load_model_file(args.model)
    live = pipeline_mod.LivePipeline(mf, pipeline_mod.Options(hints=parse_hints(args.hints)))
    live.compile()
    name = next(iter(mf.examples))
    for value in (int(x) for x in args.sizes.split(",")):
        current["label"] = f"{name}={value}"
        live.measure({name: value}, cupti=False)
    print(f"overheads: {live.session.environment.peaks}")
    print(f"{'site shape':>24} {'v':>2} {'eager':>8} {'in graph':>9} {'gap':>6} {'events/n':>9} "
          f"{'slope':>8} {'icpt':>6} {'kinspect':>9} {'kinspect/eager':>15}")
    for label, v, eager, ing, gap, raw, slope, icpt, ours in rows:
        def f(x, w=8):
            return f"{x:>{w}.2f}" if x is not None else f"{'-':>{w}}"
        ratio = f"{ours / eager:>15.3f}" if ours else f"{'-':>15}"
        print(f"{label:>24} {v:>2} {f(eager)} {f(ing, 9)} {f(gap, 6)} {f(raw, 9)} {f(slope)} {f(icpt, 6)} "
              f"{f(ours, 9)} {ratio}")
    live.close()


if __name__ == "__main__":
    main()
