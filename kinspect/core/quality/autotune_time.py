"""Whether the time Inductor's autotuning gave a variant's config can be a time of the
problem that variant stands for: a check of any bug that tunes a hint on another problem
than it keys, not only the one kinspect knows the mechanism of.

Two tests, each on what the session already holds:

- the GPU's own limit: the problem's work at its key (2*M*N*K) over the GPU's bf16 ceiling
  (`ceilings.bf16_ceiling`: the data sheet's or kinspect's measured peak, the higher) gives the
  least time any kernel can take; an autotune time under half of it is not a time of that
  problem (stock Inductor's GPT-2 c_attn at hint 4096 read 2.8 µs, where 4096 x 768 x 2304
  needs at least 15 µs: every config had returned at once);
- kinspect's own timing of the same kernel at the same key, where the program ran that
  shape: autotuned more than twice (and 10 µs) faster than the kernel runs there in four runs
  of five (the 20th percentile of kinspect's runs: another process on the GPU, as when several
  programs are recorded at once, slows some of them and speeds none). Only that
  way: an autotune time above the kernel's is no sign of another problem (the GPU autotunes
  at whatever clock it is at when a compile starts, and Inductor's benchmark adds its own
  overhead; far above it, `autotune_overhead` says what that does to the ranking), while a
  config timed faster than it can run was timed on less work.

Neither speaks without its evidence (no known ceiling, no measurement at the key). Where
Inductor's fusion benchmark chose the variant, the kernel is the fused one, and its fused
time is the one held up (the table's winner was timed alone); and first to Inductor's own
fastest time of any choice alone at the same hint, which needs no GPU of kinspect's: a fused
kernel does the GEMM and more, so a fused time under half of it was taken on a smaller
problem (training programs' GEMMs with an epilogue on torch 2.11, fused at one size at every
hint: 7.0 µs at hint 4096, where the fastest choice alone took 20.6 µs).
"""

from __future__ import annotations

from kinspect.core.dispatch.shapes import Key
from kinspect.core.numbers import tflops, us_text
from kinspect.core.quality.ceilings import bf16_ceiling
from kinspect.core.quality.roofline import gemm_flops
from kinspect.core.quality.rules import Facts, site_rule
from kinspect.core.session.model import Finding, Site, Variant

KIND = "autotune-time-disagrees"

APART = 2.0
"""How far apart two timings of one kernel on one problem must be to be called different."""

SLACK_US = 10.0
"""...and by how much at least: a kernel of a few microseconds is timed mostly as overhead,
which autotuning and kinspect count differently (Inductor's benchmark adds about 4 µs to a
tiny kernel)."""


def tuned_us(v: Variant) -> tuple[float | None, str]:
    """The time Inductor chose the variant's kernel by, and what timed it: the fusion
    benchmark's for the choice it runs where that chose it (the kernel kinspect times is the
    fused one), else the autotune table's for the winner."""
    fused = next((r.time_us for r in v.fused if r.name == v.emitted and r.time_us), None)
    if fused is not None:
        return fused, "fusion-benchmarked"
    return next((r.time_us for r in v.autotune if r.name == v.winner and r.time_us), None), "autotuned"


def _fastest_alone(site: Site, v: Variant) -> tuple[str, float, int | None] | None:
    """The fastest time any choice did the variant's GEMM alone in, whose, and at which larger
    hint where not at its own: no fused kernel does that GEMM and more faster (against the
    picked choice's own time, one slow table entry would speak). A larger hint's problem (its
    key no smaller in any size) takes no less time on a quiet GPU, so its fastest bounds this
    one's too: a table timed while other work held the GPU (an MLP loop's hint-64 table read
    21.4 µs at best where hint 256's, four times the rows, read 7.0 µs) is held to that."""
    timed = [(r.name, r.time_us, None) for r in v.autotune if r.time_us]
    for w in site.variants:
        if v.key is not None and w.hint is not None and w.key is not None and _no_smaller(w.key, v.key):
            timed += [(r.name, r.time_us, w.hint) for r in w.autotune if r.time_us]
    return min(timed, key=lambda r: r[1]) if timed else None


def _no_smaller(big: Key, small: Key) -> bool:
    """Another key, every size of it at least the same size of `small` (tensor by tensor)."""
    return (big != small and len(big) == len(small) and all(len(b) == len(s) for b, s in zip(big, small))
            and all(x >= y for b, s in zip(big, small) for x, y in zip(b, s)))


@site_rule(KIND)
def autotune_times(site: Site, facts: Facts) -> list[Finding]:
    """One finding per site naming each variant whose autotune time cannot be its problem's."""
    ceiling = bf16_ceiling(facts.session.environment)
    parts, variants = [], []
    for v in site.variants:
        tuned, how = tuned_us(v)
        if v.hint is None or v.key is None or tuned is None:
            continue
        fastest = _fastest_alone(site, v) if how == "fusion-benchmarked" else None
        if fastest is not None and tuned * APART < fastest[1] and fastest[1] - tuned > SLACK_US:
            where = "at this hint" if fastest[2] is None else f"at hint {fastest[2]}'s larger problem"
            parts.append(f"v{v.index} (hint {v.hint}) was fusion-benchmarked at {us_text(tuned)}, where the fastest "
                         f"choice autotuned alone {where} took {us_text(fastest[1])} ({fastest[0]}): the fused "
                         "kernel does that GEMM and its epilogue, so the fusion benchmark timed a smaller problem")
            variants.append(v.index)
            continue
        flops = gemm_flops(site, v.key)
        if ceiling and flops:
            least = flops / (ceiling.tflops * 1e12) * 1e6
            if tuned * APART < least:
                parts.append(f"v{v.index} (hint {v.hint}) was {how} at {us_text(tuned)}, but its key's problem "
                             f"({flops / 1e9:,.1f} GFLOP) takes at least {us_text(least)} at this GPU's bf16 peak "
                             f"({tflops(ceiling.tflops)}, {ceiling.source})")
                variants.append(v.index)
                continue
        timed = facts.session.timings_at(site.name, v.key).measured.get(v.index)
        runs = None if timed is None else timed.p20_us or timed.median_us
        if runs and tuned * APART < runs and runs - tuned > SLACK_US:
            parts.append(f"v{v.index} (hint {v.hint}) was {how} at {us_text(tuned)}; kinspect timed the same "
                         f"kernel at its own key at {us_text(runs)}"
                         + (" or more in four runs of five" if timed.p20_us else ""))
            variants.append(v.index)
    if not parts:
        return []
    return [Finding(KIND, "Inductor's autotune time is not a time of the problem the variant stands for: "
                    + "; ".join(parts) + " (the hint's kernel was chosen on another problem than its key)",
                    "warning", site=site.name, graph=site.graph, variants=tuple(variants))]
