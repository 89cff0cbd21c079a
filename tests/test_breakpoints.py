"""The breakpoint language as a user types it: what stops where, and what errors say."""

from __future__ import annotations

import ast
import builtins
import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic import synthetic_session

from kinspect.core.debugger.breakpoints import Breakpoint, EventContext, parse_condition
from kinspect.core.debugger.conditions import ConditionError
from kinspect.core.errors import KinspectError
from kinspect.core.session.runtime import DispatchEvent
from kinspect.core.session.model import Session


@pytest.fixture(scope="module")
def session() -> Session:
    """Sites: multi_kernel_0 (addmm on B), multi_kernel_1 (mm on B and 2*N); measured at B=1000."""
    return synthetic_session(sites=2, variants=3, events=0)


@pytest.fixture(scope="module")
def ctx(session: Session) -> EventContext:
    return EventContext(session)


def event(session: Session, site: str, b: int, *, picked: int | None = None, hit: bool = True,
          seq: int = 0, step: int | None = 0, override: int | None = None, n: int = 64) -> DispatchEvent:
    s = session.site(site)
    key = s.runtime_key({"s0": b, "s1": n})
    chosen = s.decide(key).chosen
    return DispatchEvent(seq, site, key, chosen if picked is None else picked, chosen, hit, step, None, override)


def holds(text: str, e: DispatchEvent, ctx: EventContext) -> bool:
    return parse_condition(text, ctx).predicate(ctx)(e)


@pytest.mark.parametrize(
    ("text", "site", "b", "hit", "expected"),
    [
        ('site == "multi_kernel_1" and B > 512', "multi_kernel_1", 1000, True, True),
        ('site == "multi_kernel_1" and B > 512', "multi_kernel_0", 1000, True, False),
        ('site == "multi_kernel_1" and B > 512', "multi_kernel_1", 100, True, False),
        ("miss", "multi_kernel_0", 100, False, True),
        ("miss", "multi_kernel_0", 100, True, False),
        ("hit", "multi_kernel_0", 100, True, True),
        ("B >= 1024 or s0 in (77, 128)", "multi_kernel_0", 128, True, True),
        ("B >= 1024 or s0 in (77, 128)", "multi_kernel_0", 129, True, False),
        ("B >= 1024 or s0 in (77, 128)", "multi_kernel_0", 4096, True, True),
        ("B not in (77, 128)", "multi_kernel_0", 129, True, True),
        ("not (B < 100 or B > 200)", "multi_kernel_0", 150, True, True),
        ("not B < 100 and miss", "multi_kernel_0", 150, False, True),
        ("site in ('multi_kernel_0', 'x') and picked == 0", "multi_kernel_0", 64, True, True),
        ("t1d0 == 1000 and t1d1 == 1024", "multi_kernel_0", 1000, True, True),
        ("B > 5e2 and B < 1_001", "multi_kernel_0", 1000, True, True),
        ("step == 0 and seq >= 0 and override == null", "multi_kernel_0", 1, True, True),
        ("predicted == picked", "multi_kernel_0", 1, True, True),
        ("B == -1 or true", "multi_kernel_0", 1, True, True),
    ],
)
def test_conditions_hold_where_they_should(session, ctx, text, site, b, hit, expected):
    assert holds(text, event(session, site, b, hit=hit), ctx) is expected


def test_symbol_values_come_from_the_key_by_alias_or_inductor_name(session, ctx):
    e = event(session, "multi_kernel_1", 777, n=64)
    assert holds("B == 777", e, ctx) and holds("s0 == 777", e, ctx)
    # N enters multi_kernel_1's key only as 2*s1, so it has no value there, and the
    # addmm site has no N at all: a symbol without a value makes comparisons false.
    assert not holds("N == 64", e, ctx) and not holds("N != 64", e, ctx)
    assert holds("N == null", e, ctx) and holds("s1 == null", e, ctx)
    assert holds("t2d1 == 128", e, ctx)  # but the key dim holds 2*N


def test_fastest_and_regret_come_from_measurements_at_the_events_key(session, ctx):
    # The synthetic session measured every site at B=1000: v1 at 10 us, v0 and v2 at 15 us.
    picked_v1 = event(session, "multi_kernel_0", 1000, picked=1)
    picked_v2 = event(session, "multi_kernel_0", 1000, picked=2)
    unmeasured = event(session, "multi_kernel_0", 999, picked=2)
    assert holds("fastest == 1 and regret == 1.0", picked_v1, ctx)
    assert holds("regret > 1.4 and regret < 1.6", picked_v2, ctx)
    assert holds("not hit and picked != fastest", dataclasses.replace(picked_v2, cache_hit=False), ctx)
    assert not holds("picked != fastest", picked_v1, ctx)
    # No measurement: fastest and regret are null, and comparisons with them are false.
    assert holds("fastest == null and regret == null", unmeasured, ctx)
    assert not holds("picked != fastest", unmeasured, ctx)
    assert not holds("regret < 100", unmeasured, ctx)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty condition"),
        ("   ", "empty condition"),
        ("S > 3", "column 1: unknown field 'S'"),
        ("B > 3 and Bx < 4", "column 11: unknown field 'Bx'; did you mean B?"),
        ("B = 3", "column 3: unexpected '=': use == to compare"),
        ("B > 3 && miss", "column 7: unexpected '&': use 'and'"),
        ("B > 3 || miss", "column 7: unexpected '|': use 'or'"),
        ("(B > 3", "column 7: expected ',' or ')', found end of input"),
        ("B > 3)", "column 6: expected 'and', 'or' or the end of the condition, found ')'"),
        ("B >", "column 4: expected a field, a number, a string or '(', found end of input"),
        ("B", "column 1: B is a number, not a condition; compare it, e.g. B > 512"),
        ("site", 'column 1: site is a string, not a condition; compare it, e.g. site == "..."'),
        ("site > 3", "column 6: cannot compare site (a string) with a number"),
        ('B == "x"', "column 3: cannot compare B (a number) with a string"),
        ("hit > false", "column 5: > needs numbers"),
        ("B < null", "column 3: null compares only with == or !="),
        ("1 < B < 4", "column 7: chained comparison"),
        ("B in 3", "column 6: 'in' needs a tuple"),
        ("B in (1, 'a')", "column 6: a tuple mixes numbers and strings"),
        ("B in (1, C)", "column 10: unknown field 'C'"),
        ("B in (1, s0)", "column 10: a tuple holds numbers or strings only"),
        ("site in (1, 2)", "column 6: site (a string) is never in a tuple of numbers"),
        ("(1, 2) == B", "column 1: a tuple only goes after 'in'"),
        ("site == 'abc", "column 9: string is not closed"),
        ("site == 'a\\nb'", "column 11: unknown escape"),
        ("B > 12abc", "column 5: a number runs into a name"),
        ("B > -s0", "column 5: '-' goes only before a number"),
        ("and B > 3", "column 1: 'and' needs something before it"),
        ("B > 3 and", "column 10: expected a field, a number, a string or '(', found end of input"),
        ("B > 3 miss", "column 7: expected 'and', 'or' or the end of the condition, found 'miss'"),
        ("miss and B", "column 10: B is a number, not a condition"),
        ("()", "column 1: empty parentheses"),
        ("B @ 3", "column 3: unexpected '@'"),
        ("B > 3 # note", "column 7: unexpected '#'"),
    ],
)
def test_bad_conditions_fail_in_one_line_naming_the_column(ctx, text, message):
    with pytest.raises(ConditionError) as err:
        parse_condition(text, ctx)
    assert message in str(err.value)
    assert "\n" not in str(err.value)
    assert isinstance(err.value, KinspectError)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('__import__("os")', "column 1: __import__(...): conditions have no function calls"),
        ('__import__("os").system("true")', "column 1: __import__(...)"),
        ("open('/etc/passwd')", "column 1: open(...)"),
        ("().__class__", "column 1: empty parentheses"),
        ("(miss).__class__", "column 7: unexpected '.'"),
        ("miss.__class__", "column 5: unexpected '.'"),
        ("lambda: 1", "column 1: unknown field 'lambda'"),
        ("[c for c in ()]", "column 1: unexpected '['"),
        ("B if miss else B", "column 3: expected 'and', 'or' or the end of the condition, found 'if'"),
        ("site == f'{1}'", "column 9: unknown field 'f'"),
        ("B > 0x10", "column 5: a number runs into a name"),
    ],
)
def test_python_is_not_the_language(ctx, text, message):
    with pytest.raises(ConditionError) as err:
        parse_condition(text, ctx)
    assert message in str(err.value)


def test_conditions_never_reach_pythons_evaluators(session, ctx, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a condition reached eval/exec/compile/literal_eval")

    for name in ("eval", "exec", "compile"):
        monkeypatch.setattr(builtins, name, refuse)
    monkeypatch.setattr(ast, "literal_eval", refuse)
    monkeypatch.setattr(ast, "parse", refuse)
    cond = parse_condition("(B > 512 or s0 in (1, 2)) and not miss and site != 'x' and regret != null", ctx)
    assert cond.predicate(ctx)(event(session, "multi_kernel_0", 1000, picked=2)) is True


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("Bs0 1.()'\",=<>!-_andornotinmisshitnull|&e")), max_size=40))
def test_any_text_parses_or_fails_with_a_condition_error(ctx, text):
    try:
        cond = parse_condition(text, ctx)
    except ConditionError as err:
        assert "\n" not in str(err)
        return
    result = cond.predicate(ctx)(DispatchEvent(3, "multi_kernel_0", ((4096,), (5, 1024), (4096, 1024), (5, 4096)), 0, 0, False))
    assert result in (True, False)


def test_deep_nesting_is_refused_not_a_crash(ctx):
    with pytest.raises(ConditionError, match="nested deeper"):
        parse_condition("(" * 200 + "miss" + ")" * 200, ctx)
    with pytest.raises(ConditionError, match="nested deeper"):
        parse_condition("not " * 200 + "miss", ctx)
    with pytest.raises(ConditionError, match="longer than 2000 characters"):
        parse_condition("miss or " * 300 + "miss", ctx)


# ---------------------------------------------------------------- structured kinds


def test_structured_breakpoints_stop_where_their_kind_says(session, ctx):
    e_site1_miss = event(session, "multi_kernel_1", 1000, hit=False, picked=2)
    e_site0_hit = event(session, "multi_kernel_0", 1000, hit=True, picked=1)
    on_site = Breakpoint.on_site("multi_kernel_1", ctx)
    on_miss = Breakpoint.on_miss(ctx)
    slower = Breakpoint.on_not_fastest(ctx)
    assert [b.matches(e_site1_miss, ctx) for b in (on_site, on_miss, slower)] == [True, True, True]
    assert [b.matches(e_site0_hit, ctx) for b in (on_site, on_miss, slower)] == [False, False, False]


def test_a_kind_with_a_condition_needs_both(session, ctx):
    bp = Breakpoint.on_site("multi_kernel_0", ctx, when="B > 512")
    assert bp.matches(event(session, "multi_kernel_0", 1000), ctx)
    assert not bp.matches(event(session, "multi_kernel_0", 100), ctx)
    assert not bp.matches(event(session, "multi_kernel_1", 1000), ctx)
    assert bp.describe() == "at multi_kernel_0 if B > 512"
    assert Breakpoint.when("  miss and B > 3 ", ctx).describe() == "when miss and B > 3"
    assert Breakpoint.on_miss(ctx).describe() == "on a cache miss"


def test_breakpoints_know_which_sites_they_can_stop_at(ctx):
    assert Breakpoint.on_site("multi_kernel_0", ctx).sites() == {"multi_kernel_0"}
    assert Breakpoint.when("site == 'multi_kernel_1' and B > 3", ctx).sites() == {"multi_kernel_1"}
    assert Breakpoint.when("site in ('a', 'b') or site == 'c'", ctx).sites() == {"a", "b", "c"}
    assert Breakpoint.when("site == 'a' or miss", ctx).sites() is None
    assert Breakpoint.when("not site == 'a'", ctx).sites() is None
    assert Breakpoint.on_site("multi_kernel_0", ctx, when="site == 'multi_kernel_1'").sites() == frozenset()


def test_breakpoint_errors_are_one_line(ctx):
    with pytest.raises(KinspectError, match="no site named 'nope'; this session has: multi_kernel_0, multi_kernel_1"):
        Breakpoint.on_site("nope", ctx)
    with pytest.raises(KinspectError, match="unknown breakpoint kind"):
        Breakpoint("sometimes")
    with pytest.raises(ConditionError, match="column 4: expected a field"):
        Breakpoint.on_miss(ctx, when="B >")


def test_a_breakpoint_follows_a_growing_live_session(session):
    """Parsed against one context, it evaluates against a later one with more measurements."""
    early = EventContext(dataclasses.replace(session, measurements=[]))
    bp = Breakpoint.on_not_fastest(early, when="B == 1000")
    e = event(session, "multi_kernel_0", 1000, picked=2)
    assert not bp.matches(e, early)
    assert bp.matches(e, EventContext(session))


def test_a_key_shorter_than_the_sites_tensors_leaves_symbols_without_value(ctx):
    short = DispatchEvent(0, "multi_kernel_0", ((4096,),), 0, 0, True)
    assert holds("B == null and t1d0 == null and t0d0 == 4096", short, ctx)
