"""The `kinspect` command line: its commands come from one registry, and a word that is
neither a command nor a file is refused in one line instead of being opened as a path."""

from __future__ import annotations

import sys
import types

import pytest

from kinspect import cli, commands
from kinspect.commands import Command


def test_a_command_is_its_module_plus_one_registry_line(monkeypatch, capsys):
    hello = types.ModuleType("kinspect.commands.hello")
    hello.add_args = lambda parser: parser.add_argument("--name", required=True)
    hello.run = lambda args: print(f"hello {args.name}") or 0
    monkeypatch.setitem(sys.modules, "kinspect.commands.hello", hello)
    monkeypatch.setattr(commands, "COMMANDS", (*commands.COMMANDS, Command("hello", "greet someone")))
    assert cli.main(["hello", "--name", "B"]) == 0
    assert capsys.readouterr().out == "hello B\n"
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "    hello     greet someone\n" in capsys.readouterr().out


@pytest.mark.parametrize("name", [c.name for c in commands.COMMANDS])
def test_every_registered_command_has_its_arguments(name, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main([name, "--help"])
    assert stop.value.code == 0
    usage = capsys.readouterr().out
    assert usage.startswith(f"usage: kinspect {name} [-h]") and "--debug" in usage


def test_an_unknown_word_that_is_not_a_file_is_a_one_line_error(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["explian", "samples/mlp.session.json"]) == 2
    assert capsys.readouterr() == ("", "kinspect: error: 'explian' is neither a command (open, explain, export, "
                                       "record, run, sweep, compare, advise, plot, inspect) nor a file\n")


def test_a_word_naming_a_file_is_opened_as_a_path(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "explian").write_text("")
    assert cli.main(["explian"]) == 2
    assert capsys.readouterr().err == ("kinspect: error: explian: expected a model file (.py), a session file "
                                       "(.json, .jsonl) or a TORCH_TRACE log\n")
