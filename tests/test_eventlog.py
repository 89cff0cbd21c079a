"""A loaded session's events are columns that behave as the list of events they stand for."""

from __future__ import annotations

from collections import Counter

import pytest
from synthetic import synthetic_session

from kinspect.core.session.eventlog import EventLog
from kinspect.core.store import load, save


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    s = synthetic_session(sites=3, variants=3, events=500)
    path = tmp_path_factory.mktemp("log") / "s.session.json"
    save(s, path)
    return s.events, load(path).events


def test_a_loaded_session_keeps_its_events_as_columns_equal_to_the_recorded_ones(pair):
    recorded, loaded = pair
    assert isinstance(loaded, EventLog) and len(loaded) == 500
    assert loaded[0] == recorded[0] and loaded[-1] == recorded[-1] and loaded[10:13] == recorded[10:13]
    assert list(loaded) == recorded and loaded == recorded
    with pytest.raises(IndexError):
        loaded[500]


def test_counts_from_the_columns_equal_counts_over_the_events(pair):
    recorded, loaded = pair
    picks, wrong = loaded.tally()
    assert picks == Counter((e.site, e.key, e.picked) for e in recorded)
    assert wrong == Counter((e.site, e.key) for e in recorded if e.picked != e.predicted and e.override is None)


def test_mispredictions_and_overrides_are_told_apart():
    log = EventLog([0, 1, 2], [0, 0, 0], ["mk"], [0, 0, 0], [((4,),)], [1, 2, 0], [0, 0, 0],
                   [False, True, True], override=[None, 2, None])
    picks, wrong = log.tally()
    assert wrong == Counter({("mk", ((4,),)): 1})  # the forced call is no misprediction
    assert picks[("mk", ((4,),), 2)] == 1 and log[1].override == 2
