"""`hint-at-examples` on GPU sessions: a graph that could run near a hint at no size tuned
that hint's variants at its example sizes, and the finding says so with what they ran."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

from kinspect.core.dispatch.hint_sizes import Refusal, assign
from kinspect.core.quality.findings import refreshed
from kinspect.core.store import load

SESSIONS = Path(__file__).parent / "fixtures" / "sessions"
FELL_BACK = SESSIONS / "gpt_train_hints_16_23_32_h100_2026-12-07.session.json"
"""The GPT-2-family loop at 16, 23, 32 (H100, the device script's programs part), recorded
before alignment guards were rounded for: its backward graph guards S to a multiple of 8, so
hint 23 halved to 11, 5 and 2 and fell back to the example 4 x 64."""


def _found(session):
    return [f for f in refreshed(session) if f.kind == "hint-at-examples"]


def test_a_hint_tuned_at_the_example_sizes_is_named_with_what_its_variant_ran():
    s = load(FELL_BACK)
    (f,) = _found(s)
    assert f.graph == "graph_1 (backward)" and f.severity == "warning" and f.site is None
    assert f.message.startswith(
        "hint 23's variant at the graph's 10 sites was tuned and keyed at the graph's example sizes "
        "(input_ids_0=4 input_ids_1=64 logits_to_keep=0), not at 23: a guard of the graph (Eq(Mod(s70, 8), 0)")
    # Each recorded dispatch of the graph, counted one by one: hint 23's variant ran them all.
    hint_of = {(site.name, v.index): v.hint for site in s.sites if site.graph == f.graph for v in site.variants}
    ran = Counter(hint_of[(e.site, e.picked)] for e in list(s.events) if (e.site, e.picked) in hint_of)
    assert ran == {23: 90}
    assert f.message.endswith("Inductor runs it wherever those sizes are nearest: it ran 90 of the graph's "
                              "90 dispatches")
    # Events held as plain objects count alike.
    assert [g.message for g in _found(dataclasses.replace(s, events=list(s.events)))] == [f.message]


def test_a_hint_rounded_for_the_same_guard_is_no_finding():
    s = load(FELL_BACK)

    def multiple_of_8(env):
        return None if env["s70"] % 8 == 0 else Refusal("a guard of the graph (Eq(Mod(s70, 8), 0)) fails",
                                                         frozenset({"s70"}))

    graphs = []
    for g in s.graphs:
        if g.hint_sizes:
            ranges = {sym: (0, 0) if sym == "s55" else (2, None) for sym in g.hint_sizes[0].values}
            sizes = tuple(assign(a.hint, ranges, [], runs=multiple_of_8) for a in g.hint_sizes)
            assert {a.hint: a.values["s70"] for a in sizes} == {16: 16, 23: 24, 32: 32}
            g = dataclasses.replace(g, hint_sizes=sizes)
        graphs.append(g)
    assert _found(dataclasses.replace(s, graphs=graphs)) == []
    assert _found(load(SESSIONS / "gpt_train_hints_16_32_h100_2026-12-07.session.json")) == []
