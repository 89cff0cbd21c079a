"""Every field of a session file and of a recording log, set to wrong values, through
everything that reads one: the loader, `explain --json`, each export format and the
inspector's first screen. Each case is refused in one `kinspect: error:` line or handled
cleanly, its JSON output strict JSON, nothing unescaped in what is printed.

Bounded so the suite stays fast (about 20 s on the 2-core CI machine): a fixed set of
examples (`derandomize`), the inspector booted on a handful of them only.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import io
import json
import math
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from synthetic import synthetic_session

from kinspect import cli
from kinspect.core.errors import KinspectError
from kinspect.core.export import render
from kinspect.core.session.format.log import LiveLog
from kinspect.core.session.format.document import session_to_json
from kinspect.core.store import load

HUGE = "@@a 5000-digit integer@@"
"""Stands for an integer of 5,000 digits, which `json.dumps` will not write (`dumped`)."""

WRONG: list[Any] = [
    None, True, -1, 0, 2**62 + 1, 2**200, 1.5, math.nan, math.inf, -math.inf, "", "x" * 300,
    "\x1b]0;PWN\x1b\\", "a\u202eb\u200b", "[bold]x[/]", "__import__('os')", [], {}, [[1, 2]], [None], {"a": 1},
    ["pow", ["pow", ["pow", 2**62, 62], 62], 62], ["max", *["s0"] * 300], ["mod", "s0", 0],
    HUGE, "$\\foo$ $$", "\u202eexe.txt\u2066", ["max", *[f"s{i}" for i in range(63)]],
]
"""Wrong values of every kind: types, ranges, non-finite numbers, escapes, markup, code,
size trees that blow up when displayed, huge integers, mathtext and bidi controls."""


def dumped(doc: Any) -> str:
    return json.dumps(doc).replace(json.dumps(HUGE), "9" * 5000)


def _base() -> dict[str, Any]:
    s = synthetic_session(sites=2, variants=2, events=6, seed=3)
    doc = session_to_json(s)
    doc["environment"].update(rank=0, world_size=2, local_rank=0)
    return doc


BASE = _base()


def paths(node: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every field's path in the document: each key of each object, the first two
    entries of each list."""
    out = [at] if at else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += paths(v, (*at, k))
    elif isinstance(node, list):
        for i, v in enumerate(node[:2]):
            out += paths(v, (*at, i))
    return out


PATHS = [p for p in paths(BASE) if p[0] not in ("format", "version")]


def mutated(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    node = doc
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = copy.deepcopy(value)
    return doc


def kinspect(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(args))
    return code, out.getvalue(), err.getvalue()


def strict_json(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def check_every_reader(path: Path, tmp: Path) -> None:
    """The file through every reader: one error line, or clean output."""
    code, out, err = kinspect("explain", str(path), "--json")
    if code == 2:
        assert err.startswith("kinspect: error: ") and err.count("\n") == 1, err
        assert "\x1b" not in err and "\u202e" not in err
        return
    assert code == 0, err
    strict_json(out)
    code, out, err = kinspect("explain", str(path))
    assert code == 0, err
    assert "\x1b" not in out and "\u202e" not in out and "\u200b" not in out
    session = load(path)
    for fmt in ("md", "perfetto"):
        text = render(session, fmt)
        if fmt == "perfetto":
            strict_json(text)
    code, _, err = kinspect("export", str(path), "--format", "json", "-o", str(tmp / "out.json"))
    assert code == 0, err
    strict_json((tmp / "out.json").read_text(encoding="utf-8"))
    base = tmp / "base.session.json"
    if not base.exists():
        base.write_text(dumped(BASE), encoding="utf-8")
    code, out, err = kinspect("compare", str(base), str(path))  # side by side with the file it was made from
    assert code == 0, err
    assert "\x1b" not in out and "\u202e" not in out and "\u200b" not in out


FUZZ = settings(max_examples=120, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@FUZZ
@given(path=st.sampled_from(PATHS), value=st.sampled_from(WRONG))
def test_a_wrong_value_in_any_session_field_is_refused_or_read_cleanly(tmp_path, path, value):
    file = tmp_path / "s.json"
    file.write_text(dumped(mutated(path, value)), encoding="utf-8")
    check_every_reader(file, tmp_path)


def _log_lines() -> list[str]:
    import tempfile

    s = synthetic_session(sites=1, variants=2, events=0, seed=3)
    with tempfile.TemporaryDirectory() as tmp:
        log = LiveLog(Path(tmp) / "m.jsonl", s)
        log.symbols(s.symbols)
        for g in s.graphs:
            log.graph(g)
        for site in s.sites:
            log.site(site)
        log.runtime_site(0, s.sites[0].name)
        key = s.sites[0].variants[0].key
        log.record({"type": "key", "id": 0, "key": [list(t) for t in key]})
        log.record({"type": "step", "step": 1})
        log.record(["e", 0, 0, 0, 0, False, None, None, 1000])
        for m in s.measurements[:1]:
            log.measurement(m)
        log.close()
        return (Path(tmp) / "m.jsonl").read_text(encoding="utf-8").splitlines()


LOG = _log_lines()
LOG_FIELDS = [(i, p) for i, line in enumerate(LOG) for p in paths(json.loads(line))]


@FUZZ
@given(field=st.sampled_from(LOG_FIELDS), value=st.sampled_from(WRONG))
def test_a_wrong_value_in_any_log_record_is_refused_or_read_cleanly(tmp_path, field, value):
    line, path = field
    record = json.loads(LOG[line])
    node = record
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = copy.deepcopy(value)
    lines = [*LOG[:line], dumped(record), *LOG[line + 1:]]
    file = tmp_path / "m.session.jsonl"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    check_every_reader(file, tmp_path)


@settings(max_examples=4, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(path=st.sampled_from([p for p in PATHS if p[0] in ("sites", "symbols", "measurements")]),
       value=st.sampled_from(["\x1b]0;PWN\x1b\\", "a\u202eb\u200b", "[bold]x[/]", math.nan, ["pow", ["pow", 2**62, 62], 62]]))
def test_the_inspector_opens_or_refuses_a_wrong_session(tmp_path, path, value):
    from kinspect.core.source import RecordedSource
    from kinspect.tui.app import InspectorApp

    file = tmp_path / "s.json"
    file.write_text(dumped(mutated(path, value)), encoding="utf-8")
    try:
        session = load(file)
    except KinspectError:
        return
    app = InspectorApp(RecordedSource(session, file))

    async def first_screen() -> None:
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.pause()

    asyncio.run(first_screen())
    assert app.return_code in (None, 0)


@settings(max_examples=30, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(twice=st.lists(st.integers(1, len(LOG) - 1), min_size=1, max_size=4))
def test_log_records_written_twice_read_once_or_refused_cleanly(tmp_path, twice):
    lines = list(LOG)
    for i in sorted(twice, reverse=True):
        lines.insert(i + 1, lines[i])
    file = tmp_path / "m.session.jsonl"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    check_every_reader(file, tmp_path)
    once = tmp_path / "once.session.jsonl"
    once.write_text("\n".join(LOG) + "\n", encoding="utf-8")
    assert len(load(file).events) == len(load(once).events) and load(file).measurements == load(once).measurements


@settings(max_examples=40, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ranks=st.lists(st.tuples(st.integers(-1, 9), st.sampled_from([None, 0, 1, 2, 3, 2**21, HUGE])), min_size=2,
                      max_size=3))
def test_rank_sessions_whose_ranks_and_world_sizes_disagree_are_refused_or_merged_cleanly(tmp_path, ranks):
    files = []
    for i, (rank, world) in enumerate(ranks):
        doc = copy.deepcopy(BASE)
        doc["environment"].update(rank=rank, world_size=world)
        files.append(tmp_path / f"m.rank{i}.session.json")
        files[-1].write_text(dumped(doc), encoding="utf-8")
    code, out, err = kinspect("explain", *map(str, files), "--json")
    if code == 2:
        assert err.startswith("kinspect: error: ") and err.count("\n") == 1, err
        return
    assert code == 0, err
    merged = strict_json(out)
    assert all(0 <= r["rank"] < merged["world_size"] for r in merged["ranks"])
