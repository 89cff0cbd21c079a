"""A session's events read into compact columns, from a session file and from a recording
log, giving the same events as `json.loads` of the whole would; a file laid out otherwise
(by hand, on one line) reads as before. benchmarks/session_memory.py measures what it
saves."""

from __future__ import annotations

import io
import json
from array import array
from dataclasses import replace

import pytest
from synthetic import synthetic_session

from kinspect.core.errors import SessionError
from kinspect.core.session.format.columns import Bools, Growing, Nullable, read_events
from kinspect.core.session.format.document import session_from_json, session_to_json
from kinspect.core.session.format.log import LiveLog
from kinspect.core.store import load, read, save


@pytest.fixture
def recorded(tmp_path):
    s = synthetic_session(sites=2, variants=3, events=300, seed=4)
    s.events = [replace(e, step=None) if i % 7 == 0 else e for i, e in enumerate(s.events)]  # a compile's run
    path = tmp_path / "s.session.json"
    save(s, path)
    return s, path


def test_a_saved_session_reads_its_events_into_arrays(recorded):
    s, path = recorded
    events = read(path).events
    assert isinstance(events.seq, array) and isinstance(events.t_ns, array) and isinstance(events.hit, Bools)
    assert isinstance(events.step, Nullable) and events.step[0] is None and events.step[1] == s.events[1].step
    assert events.seq.itemsize == 2 and events.site_ids.itemsize == 1  # the narrowest type that holds them
    assert list(events) == list(s.events)


def test_a_session_on_one_line_or_with_a_decoy_section_reads_as_json_makes_it(recorded, tmp_path):
    s, path = recorded
    doc = json.loads(path.read_text())
    one_line = tmp_path / "one.json"
    one_line.write_text(json.dumps(doc))
    assert list(read(one_line).events) == list(s.events)
    text = path.read_text().replace('"model":', '"decoy":{\n"events":{\n"seq":[0]\n},\n"x":1},\n"model":', 1)
    decoy = tmp_path / "decoy.json"
    decoy.write_text(text)
    assert list(read(decoy).events) == list(s.events)  # the section cut was not the document's own


def column(body: bytes):
    """The `seq` column of a document whose events section holds `body`, as read streaming;
    None where the section is left for json to read whole."""
    doc = b'{"format":"kinspect-session",\n"events":{\n"seq":[' + body + b'],\n"site":[]\n},\n"x":1}'
    read = read_events(io.BytesIO(doc))
    if read is None:
        return None
    rest, columns = read
    assert json.loads(rest) == {"format": "kinspect-session", "events": {}, "x": 1}
    return columns["seq"]


@pytest.mark.parametrize("body, made", [
    (b"1,2,300", array("h", [1, 2, 300])),
    (b"true,false", [True, False]),
    (b"null,5,null", [None, 5, None]),
    (b"null,null", [None, None]),
    (b"1,true", [1, True]),
    (b"1,2.5", [1, 2.5]),
    (b"9223372036854775808,1", [9223372036854775808, 1]),
    (b"", []),
])
def test_a_column_holds_what_json_reads_compact_where_it_can(body, made):
    col = column(body)
    assert list(col) == list(made) == json.loads(b"[" + body + b"]")
    if isinstance(made, array):
        assert col == made


@pytest.mark.parametrize("body", [b'1,"x"', b"1,[2]", b"1,{}", b"1,,2", b"1" + b"0" * 5000])
def test_a_column_of_other_values_is_left_for_json_to_read_whole(body):
    assert column(body) is None


@pytest.mark.parametrize("piece", [8, 9, 10, 64])
def test_a_column_read_in_pieces_joins_them(monkeypatch, piece):
    from kinspect.core.session.format import columns

    monkeypatch.setattr(columns, "_PIECE", piece)  # pieces that end in a number, at a comma, at `],`
    body = b",".join(b"%d" % v if v % 5 else b"null" for v in range(1, 200)) + b",70000"
    col = column(body)
    assert isinstance(col, Nullable) and col.values.typecode == "i"
    assert list(col) == json.loads(b"[" + body + b"]")


def test_a_session_read_in_small_pieces_is_the_session_saved(recorded, monkeypatch):
    from kinspect.core.session.format import columns

    s, path = recorded
    monkeypatch.setattr(columns, "_PIECE", 7)
    assert list(read(path).events) == list(s.events)


def test_a_growing_column_turns_into_a_list_at_the_first_value_it_cannot_hold():
    g = Growing()
    for v in (1, None, 3):
        g.append(v)
    g.flush()
    g.append("soon")
    assert g.done() == [1, None, 3, "soon"]


def test_a_bad_value_in_a_compact_column_is_named_as_before(recorded, tmp_path):
    _, path = recorded
    lines = path.read_text().split("\n")
    n = next(i for i, line in enumerate(lines) if line.startswith('"picked":['))
    values = json.loads(lines[n][len('"picked":'):].rstrip(","))
    values[5] = 9
    lines[n] = '"picked":' + json.dumps(values, separators=(",", ":")) + ","
    path.write_text("\n".join(lines))
    with pytest.raises(SessionError, match=r"events\.picked\[5\]: variant 9 out of range"):
        load(path)


def test_a_recording_log_reads_its_events_into_arrays(tmp_path):
    s = synthetic_session(sites=1, variants=3, events=0, seed=2)
    log = LiveLog(tmp_path / "m.session.jsonl", s)
    log.site(s.sites[0])
    log.runtime_site(0, s.sites[0].name)
    key = s.sites[0].variants[1].key
    log.record({"type": "key", "id": 0, "key": [list(t) for t in key]})
    for t in range(5000):
        log.record(["d", 0, 0, 1, t % 2 == 0, None, None, 1000 + t])
    log.close()
    events = load(tmp_path / "m.session.jsonl").events
    assert isinstance(events.t_ns, array) and isinstance(events.hit, Bools) and len(events) == 5000
    assert [e.t_ns for e in events][:3] == [0, 1, 2] and events[1].cache_hit is False
    assert session_from_json(json.loads(json.dumps(session_to_json(load(tmp_path / "m.session.jsonl"))))).events \
        == events  # written back as plain JSON, read back the same


def test_a_saved_key_table_is_read_in_pieces_each_shape_once(recorded, monkeypatch):
    from kinspect.core.session.format import columns
    from kinspect.core.session.format.key_table import KeyTable

    _, path = recorded
    monkeypatch.setattr(columns, "_PIECE", 64)  # a few keys a piece
    rest, keys = columns.cut_keys(path.read_bytes())
    assert isinstance(keys, KeyTable) and json.loads(rest)["keys"] == []
    assert keys == [tuple(map(tuple, k)) for k in json.loads(path.read_text())["keys"]]
    weights = {id(t) for k in keys for t in k if t == (4096, 1024)}
    assert len(weights) == 1  # the weight's shape, in every key of the Linear site, is one tuple


def test_a_bad_key_in_a_piece_is_named_as_before(recorded):
    _, path = recorded
    lines = path.read_text().split("\n")
    n = lines.index('"keys":[') + 4
    lines[n] = "[[-1]]" + ("," if lines[n].endswith(",") else "")
    path.write_text("\n".join(lines))
    with pytest.raises(SessionError, match=r"keys\[3\]\[0\]\[0\]: integer -1 outside 0\.\."):
        load(path)


def test_a_column_value_longer_than_any_kinspect_writes_is_named_in_one_line(recorded, monkeypatch):
    """Read on piece by piece, one endless number would copy all of itself at every piece."""
    from kinspect.core.session.format import columns

    _, path = recorded
    monkeypatch.setattr(columns, "_PIECE", 64)
    text = path.read_text()
    at = text.index('"seq":[') + len('"seq":[')
    path.write_text(text[:at] + "1" * (1 << 20) + text[at:])
    with pytest.raises(SessionError, match=r"holds a number too long to read$"):
        load(path)
