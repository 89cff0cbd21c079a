"""The shortcuts that opening a sweep of 300,000 measurements takes give what the plain
paths give: records built without their `__init__`, a key's pick against its fastest in
one look, picks scored in a list, sizes read off a key by a per-site plan, keys checked
for their layout all at once, and keys regrouped from their shapes."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic import synthetic_session

from kinspect.core.dispatch.batch import keys_to_array, layout_of, of_layout
from kinspect.core.dispatch.symbolic import SizeExpr, TensorSpec
from kinspect.core.errors import ShapeError
from kinspect.core.quality.overview import ShapePoint, SizeNamer, pick, picks
from kinspect.core.session.format.checks import a_key
from kinspect.core.session.format.key_table import key_column
from kinspect.core.session.runtime import Measurement
from kinspect.core.session.model import Session, Site, SymbolInfo, Variant
from kinspect.core.session.records import build
from kinspect.core.session.timings import KeyTimings, key_timings

KEY = ((4096,), (100, 1024), (4096, 1024), (100, 4096))


def test_built_records_are_the_records_init_makes():
    fields = [
        (Measurement, {"site": "s", "key": KEY, "variant": 1, "method": "cupti", "median_us": 2.0, "p20_us": None,
                       "p80_us": 2.5, "samples": 3, "l2_flush": False, "tflops": None, "gbps": 1.0, "error": None}),
        (KeyTimings, {"method": "cupti", "measured": {}, "fastest": None, "kernels": (0, 0)}),
        (ShapePoint, {"key": KEY, "sizes": {"B": 100}, "picked": 0, "fastest": 1, "regret": 1.5, "slower": True,
                      "pick_us": 3.0, "best_us": 2.0}),
    ]
    for cls, f in fields:
        (made,) = build(cls, [f])
        plain = cls(**f)
        assert made == plain and repr(made) == repr(plain) and list(vars(made).items()) == list(vars(plain).items())
        with pytest.raises(AttributeError):
            made.key = None  # type: ignore[misc]
    (m,) = build(Measurement, [fields[0][1]])
    assert hash(m) == hash(Measurement(**fields[0][1])) and m in {Measurement(**fields[0][1])}


def test_only_frozen_dataclasses_whose_init_only_sets_fields_are_built():
    @dataclass
    class Loose:
        a: int

    @dataclass(frozen=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            raise ValueError

    for cls in (Loose, Checked, int):
        with pytest.raises(TypeError):
            build(cls, [{"a": 1}])


times = st.one_of(st.none(), st.sampled_from([0.0, 5.0, 10.0, 10.2, 10.5, 11.0, 20.0]))
measurements = st.lists(
    st.builds(lambda v, method, med, p20, p80: Measurement("s", KEY, v, method, med, p20, p80),
              st.integers(0, 2), st.sampled_from(["cuda_events", "cupti"]), times, times, times),
    max_size=6)
kernels = st.sampled_from([(), (0, 1, 2), (0, 1, 0), (0, 0, 0), (0, 1, 1)])


@settings(max_examples=400, derandomize=True, database=None, deadline=None)
@given(measurements, kernels, st.booleans(), st.integers(-1, 3))
def test_the_pick_against_the_fastest_in_one_look_is_median_median_and_slower(ms, ks, by_rule, picked):
    if by_rule:
        t = key_timings(ms, None, ks)
    else:  # measured as given, one kernel's copies not sharing one measurement
        measured = {m.variant: m for m in ms}
        fastest = min((v for v, m in measured.items() if m.median_us is not None),
                      key=lambda v: (measured[v].median_us, v), default=None)
        t = KeyTimings(measured[fastest].method if fastest is not None else None, measured, fastest, ks)
    mine = t.median(picked)
    best = t.median(t.fastest) if t.fastest is not None else None
    want = None if mine is None or best is None or best <= 0 else (mine, best, t.slower(picked))
    assert t.against_fastest(picked) == want


def test_picks_in_a_list_are_each_keys_pick_whatever_the_layouts():
    s = synthetic_session()
    site = s.sites[0]
    keys = [site.runtime_key({"s0": b}) for b in (1, 63, 64, 100, 181, 256, 1000, 5000)]
    mixed = keys[:3] + [keys[3][:3], keys[4][:2] + ((7, 7, 7),)] + keys[5:]
    for ks in (keys, mixed, keys[:1]):
        for heuristic in ("inductor", "ceil"):
            for variants in (None, [0], [2, 1], [0, 2]):
                assert picks(site, ks, heuristic, variants) == [pick(site, k, heuristic, variants) for k in ks]


def named_site() -> tuple[Session, Site]:
    """Sizes named so that the users' names sort another way than Inductor's (s0 is `Z`,
    s1 `A`, s2 `M`), s0 and s1 each found in two dims, and s3 named `Z` too."""
    tensors = (TensorSpec("x", "input", (SizeExpr("s1"), SizeExpr("s0"))),
               TensorSpec("y", "input", (SizeExpr("s2"), SizeExpr("s1"))),
               TensorSpec("out", "output", (SizeExpr("s0"), SizeExpr("s3"))))
    variants = tuple(Variant(i, h, tuple(t.key_at_hint(h) for t in tensors), f"k{i}") for i, h in enumerate((64, 256)))
    site = Site("multi_kernel_0", "graph_0", "mm", tensors, variants)
    s = synthetic_session(sites=1)
    s.sites = [site]
    s.symbols = [SymbolInfo("s0", "Z", (), "x", 1, 8), SymbolInfo("s1", "A", (), "x", 0, 8),
                 SymbolInfo("s2", "M", (), "y", 0, 8), SymbolInfo("s3", "Z", (), "out", 1, 8)]
    return s, site


@pytest.mark.parametrize("key", [
    ((5, 6), (7, 8), (9, 10)),
    ((5,), (7, 8), (9, 10)),      # s0's first dim missing: out's says it
    ((5, 6), (7, 8)),             # out missing: s3 unknown
    ((5, 6),),
    (),
])
def test_sizes_read_off_a_key_by_plan_are_those_its_symbol_values_give(key):
    s, site = named_site()
    want = {s.label_of(sym): v for sym, v in sorted(site.symbol_values(key).items())}
    got = SizeNamer(s)(site, key)
    assert got == want and list(got) == list(want)
    assert SizeNamer(s)(site, ((5, 6), (7, 8), (9, 10))) == {"A": 5, "M": 7, "Z": 10}


@pytest.mark.parametrize("key", [
    ((5, 6), (7, 8), (9, 10)),
    ((5,), (7, 8), (9, 10)),
    ((5, 6), (7, 8)),
    (),
])
def test_a_keys_order_without_naming_it_is_the_order_of_its_name(key):
    s, site = named_site()
    namer = SizeNamer(s)
    assert namer.order(site)(key) == (tuple(namer(site, key).items()), key)


def test_a_known_keys_order_is_that_of_the_sizes_that_gave_it():
    s = synthetic_session()
    site = s.sites[0]
    namer, key = SizeNamer(s), site.runtime_key({"s0": 100, "s1": 64})
    assert namer.order(site)(key) == ((("B", 100), ("N", 64)), key)


def test_a_key_at_known_sizes_is_named_by_them():
    s = synthetic_session()
    site = s.sites[0]
    namer = SizeNamer(s)
    assert namer(site, site.runtime_key({"s0": 100, "s1": 64})) == {"B": 100, "N": 64}  # the workload's
    assert namer(site, site.runtime_key({"s0": 101, "s1": 64})) == {"B": 101}


def test_layouts_checked_at_once_are_each_keys_layout():
    keys = [KEY, KEY[:3], (), KEY[:2] + ((1,), (1, 2)), KEY, ((1, 2, 3),) + KEY[1:]]
    for layout in {layout_of(k) for k in keys}:
        assert of_layout(keys, layout).tolist() == [layout_of(k) == layout for k in keys]
        assert of_layout([k for k in keys if layout_of(k) == layout], layout).all()
    with pytest.raises(ShapeError, match=r"runtime key 3 has tensor ranks \(1, 2, 1, 2\), key 0 has \(1, 2, 2, 2\)"):
        keys_to_array([KEY, KEY, KEY, KEY[:2] + ((1,), (1, 2))])


def test_keys_regrouped_from_their_shapes_are_the_keys_read_one_by_one():
    one = [list(map(list, KEY))] * 3
    mixed = [[[4096], [5, 1024]], [], [[1, 2, 3]], [[4096], [5, 1024], [4096, 1024], [5, 4096]], [[], [0]]]
    for table in (one, [[[1, 2]], [[3]]], [[[1], [2, 3]], [[4], []]], mixed, [[]] * 2, []):
        assert key_column(table) == [a_key(k, "k") for k in table]
    assert key_column([[[1, 2]], [[1, "2"]]]) is None
    assert key_column([[[1, 2]], [(1, 2)]]) is None


class Collector:
    """Stands in for the `gc` module in `records`: the switch and the freezes of one block
    of code, not those of the whole process. The real ones are shared with every thread: in
    a pytest-xdist worker, execnet's thread takes work-stealing messages while a test runs
    and frees objects that an earlier test's session load froze, so the process's freeze
    count drops under a test that froze nothing."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.freezes = 0

    def isenabled(self) -> bool:
        return self.enabled

    def disable(self) -> None:
        self.enabled = False

    def enable(self) -> None:
        self.enabled = True

    def freeze(self) -> None:
        self.freezes += 1


def test_the_collector_is_off_while_records_are_built_and_back_on_after_whatever_happens(monkeypatch):
    from kinspect.core.session import records

    gc = Collector()
    monkeypatch.setattr(records, "gc", gc)
    with pytest.raises(KeyError):
        with records.collector_paused():
            assert not gc.enabled
            with records.collector_paused():
                pass
            assert not gc.enabled  # an inner block leaves it as the outer one set it
            raise KeyError
    assert gc.enabled and gc.freezes == 0
    with records.collector_paused(freeze=True):
        assert not gc.enabled
    assert gc.enabled and gc.freezes == 1  # what lives on is kept out of later passes

    off = Collector(enabled=False)  # someone else's block: theirs to turn back on, and to freeze
    monkeypatch.setattr(records, "gc", off)
    with records.collector_paused(freeze=True):
        pass
    assert not off.enabled and off.freezes == 0


def test_the_collector_paused_is_the_processs_own():
    import gc

    from kinspect.core.session import records

    assert records.gc is gc


def test_a_timing_table_split_by_site_whole_or_with_one_site_is_split_as_by_hand():
    from kinspect.core.session.timings import per_site

    table = synthetic_session(sites=3).timings()
    one = {w: t for w, t in table.items() if w[0] == "multi_kernel_1"}
    for t in (table, one, {}):
        by_hand: dict = {}
        for where, kt in t.items():
            by_hand.setdefault(where[0], {})[where] = kt
        split = per_site(t)
        assert split == by_hand and [list(part) for part in split.values()] == [list(part) for part in by_hand.values()]


def test_a_sites_measured_points_are_its_quality_points_before_naming_and_sorting():
    import random

    from kinspect.core.quality.overview import measured_points, site_quality

    s = synthetic_session(sites=3)
    rng = random.Random(3)
    for site in s.sites:
        for b in rng.sample(range(2, 5000), 60):
            key = site.runtime_key({"s0": b, "s1": 64})
            for v in rng.sample(range(3), rng.randint(1, 3)):
                med = rng.choice([None, 10.0, 10.2, 12.0, 30.0])
                s.measurements.append(Measurement(site.name, key, v, "cupti", med, med and med * 0.99, med and med * 1.01))
    for site in s.sites:
        timings = s.timings_per_site()[site.name]
        points = site_quality(s, site, timings).points
        rows = measured_points(site, timings)
        assert sorted((key, picked, at) for key, _, picked, at in rows) == \
               sorted((p.key, p.picked, (p.pick_us, p.best_us, p.slower)) for p in points)
        assert any(p.slower for p in points) and not all(p.slower for p in points)


def test_timings_at_one_key_read_from_the_table_are_those_of_its_measurements_alone():
    """The inspector asks `timings_at` at every site per keystroke: read off the session's table,
    they must be what the key's own measurements give, measured, re-measured, one kernel as one,
    or never measured."""
    s = synthetic_session(sites=3, variants=3)
    site = s.sites[0]
    key = s.measurements[0].key
    s.measurements.append(Measurement(site.name, key, 1, "cupti", 3.0, 2.9, 3.1, 20))
    s.measurements.append(Measurement(site.name, key, 1, "cupti", 2.0, 1.9, 2.1, 20))
    unmeasured = ((4096,), (77777, 1024), (4096, 1024), (77777, 4096))
    for where in {(m.site, m.key) for m in s.measurements} | {(site.name, unmeasured)}:
        scanned = key_timings([m for m in s.measurements if (m.site, m.key) == where], None, s.kernels.get(where[0], ()))
        assert s.timings_at(*where) == scanned
    assert s.timings_at(site.name, unmeasured).method is None
