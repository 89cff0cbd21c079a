"""One rule for "fastest": every reader of a session measured both ways agrees.

The pipeline stores each variant's CUDA-event timing, then its CUPTI cross-check. Here
the two methods disagree on purpose (events: v0 fastest; CUPTI: v1), and the explain
table, its JSON, the inspector's summary, the debugger's panel, the breakpoints, the
conditions and the Markdown report must all read the events.
"""

from __future__ import annotations

import json

import pytest

from kinspect import cli
from kinspect.core.debugger.breakpoints import Breakpoint, EventContext, parse_condition
from kinspect.core.quality.explain import explain_site
from kinspect.core.export.report_md import render
from kinspect.core.session.runtime import DispatchEvent, Measurement
from kinspect.core.session.model import Environment, Session, Site, SymbolInfo, Variant
from kinspect.core.store import save
from kinspect.core.dispatch.shapes import FullKey
from kinspect.core.dispatch.symbolic import SizeExpr, TensorSpec
from kinspect.core.session.timings import KeyTimings, key_timings
from kinspect.tui.debug_text import debugger_text
from kinspect.core.debugger.cursor import IDLE, Current

HINTS = (64, 256, 4096)


def linear_site() -> Site:
    b = SizeExpr("s0")
    tensors = (TensorSpec("x", "input", (b, SizeExpr(1024))), TensorSpec("out", "output", (b, SizeExpr(4096))))
    variants = tuple(
        Variant(i, h, tuple(t.key_at_hint(h) for t in tensors), f"triton_tem_fused_mm_{i}")
        for i, h in enumerate(HINTS)
    )
    return Site("multi_kernel_0", "graph_0", "mm", tensors, variants)


SITE = linear_site()
KEY = SITE.runtime_key({"s0": 100})  # Inductor picks v0 (hint 64) here


def both_methods() -> Session:
    """Events: v0 12.0 < v1 12.9 < v2 20; CUPTI: v1 10.0 < v0 11.0 < v2 19. Stored as the
    pipeline stores them: per variant, the event timing and then the CUPTI one."""
    ms = []
    for v, (events, cupti) in enumerate(((12.0, 11.0), (12.9, 10.0), (20.0, 19.0))):
        ms.append(Measurement(SITE.name, KEY, v, "cuda_events", events, events - 0.1, events + 0.1, 50))
        ms.append(Measurement(SITE.name, KEY, v, "cupti", cupti, cupti - 0.1, cupti + 0.1, 20))
    return Session(
        environment=Environment(created="2026-11-30T00:00:00Z", gpu="NVIDIA H200"),
        symbols=[SymbolInfo("s0", "B", (), "x", 0, 1000)],
        sites=[SITE], measurements=ms,
        events=[DispatchEvent(0, SITE.name, KEY, 0, 0, False, 0, 0)],
    )


def test_with_both_methods_every_reader_says_v0_is_fastest(tmp_path, capsys):
    s = both_methods()
    (e,) = s.events
    expl = explain_site(s, SITE, FullKey(KEY))
    assert (expl.decision.chosen, expl.fastest, expl.regret, expl.slower) == (0, 0, 1.0, False)
    ctx = EventContext(s)
    assert ctx.fastest(e) == 0 and ctx.regret(e) == 1.0
    assert not Breakpoint.on_not_fastest(ctx).matches(e, ctx)
    assert not parse_condition("picked != fastest", ctx).predicate(ctx)(e)
    panel = debugger_text(s, Current(e, 0, 1, ()), live=False, state=IDLE, pending=None, preparing=False, runs=0).plain
    assert "measured (CUDA events): v0 12.0 µs, v1 12.9 µs, v2 20.0 µs — v0 (hint 64) is the fastest" in panel
    assert "| v0 (hint 64) | CUDA events | 12.0 | 11.9–12.1 | 50 | 11.0 | ×1.00 (fastest) |" in render(s)

    path = tmp_path / "s.json"
    save(s, path)
    assert cli.main(["explain", str(path), "--shape", "B=100", "--json"]) == 0
    (site,) = json.loads(capsys.readouterr().out)["sites"]
    assert (site["method"], site["fastest"], site["regret"], site["slower"]) == ("cuda_events", 0, 1.0, False)
    assert [v["median_us"] for v in site["variants"]] == [12.0, 12.9, 20.0]
    assert cli.main(["explain", str(path), "--shape", "B=100"]) == 0
    assert "timed by CUDA events; fastest v0: the chosen variant" in capsys.readouterr().out


def test_cupti_counts_where_no_variant_has_event_timings():
    s = both_methods()
    s.measurements = [m for m in s.measurements if m.method == "cupti"]
    t = s.timings_at(SITE.name, KEY)
    assert (t.method, t.fastest) == ("cupti", 1)
    assert Breakpoint.on_not_fastest(EventContext(s)).matches(s.events[0], EventContext(s))


def test_events_that_read_0_us_give_way_to_cupti():
    """A kernel shorter than the gap between launches reads 0 µs by CUDA events (the gap is
    taken off, floored at 0): CUPTI's durations decide there, for every variant."""
    t = key_timings([timing(0.0, 0.0, 0.0, 0), timing(3.0, 2.9, 3.1, 1),
                     timing(2.1, 2.0, 2.2, 0, "cupti"), timing(2.9, 2.8, 3.0, 1, "cupti")])
    assert (t.method, t.fastest, t.median(0), t.regret(1)) == ("cupti", 0, 2.1, pytest.approx(2.9 / 2.1))
    both_zero = key_timings([timing(0.0, 0.0, 0.0, 0), timing(0.0, 0.0, 0.0, 0, "cupti")])
    assert both_zero.method == "cuda_events"  # neither resolves it: the usual order


def timing(median: float, p20: float | None, p80: float | None, variant: int, method: str = "cuda_events") -> Measurement:
    return Measurement("multi_kernel_0", KEY, variant, method, median, p20, p80, 20)


def at(*pairs: tuple[float, float, float]) -> KeyTimings:
    return key_timings([timing(m, lo, hi, v) for v, (m, lo, hi) in enumerate(pairs)])


@pytest.mark.parametrize(("fastest", "picked", "slower"), [
    ((10.0, 9.8, 10.2), (11.0, 10.9, 11.2), True),     # apart, x1.10
    ((10.0, 9.8, 10.2), (11.0, 10.1, 11.9), False),    # the pick's p20 inside the fastest's spread
    ((10.0, 9.9, 10.0), (10.4, 10.3, 10.5), False),    # apart, but x1.04: noise
    ((10.0, 9.9, 10.0), (10.5, 10.4, 10.6), True),     # x1.05 exactly counts
])
def test_the_noise_rule(fastest, picked, slower):
    t = at(fastest, picked)
    assert t.fastest == 0 and t.slower(1) is slower and not t.slower(0)
    assert t.regret(1) == pytest.approx(picked[0] / fastest[0])


def test_ties_go_to_the_lowest_index_and_missing_spreads_read_as_the_median():
    assert at((10.0, 9.0, 11.0), (10.0, 9.5, 10.5)).fastest == 0
    t = key_timings([timing(10.0, None, None, 0), timing(10.6, None, None, 1)])
    assert t.slower(1)


def test_failures_are_shown_but_never_fastest():
    t = key_timings([
        Measurement("multi_kernel_0", KEY, 0, "cuda_events", None, error="CUDA out of memory"),
        timing(30.0, 29.0, 31.0, 1), timing(28.0, 27.0, 29.0, 1, "cupti"),
    ])
    assert t.method == "cuda_events" and t.fastest == 1
    assert t.measured[0].error == "CUDA out of memory" and t.median(0) is None and t.regret(0) is None


def test_a_key_timed_once_reads_as_the_one_rule_reads_it():
    """timings_by_key takes a sweep's usual key (one variant, one measurement) on a short
    path: it gives what the rule gives, for a time and a failure, on a site whose variants
    are kernels of their own and on one where v1 and v2 are one kernel."""
    from kinspect.core.session.timings import key_timings, timings_by_key

    other = ((9, 64),)
    ms = [timing(12.0, 11.0, 13.0, 1, "cupti"), Measurement("multi_kernel_0", other, 2, "cuda_events", None, None, None, 0)]
    for kernels in ({}, {"multi_kernel_0": (0, 1, 1)}):
        got = timings_by_key(ms, kernels)
        ks = kernels.get("multi_kernel_0", ())
        assert got[("multi_kernel_0", KEY)] == key_timings(ms[:1], None, ks)
        assert got[("multi_kernel_0", other)] == key_timings(ms[1:], None, ks)
        assert got[("multi_kernel_0", other)].fastest is None
    assert got[("multi_kernel_0", KEY)].fastest == 1 and list(got[("multi_kernel_0", KEY)].measured) == [1, 2]
