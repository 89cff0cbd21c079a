"""Stepping through a recorded session, both ways, and the per-site timeline."""

from __future__ import annotations

import dataclasses

import pytest
from synthetic import synthetic_session

from kinspect.core.debugger.breakpoints import Breakpoint
from kinspect.core.errors import KinspectError
from kinspect.core.debugger.replay import Replay
from kinspect.core.session.runtime import DispatchEvent
from kinspect.core.session.model import Session
from kinspect.core.debugger.timeline import Timeline


@pytest.fixture(scope="module")
def session() -> Session:
    return synthetic_session(sites=3, variants=3, events=90, seed=3)


def walk(move) -> list[int]:
    """Indices visited by calling `move` until it cannot move."""
    out = []
    while (i := move()) is not None:
        out.append(i)
    return out


def test_a_fresh_cursor_is_before_the_first_event(session):
    r = Replay(session)
    assert r.index == -1 and r.current is None
    assert r.back() is None
    assert r.step() == 0 and r.current is session.events[0]


def test_stepping_forward_and_back_visits_every_event(session):
    r = Replay(session)
    assert walk(r.step) == list(range(90))
    assert r.step() is None and r.index == 89
    assert walk(r.back) == list(range(88, -1, -1))
    assert r.back() is None and r.index == 0


def test_step_counts_clamp_at_the_ends(session):
    r = Replay(session)
    assert r.step(10) == 9
    assert r.back(3) == 6
    assert r.back(100) == 0
    assert r.step(1000) == 89
    with pytest.raises(KinspectError, match="step count must be at least 1, got 0"):
        r.step(0)


def test_stepping_within_a_site_visits_only_its_events(session):
    r = Replay(session)
    mine = [i for i, e in enumerate(session.events) if e.site == "multi_kernel_1"]
    assert walk(lambda: r.step(site="multi_kernel_1")) == mine
    assert walk(lambda: r.back(site="multi_kernel_1")) == mine[-2::-1]
    r.goto(50)
    assert r.step(2, site="multi_kernel_1") == [i for i in mine if i > 50][1]
    with pytest.raises(KinspectError, match="no site named 'nope'"):
        r.step(site="nope")


def test_jumps(session):
    r = Replay(session)
    assert r.last() == 89
    assert r.first() == 0
    assert r.first() is None  # already there: no move
    assert r.goto(42) == 42 and r.current.seq == session.events[42].seq
    assert r.goto_seq(session.events[17].seq) == 17
    with pytest.raises(KinspectError, match="no event at index 90; this session has 90 events"):
        r.goto(90)
    with pytest.raises(KinspectError, match="no event with seq 12345"):
        r.goto_seq(12345)
    assert r.index == 17


@pytest.mark.parametrize(
    "conditions",
    [
        ["miss"],
        ['site == "multi_kernel_2" and B > 1000'],
        ['site in ("multi_kernel_0", "multi_kernel_1") and picked == 0'],
        ['site == "multi_kernel_0" and miss', 'site == "multi_kernel_2" and hit'],
        ["B < 100", 'site == "multi_kernel_1"'],
        ["picked == 7"],
    ],
)
def test_continue_stops_at_exactly_the_matching_events_both_ways(session, conditions):
    r = Replay(session)
    bps = [Breakpoint.when(c, r.ctx) for c in conditions]
    r.set_breakpoints(bps)
    expected = [i for i, e in enumerate(session.events) if any(b.matches(e, r.ctx) for b in bps)]
    assert walk(r.cont) == expected
    r.last()
    r.step()
    tail = [i for i in expected if i < r.index]
    assert walk(r.reverse) == tail[::-1]


def test_continue_from_a_restart_can_stop_at_the_first_event(session):
    r = Replay(session)
    r.set_breakpoints([Breakpoint.when(f"seq == {session.events[0].seq}", r.ctx)])
    r.goto(30)
    assert r.cont() is None and r.index == 30
    assert r.reverse() == 0
    r.restart()
    assert r.index == -1 and r.cont() == 0


def test_structured_breakpoints_drive_the_cursor(session):
    r = Replay(session)
    r.set_breakpoints([Breakpoint.on_site("multi_kernel_2", r.ctx), Breakpoint.on_miss(r.ctx)])
    expected = [i for i, e in enumerate(session.events) if e.site == "multi_kernel_2" or not e.cache_hit]
    assert walk(r.cont) == expected
    r.goto(expected[1])
    assert [b.kind for b in r.matching()] == [
        k for k, hit in (("site", session.events[expected[1]].site == "multi_kernel_2"),
                         ("miss", not session.events[expected[1]].cache_hit)) if hit
    ]


def test_without_breakpoints_continue_does_not_move(session):
    r = Replay(session)
    r.goto(5)
    assert r.cont() is None and r.reverse() is None and r.index == 5
    r.set_breakpoints([Breakpoint.on_miss(r.ctx)])
    r.set_breakpoints([])
    assert r.cont() is None


def test_an_empty_session_moves_nowhere():
    r = Replay(synthetic_session(events=0))
    r.set_breakpoints([Breakpoint.on_miss(r.ctx)])
    assert [r.step(), r.back(), r.first(), r.last(), r.cont(), r.reverse()] == [None] * 6
    assert r.current is None


# ---------------------------------------------------------------- timeline


def with_override(session: Session, index: int, variant: int) -> Session:
    events = list(session.events)
    events[index] = dataclasses.replace(events[index], picked=variant, override=variant)
    return dataclasses.replace(session, events=events)


def test_timeline_spans_are_an_exact_compression_of_each_sites_choices(session):
    s = with_override(session, 40, 2)
    t = Timeline(s)
    assert t.sites == ["multi_kernel_0", "multi_kernel_1", "multi_kernel_2"]
    for site in t.sites:
        mine = [(i, e.picked, not e.cache_hit, e.override) for i, e in enumerate(s.events) if e.site == site]
        expanded = []
        for span in t.spans[site]:
            members = mine[span.start:span.start + span.count]
            assert (members[0][0], members[-1][0]) == (span.first, span.last)
            expanded += [(i, span.picked, span.miss, span.override) for i, *_ in members]
        assert expanded == mine
        assert len(t.spans[site]) < len(mine)
    (marked,) = [sp for sp in t.spans[s.events[40].site] if sp.override is not None]
    assert (marked.first, marked.count, marked.picked) == (40, 1, 2)


@pytest.mark.parametrize("width", [1, 7, 30, 90, 200])
def test_timeline_cells_account_for_every_event(session, width):
    s = with_override(session, 40, 2)
    t = Timeline(s)
    assert t.columns(width) == min(width, 90)
    for site in t.sites:
        cells = t.cells(site, width)
        assert len(cells) == t.columns(width)
        mine = [(i, e) for i, e in enumerate(s.events) if e.site == site]
        assert sum(c.count for c in cells) == len(mine)
        assert sum(c.misses for c in cells) == sum(not e.cache_hit for _, e in mine)
        assert sum(c.overrides for c in cells) == sum(e.override is not None for _, e in mine)
        for i, e in mine:
            cell = cells[t.column(i, width)]
            assert cell.count > 0
            if not cell.mixed:
                assert cell.picked == e.picked


def test_timeline_cell_shows_the_majority_choice():
    s = synthetic_session(sites=1, variants=3, events=0)
    base = s.site("multi_kernel_0")

    def ev(seq, picked, hit=True):
        return DispatchEvent(seq, base.name, base.runtime_key({"s0": 64}), picked, picked, hit)

    s.events = [ev(0, 2, hit=False), ev(1, 1), ev(2, 1), ev(3, 2), ev(4, 0), ev(5, 0)]
    t = Timeline(s)
    first, second = t.cells(base.name, 2)
    assert (first.count, first.picked, first.mixed, first.misses) == (3, 1, True, 1)
    assert (second.count, second.picked, second.mixed, second.misses) == (3, 0, True, 0)
    (only,) = t.cells(base.name, 1)
    assert (only.picked, only.count) == (0, 6)  # 0, 1 and 2 twice each: the lowest wins the tie
