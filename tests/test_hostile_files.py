"""Session files made to attack the reader or the terminal: shown as plain text or refused
in one line, never interpreted, never a traceback."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from synthetic import synthetic_session

from kinspect.core.errors import SessionError
from kinspect.core.session.model import SymbolInfo
from kinspect.core.store import load, read, save
from kinspect.core.session.format.document import session_to_json

MARKUP = [
    "[bold red]boom[/bold red]",
    "[/]",  # parsed as markup this raises MarkupError: nothing to close
    "[link=https://example.invalid]click[/link]",
    ":warning:",
    "[@click=app.quit]x[/]",
]


def marked_up_session():
    s = synthetic_session(sites=1, variants=3, seed=1)
    site = s.sites[0]
    variants = tuple(
        replace(v, kernel_name=f"{MARKUP[i]}_k{i}", source=f"# {MARKUP[i]}\n{v.source}", winner=MARKUP[i])
        for i, v in enumerate(site.variants)
    )
    s.sites[0] = replace(site, name="[bold]site[/bold]", op="[red]mm[/red]", variants=variants)
    s.measurements = [replace(m, site="[bold]site[/bold]") for m in s.measurements]
    s.environment = replace(s.environment, gpu="[blink]H200[/blink]", torch="[/]")
    s.symbols = [SymbolInfo("s0", "B", ("L['x'].size()[0]",), "[i]x[/i]", 0, 1000), *s.symbols[1:]]
    return s


def one_error_line(result) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("kinspect: error: ")
    assert result.stdout == ""
    return lines[0]


# ---------------------------------------------------------------- markup is text


def test_markup_in_names_is_shown_literally_by_explain(tmp_path, kinspect_cli):
    path = tmp_path / "s.json"
    save(marked_up_session(), path)
    overview = kinspect_cli("explain", path)
    assert overview.returncode == 0, overview.stderr
    for text in ["[bold]site[/bold]", "[red]mm[/red]", "[bold red]boom[/bold red]_k0", "[/]_k1", "[blink]H200[/blink]", "with torch [/]", "[i]x[/i]"]:
        assert text in overview.stdout, text
    decided = kinspect_cli("explain", path, "--shape", "B=100")
    assert decided.returncode == 0, decided.stderr
    for text in ["[bold]site[/bold] ([red]mm[/red])", "[bold red]boom[/bold red]_k0", "[/]_k1", "[link=https://example.invalid]click[/link]_k2"]:
        assert text in decided.stdout, text


def test_markup_in_sources_survives_a_round_trip_as_text(tmp_path):
    session = marked_up_session()
    save(session, tmp_path / "s.json")
    loaded = read(tmp_path / "s.json")
    assert loaded.sites[0].variants[1].source.startswith("# [/]\n")
    assert loaded == session


# ---------------------------------------------------------------- refused in one line


def _doc_with(change):
    doc = session_to_json(synthetic_session(sites=1, variants=2, events=4))
    change(doc)
    return doc


def _variant(field, value):
    return lambda doc: doc["sites"][0]["variants"][0].__setitem__(field, value)


ESCAPES = {
    "ESC in a kernel name": (_variant("kernel_name", "k\x1b[2J\x1b[31m"), "sites[0].variants[0].kernel_name: string holds control character '\\x1b'"),
    "ESC in a source": (_variant("source", "ok\n\x1b]0;pwned\x07"), "sites[0].variants[0].source: string holds control character '\\x07'"),
    "8-bit CSI in a name": (_variant("kernel_name", "k\x9b31m"), "sites[0].variants[0].kernel_name: string holds control character '\\x9b'"),
    "ESC in a symbol alias": (lambda d: d["symbols"][0].__setitem__("alias", "B\x1b[8m"), "symbols[0].alias: string holds control character '\\x1b'"),
    "ESC in a config value": (lambda d: d["environment"]["config"].__setitem__("mode", "\x1b[5m"), "environment.config.mode: string holds control character '\\x1b'"),
    "ESC in an opaque size": (
        lambda d: d["sites"][0]["tensors"][1]["sizes"].__setitem__(0, ["opaque", "\x1b[31ms0"]),
        "sites[0].tensors[1].sizes[0]: opaque expression text holds a control character",
    ),
    "10 MB kernel source": (_variant("source", "x" * (10 << 20)), "sites[0].variants[0].source: string longer than 4194304 characters (10485760)"),
    "10 MB kernel name": (_variant("kernel_name", "k" * (10 << 20)), "sites[0].variants[0].kernel_name: string longer than 256 characters (10485760)"),
    "__import__ as an operation": (
        lambda d: d["sites"][0]["tensors"][1]["sizes"].__setitem__(0, ["__import__", "os"]),
        "sites[0].tensors[1].sizes[0]: unknown expression operation '__import__'",
    ),
    "code as a symbol": (
        lambda d: d["sites"][0]["tensors"][1]["sizes"].__setitem__(0, ["add", "__import__('os').system('rm -rf ~')", 1]),
        "sites[0].tensors[1].sizes[0]: not a symbol name: \"__import__('os').system('rm -rf ~')\"",
    ),
    "a dunder symbol": (
        lambda d: d["sites"][0]["tensors"][1]["sizes"].__setitem__(0, ["mul", 2, "__builtins__"]),
        "sites[0].tensors[1].sizes[0]: not a symbol name: '__builtins__'",
    ),
    "ESC in a held symbol": (
        lambda d: d["graphs"][0].__setitem__("hint_sizes", [{"hint": 16, "values": {"s8": 8192}, "held": ["s8\x1b[2J"]}]),
        "graphs[0].hint_sizes[0].held[0]: string holds control character '\\x1b'",
    ),
    "code as a tuned size's symbol": (
        lambda d: d["graphs"][0].__setitem__("hint_sizes", [{"hint": 16, "values": {"__import__('os')": 8}}]),
        "graphs[0].hint_sizes[0].values: \"__import__('os')\" is not a symbol name",
    ),
    "a held symbol the sizes lack": (
        lambda d: d["graphs"][0].__setitem__("hint_sizes", [{"hint": 16, "values": {"s8": 8192}, "held": ["s9"]}]),
        "graphs[0].hint_sizes[0].held: 's9' is no symbol of the assignment",
    ),
    "an expression 40 deep": (
        lambda d: d["sites"][0]["tensors"][1]["sizes"].__setitem__(0, json.loads('["add", ' * 40 + '"s0"' + ", 1]" * 40)),
        "sites[0].tensors[1].sizes[0]: expression nested deeper than 32",
    ),
}


@pytest.mark.parametrize("change, message", ESCAPES.values(), ids=ESCAPES.keys())
def test_the_loader_refuses_escapes_huge_strings_and_code(tmp_path, change, message):
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(_doc_with(change)), encoding="utf-8")
    with pytest.raises(SessionError) as err:
        load(path)
    assert str(err.value) == f"{path}: {message}"


def test_explain_refuses_an_escape_sequence_in_one_line(tmp_path, kinspect_cli):
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(_doc_with(_variant("kernel_name", "k\x1b[2J"))))
    line = one_error_line(kinspect_cli("explain", path))
    assert "\x1b" not in line
    assert line.endswith("kernel_name: string holds control character '\\x1b'")


def test_explain_refuses_a_10_mb_string_in_one_line(tmp_path, kinspect_cli):
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(_doc_with(_variant("source", "x" * (10 << 20)))))
    assert one_error_line(kinspect_cli("explain", path)).endswith("string longer than 4194304 characters (10485760)")


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("lists.json", "[" * 100_000 + "]" * 100_000, "JSON nested too deeply"),
        ("objects.json", '{"a":' * 100_000 + "1" + "}" * 100_000, "JSON nested too deeply"),
        ("in-a-size.json", None, "JSON nested too deeply"),
        ("log.jsonl", '{"type":"header","format":"kinspect-log","version":1}\n' + "[" * 100_000 + "]" * 100_000 + "\n", "line 2: JSON nested too deeply"),
        ("digits.json", '{"format":"kinspect-session","version":' + "9" * 5000 + "}", "holds a number too long to read"),
    ],
    ids=lambda v: v if isinstance(v, str) and v.endswith(("json", "jsonl")) else "",
)
def test_explain_refuses_deep_nesting_and_huge_numbers_in_one_line(tmp_path, kinspect_cli, name, content, message):
    path = tmp_path / name
    if content is None:  # a valid session whose one size is 100,000 lists deep
        text = json.dumps(_doc_with(lambda d: d["sites"][0]["tensors"][1]["sizes"].__setitem__(0, "@")))
        content = text.replace('"@"', "[" * 100_000 + "]" * 100_000)
    path.write_text(content)
    assert one_error_line(kinspect_cli("explain", path)) == f"kinspect: error: {path}: {message}"


# ---------------------------------------------------------------- sizes capped as computed


def tower(depth: int) -> object:
    """`((s0**62)**62)...`: at s0=2, 2**(62**8) has 6.6e13 digits."""
    tree: object = "s0"
    for _ in range(depth):
        tree = ["pow", tree, 62]
    return tree


@pytest.mark.parametrize("size, shape, message", [
    (tower(8), "B=2", "size (((((((B**62)**62)**62)**62)**62)**62)**62)**62 exceeds 2**62 at B=2"),
    (["pow", "s0", 62], "B=100000", "size B**62 exceeds 2**62 at B=100000"),
    (["mul", "s0", "s0", "s0", "s0"], "B=100000", "size B**4 exceeds 2**62 at B=100000"),
], ids=["pow 8 deep", "s0**62", "s0**4"])
def test_explain_caps_an_evaluated_size_at_2_62_in_one_line(tmp_path, kinspect_cli, size, shape, message):
    """The loader takes these (the exponent is in range); evaluating them must neither run
    out of memory nor raise OverflowError."""
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(_doc_with(lambda d: d["sites"][0]["tensors"][1]["sizes"].__setitem__(0, size))))
    assert load(path).sites[0].tensors[1].sizes[0].to_json() == size
    assert one_error_line(kinspect_cli("explain", path, "--shape", shape)) == f"kinspect: error: {message}"


def test_a_50_mb_version_is_not_echoed(tmp_path, kinspect_cli):
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(_doc_with(lambda d: d.__setitem__("version", "x" * (50 << 20)))))
    line = one_error_line(kinspect_cli("explain", path))
    assert line == (f"kinspect: error: {path}: session format version 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'… "
                    "(52,428,800 characters) is not supported (this kinspect reads versions 1 and 2)")


def _set(*path_and_value):
    *path, value = path_and_value

    def change(doc):
        node = doc
        for p in path[:-1]:
            node = node[p]
        node[path[-1]] = value(node[path[-1]]) if callable(value) else value

    return change


LIMITS = {
    # docs/session-format.md, "Size limits" and "Safety rules": one past each limit is refused with its path
    "a name past 256": (_set("sites", 0, "name", "s" * 257), "sites[0].name: string longer than 256 characters (257)"),
    "a symbol name past 64": (_set("symbols", 0, "name", "s" * 65), "symbols[0].name: string longer than 64 characters (65)"),
    "free text past 64 KiB": (_set("findings", [{"kind": "k", "message": "m" * (64 * 1024 + 1)}]),
                              "findings[0].message: string longer than 65536 characters (65537)"),
    "65 tensors in a key": (_set("keys", 0, [[1]] * 65), "keys[0]: more than 64 entries"),
    "17 dims in a tensor": (_set("keys", 0, [[1] * 17]), "keys[0][0]: more than 16 entries"),
    "a size past 2**62": (_set("keys", 0, [[2**62 + 1]]), "keys[0][0][0]: integer 4611686018427387905 outside 0..4611686018427387904"),
    "1025 symbols": (_set("symbols", lambda s: s * 1025), "symbols: more than 1024 entries"),
    "257 variants": (_set("sites", 0, "variants", lambda v: v * 129), "sites[0].variants: more than 256 entries"),
    "257 hints": (_set("model", "hints", [64] * 257), "model.hints: more than 256 entries"),
    "1,000,001 workload steps": (_set("model", "workload", [{"B": 2}] * 1_000_001), "model.workload: more than 1000000 entries"),
    "10,001 autotune rows": (_set("sites", 0, "variants", 0, "autotune", [{"name": "c", "time_us": 1.0}] * 10_001),
                             "sites[0].variants[0].autotune: more than 10000 entries"),
    "an opaque size past 2000": (_set("sites", 0, "tensors", 1, "sizes", 0, ["opaque", "x" * 2001]),
                                 "sites[0].tensors[1].sizes[0]: opaque expression must hold its text (at most 2000 characters)"),
    "a variant index past 255": (_set("findings", [{"kind": "k", "message": "m", "variants": [256]}]),
                                 "findings[0].variants[0]: integer 256 outside 0..255"),
    "a NaN median": (_set("measurements", "median_us", 0, math.nan), "measurements.median_us[0]: expected a finite number of at least 0, got nan"),
    "an infinite p80": (_set("measurements", "p80_us", 0, math.inf), "measurements.p80_us[0]: expected a finite number of at least 0, got inf"),
    "a negative baseline": (_set("baselines", [{"sizes": {"B": 2}, "kind": "static", "gpu_us": -1.0}]),
                            "baselines[0].gpu_us: expected a finite number of at least 0, got -1.0"),
    "an alias that is no identifier": (_set("symbols", 0, "alias", "B C"),
                                       "symbols[0].alias: 'B C' is not a size name (an identifier, not starting with __)"),
    "a null pick": (_set("events", "picked", 0, None), "events.picked[0]: expected an integer, got null"),
    "rank 7 of 2": (lambda d: d["environment"].update(rank=7, world_size=2),
                    "environment.rank: rank 7 of a job of 2 (ranks run 0 to 1)"),
}


@pytest.mark.parametrize("change, message", LIMITS.values(), ids=LIMITS.keys())
def test_each_documented_limit_is_enforced_with_the_field_path(tmp_path, change, message):
    path = tmp_path / "big.json"
    path.write_text(json.dumps(_doc_with(change)), encoding="utf-8")
    with pytest.raises(SessionError) as err:
        load(path)
    assert str(err.value) == f"{path}: {message}"


def test_an_infinite_autotune_time_reads_as_no_time(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_doc_with(_set("sites", 0, "variants", 0, "autotune", [{"name": "c", "time_us": math.inf}]))))
    assert load(path).sites[0].variants[0].autotune[0].time_us is None
