"""Where a recording goes: a free name beside a session that is there, the log never
written over a file that is not a kinspect log, an empty recording saving nothing over
anything, a named session's older log kept until the new session is saved."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest
from synthetic import synthetic_session

from kinspect.core.errors import KinspectError
from kinspect.core.recording_files import recording_files
from kinspect.core.session.format.log import LiveLog
from kinspect.core.store import load, save


def test_a_default_name_that_is_taken_gives_the_next_free_one(tmp_path):
    default = tmp_path / "m.session.json"
    default.write_text("{}")
    (tmp_path / "m.1.session.jsonl").write_text("")  # a killed recording's log holds the next name
    files = recording_files(None, default)
    assert (files.shown, files.taken) == (str(tmp_path / "m.2.session.json"), str(default))
    assert files.log == tmp_path / "m.2.session.jsonl" and files.log.read_bytes() == b""  # reserved
    assert files.taken_text() == f"{default} is there: recording into {files.shown} (-o {default} replaces it)"


def test_nothing_recorded_is_saved_over_nothing(tmp_path):
    recorded = synthetic_session(sites=1, events=2)
    empty = replace(recorded, sites=[], events=[])
    named = tmp_path / "s.session.json"
    assert not recording_files(str(named), named).keeps(empty)  # no file there: the empty session is saved
    named.write_text("{}")
    files = recording_files(str(named), named)
    assert files.keeps(empty) and not files.keeps(recorded)


def test_a_named_sessions_older_log_stays_until_the_new_session_is_saved(tmp_path):
    named = tmp_path / "s.session.json"
    older, newer = synthetic_session(sites=1, events=3, seed=1), synthetic_session(sites=2, events=5, seed=2)
    save(older, named)
    log = LiveLog(named.with_suffix(".jsonl"), older)
    log.site(older.sites[0])
    log.close()
    files = recording_files(str(named), named)
    assert files.log == tmp_path / "s.session.1.jsonl"
    live = LiveLog(files.log, newer)
    for site in newer.sites:
        live.site(site)
    assert load(named.with_suffix(".jsonl")).sites == older.sites[:1]  # killed now, both are there
    live.close()
    save(newer, files.session)
    files.settle()
    assert load(named.with_suffix(".jsonl")).sites == newer.sites
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.session.json", "s.session.jsonl"]


@pytest.mark.parametrize("make, said", [
    (lambda p: p.symlink_to(p.with_name("elsewhere")), "is a symlink"),
    (lambda p: p.write_text("my notes\n"), "is there and is not a kinspect log; kinspect does not replace it"),
    (lambda p: p.mkdir(), "cannot record into it: Is a directory"),
])
def test_a_log_path_that_is_not_a_kinspect_log_is_refused_and_left_as_it_was(tmp_path, make, said):
    named = tmp_path / "s.session.json"
    make(named.with_suffix(".jsonl"))
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(KinspectError, match=said):
        recording_files(str(named), named)
    with pytest.raises(KinspectError, match=said):
        LiveLog(named.with_suffix(".jsonl"), synthetic_session(sites=1))
    assert sorted(os.listdir(tmp_path)) == before
    if not named.with_suffix(".jsonl").is_symlink() and named.with_suffix(".jsonl").is_file():
        assert named.with_suffix(".jsonl").read_text() == "my notes\n"
    assert not (tmp_path / "elsewhere").exists()


def test_a_log_being_recorded_into_is_refused_naming_its_process(tmp_path):
    named = tmp_path / "s.session.json"
    first = LiveLog(named.with_suffix(".jsonl"), synthetic_session(sites=1))
    with pytest.raises(KinspectError, match=f"process {os.getpid()} is recording into this log"):
        recording_files(str(named), named)
    first.close()


def test_the_files_are_absolute_so_a_program_that_changes_directory_saves_where_it_was_asked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    files = recording_files("rel.session.json", tmp_path / "unused.session.json")
    assert files.shown == "rel.session.json"
    assert files.session == tmp_path / "rel.session.json" and files.log == tmp_path / "rel.session.jsonl"


def test_an_output_that_is_the_program_or_read_only_is_refused(tmp_path):
    program = tmp_path / "prog.py"
    program.write_text("print(1)\n")
    with pytest.raises(KinspectError, match="prog.py: is .*prog.py, which this command reads"):
        recording_files(str(program), tmp_path / "prog.session.json", keep=[program])
    locked = tmp_path / "locked.session.json"
    locked.write_text("{}")
    locked.chmod(0o444)
    with pytest.raises(KinspectError, match="locked.session.json: is read-only; kinspect does not replace it"):
        recording_files(str(locked), locked)
    assert program.read_text() == "print(1)\n" and locked.read_text() == "{}"
