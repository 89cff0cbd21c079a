"""Whether Inductor's autotuning timed a variant's kernel or something around it: the
other side of `autotune_time`, which asks whether a time is too short for its problem.

Where the program ran a variant's own key, kinspect timed that kernel on the same problem
Inductor autotuned it on (CUPTI: the kernel's own duration on the GPU). An autotune time
more than twice that and 10 µs above it (`autotune_time`'s measure of two timings apart) is
mostly something else: the host's launch latency, which Inductor's benchmark events take in
where a launch outlasts the L2 flush before it, another process on the GPU, or a GPU clocked
down while the compile kept it idle (H200 machine, MLP loop at hint 64: every config 24-49 µs,
the chosen kernel 4.5 µs; an H100's host, the same loop: 5.0-8.4 µs). The hint's configs were
then ranked on that, a noise larger than their differences, and a variant may run one that
is slow across its range. Held to kinspect's slowest usual run (the 80th percentile), so a
busy measurement does not speak.
`--autotune-device-time` takes the host's launch out of Inductor's benchmarks; a session
compiled so is held to the same test.
"""

from __future__ import annotations

from kinspect.core.numbers import us_text
from kinspect.core.quality.autotune_time import APART, SLACK_US, tuned_us
from kinspect.core.quality.rules import Facts, site_rule
from kinspect.core.session.compile_changes import DEVICE_TIME_KEY
from kinspect.core.session.model import Finding, Site

KIND = "autotune-timed-overhead"


@site_rule(KIND)
def autotune_overhead(site: Site, facts: Facts) -> list[Finding]:
    """One finding per site naming each variant autotuned far above its kernel's own time."""
    parts, variants = [], []
    for v in site.variants:
        tuned, how = tuned_us(v)
        if v.hint is None or v.key is None or tuned is None:
            continue
        timed = facts.session.timings_at(site.name, v.key).measured.get(v.index)
        runs = None if timed is None else timed.p80_us or timed.median_us
        if not runs or tuned < APART * runs or tuned - runs < SLACK_US:
            continue
        alone = sorted(r.time_us for r in v.autotune if r.time_us)
        spread = (f"; its {len(alone)} choices read {us_text(alone[0])}-{us_text(alone[-1])} alone"
                  if len(alone) > 1 else "")
        parts.append(f"v{v.index} (hint {v.hint}) was {how} at {us_text(tuned)}, where kinspect timed the same "
                     f"kernel at its own key at {us_text(runs)} on the GPU{spread}")
        variants.append(v.index)
    if not parts:
        return []
    remedy = ("" if facts.session.environment.config.get(DEVICE_TIME_KEY) else
              "; --autotune-device-time takes the host's launch out of their times")
    return [Finding(KIND, "Inductor's autotuning timed more than the kernel: " + "; ".join(parts)
                    + " (the host's launch latency, another process on the GPU or a GPU clocked down between "
                    "benchmarks, so the hint's configs were ranked on it" + remedy + ")",
                    "warning", site=site.name, graph=site.graph, variants=tuple(variants))]
