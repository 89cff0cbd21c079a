"""The README's commands run as written after its Quickstart: `kinspect` is on the PATH
then, each subcommand and flag it shows exists, and each file of this checkout it names
(samples, scripts, benchmarks, docs) is there."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from kinspect import cli
from kinspect.commands import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
REPO_DIRS = ("samples/", "scripts/", "benchmarks/", "docs/", "tests/")


def _blocks() -> list[str]:
    return re.findall(r"```[a-z]*\n(.*?)```", README, flags=re.S)


def _commands() -> list[list[str]]:
    """Every kinspect command line the README shows, as its words after `kinspect`."""
    lines = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", README, flags=re.S))
    lines += [line for block in _blocks() for line in block.splitlines()]
    out = []
    for line in lines:
        line = line.split("  #")[0].replace("\\|", "|")
        try:
            words = shlex.split(re.sub(r"[\[\]]", " ", line)) if line.count('"') % 2 == 0 else []
        except ValueError:  # an apostrophe in output shown as it prints: prose, not a command
            continue
        at = next((i for i, w in enumerate(words) if w == "kinspect"), None)
        if at is not None and all(re.fullmatch(r"[A-Z_0-9]+=\S*|torchrun|--\S+|-m|\S+py|N|\d+", w)
                                  for w in words[:at]):
            out.append([w for w in words[at + 1:] if w not in ("...", "|")])
    return out


SUBCOMMANDS = tuple(c.name for c in COMMANDS)


def _flags(sub: str, capsys) -> set[str]:
    with pytest.raises(SystemExit):
        cli.main([sub, "--help"])
    return set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", capsys.readouterr().out))


def test_the_quickstart_is_two_commands_and_says_how_kinspect_gets_on_the_path():
    quick = README.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    block = _blocks()[0]
    assert block in quick
    lines = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    assert [line.split()[0] for line in lines] == ["scripts/kinspect", "scripts/test"], lines  # two commands
    assert "`source .venv/bin/activate` puts" in quick.split(block, 1)[1]  # the way to the PATH, after .venv exists
    assert 'venv="$root/.venv"' in (ROOT / "scripts" / "_venv.sh").read_text()  # the one it creates
    assert 'kinspect = "kinspect.cli:main"' in (ROOT / "pyproject.toml").read_text()  # .venv/bin/kinspect
    for line in lines:
        if line.startswith("scripts/"):
            script = ROOT / line.split()[0]
            assert script.is_file() and script.stat().st_mode & 0o111, script


def test_every_kinspect_command_in_the_readme_names_a_subcommand_and_flags_that_exist(capsys):
    commands = _commands()
    assert len(commands) > 20
    flags = {sub: _flags(sub, capsys) for sub in SUBCOMMANDS}
    for words in commands:
        if not words:
            continue
        sub = words[0] if words[0] in SUBCOMMANDS else "inspect"
        for w in words:
            if w.startswith("-"):
                assert w.split("=")[0] in flags[sub], f"kinspect {' '.join(words)}: {sub} has no {w}"


def test_every_file_of_this_checkout_the_readme_names_is_there():
    named = set(re.findall(r"(?<![\w/.])((?:%s)[\w./-]*\w)" % "|".join(map(re.escape, REPO_DIRS)), README))
    assert "samples/mlp.py" in named and "scripts/kinspect" in named and "docs/first-screen.svg" in named
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, missing


def test_the_readme_shows_the_first_screen_says_what_is_on_it_and_what_works_without_a_gpu():
    intro, quick = README.split("## Quickstart", 1)
    quick = quick.split("\n## ", 1)[0]
    image = re.search(r"!\[[^\]]+\]\((docs/[\w.-]+\.svg)\)", intro)
    assert image, "no screenshot before the Quickstart"
    svg = (ROOT / image.group(1)).read_text()
    assert svg.lstrip().startswith("<svg") and "multi_kernel_0" in svg and "peak" in svg  # saved by the app
    assert (ROOT / "scripts" / "first_screen.py").is_file()  # what saves it again
    for mark in ("`!`", "`×1.62`", "`peak`", "`▶`"):
        assert mark in intro and mark.strip("`") in svg.replace("&#160;", " "), mark
    assert "installs torch (about two minutes)" in quick
    assert "**Without a GPU** everything that reads a session works" in quick


def test_the_readme_is_read_in_five_minutes_and_links_its_reference():
    """What a newcomer needs, in order, and no table cell of a paragraph; the rest is in docs/."""
    heads = re.findall(r"^## (.+)$", README, flags=re.M)
    assert heads[:3] == ["Quickstart", "A five-minute tour: how slow at my shape, and what to set",
                         "Your own program: `kinspect run`"] and heads[-1] == "More", heads
    assert len(README.splitlines()) < 200
    cells = [c for line in README.splitlines() if line.startswith("|") for c in line.split("|")]
    assert max(len(c.split()) for c in cells) < 25  # words in the longest table cell
    linked = re.findall(r"\]\((docs/[\w./-]+\.md)\)", README)
    assert len(linked) >= 8 and all((ROOT / p).is_file() for p in linked), linked
