"""The layers' import contracts, proven by importing every module with the forbidden
packages blocked (in a fresh interpreter each) and by reading every import statement,
so an import inside a function, which runs only when called, is caught too.

- kinspect.core is pure: no torch, textual or triton, and none of the layers above it,
  so headless commands and the tests' model of Inductor run anywhere;
- kinspect.tui never imports torch, triton or kinspect.inductor: a live source reaches
  it as an argument (kinspect.core.source), so opening a recording never loads torch;
- kinspect.commands imports textual only through kinspect.tui;
- kinspect.inductor never imports the TUI or the commands; its parts import only those
  below them, and the commands reach it only through its face (`kinspect.inductor`);
- the library's own entry point (`kinspect.recording()`, kinspect/api.py) needs no CLI.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

PROBE = textwrap.dedent(
    """
    import importlib, json, pkgutil, sys

    BLOCKED = json.loads(sys.argv[2])
    VIA = json.loads(sys.argv[3])
    attempts = []

    def under(name, prefixes):
        return any(name == p or name.startswith(p + ".") for p in prefixes)

    def importer():
        '''The module whose import statement is running, past importlib's own frames.'''
        f = sys._getframe(2)
        while f is not None:
            name = f.f_globals.get("__name__", "")
            if not (name == "importlib" or name.startswith(("importlib.", "_frozen_importlib"))):
                return name
            f = f.f_back
        return ""

    class Block:
        '''Refuse the blocked packages unless a module of VIA (or the package itself)
        asks, and remember who was refused.'''
        def find_spec(self, name, path=None, target=None):
            if under(name, BLOCKED) and not under(importer(), VIA + BLOCKED):
                attempts.append(name)
                raise ImportError(f"{name} is blocked in this test")
            return None

    sys.meta_path.insert(0, Block())
    package = importlib.import_module(sys.argv[1])
    names = [sys.argv[1]]
    errors = {}
    for info in pkgutil.walk_packages(package.__path__, sys.argv[1] + ".", onerror=lambda n: None):
        names.append(info.name)
        try:
            importlib.import_module(info.name)
        except ImportError as e:
            errors[info.name] = str(e)
    leaked = sorted(m for m in sys.modules if under(m, BLOCKED))
    print(json.dumps({"modules": names, "errors": errors, "attempts": attempts, "leaked": leaked}))
    """
)

LAYERS = {
    "kinspect.core": ["torch", "textual", "triton", "kinspect.inductor", "kinspect.tui", "kinspect.commands"],
    "kinspect.tui": ["torch", "triton", "kinspect.inductor", "kinspect.commands"],
    "kinspect.commands": ["textual"],
    "kinspect.inductor": ["textual", "kinspect.tui", "kinspect.commands"],
}
"""Each layer and what it never imports itself."""
VIA = {"kinspect.commands": ["kinspect.tui"]}
"""Where a layer may reach a blocked package through another layer."""


def probe(package: str, blocked: list[str], via: list[str] = (), *paths: Path) -> dict:
    env_path = [str(p) for p in (*paths, REPO)]
    result = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path[:0] = {env_path!r}\n" + PROBE, package,
         json.dumps(blocked), json.dumps(list(via))],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def modules_on_disk(package: str) -> set[str]:
    root = REPO.joinpath(*package.split("."))
    return {
        "kinspect." + ".".join(p.relative_to(REPO / "kinspect").with_suffix("").parts).removesuffix(".__init__")
        for p in root.rglob("*.py")
    }


def imported(path: Path) -> set[str]:
    """Every module an import statement in `path` names, at any depth of the code."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


@pytest.mark.parametrize("layer", list(LAYERS))
def test_every_module_of_a_layer_imports_without_what_it_must_not_import(layer):
    report = probe(layer, LAYERS[layer], VIA.get(layer, []))
    assert report["errors"] == {}
    assert report["attempts"] == []
    if layer not in VIA:
        assert report["leaked"] == []
    # The walk really covered the layer, subpackages included.
    assert modules_on_disk(layer) <= set(report["modules"])


def test_the_core_walk_reaches_its_subpackages():
    modules = set(probe("kinspect.core", LAYERS["kinspect.core"])["modules"])
    for name in ("kinspect.core.dispatch.shapes", "kinspect.core.dispatch.decision", "kinspect.core.session.format.document",
                 "kinspect.core.export.perfetto", "kinspect.core.source"):
        assert name in modules


@pytest.mark.parametrize("layer", list(LAYERS))
def test_no_import_statement_of_a_layer_names_what_it_must_not_import(layer):
    """Imports inside functions too: they escape the probe until they run."""
    forbidden = LAYERS[layer]
    found = {}
    for path in REPO.joinpath(*layer.split(".")).rglob("*.py"):
        bad = sorted(n for n in imported(path) if any(n == f or n.startswith(f + ".") for f in forbidden))
        if bad:
            found[str(path.relative_to(REPO))] = bad
    assert found == {}


def test_the_probe_catches_a_module_that_imports_torch(tmp_path):
    pkg = tmp_path / "impure"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "clean.py").write_text("import json\n")
    (pkg / "sneaky.py").write_text("def f():\n    pass\n\ntry:\n    import torch._inductor\nexcept ImportError:\n    torch = None\n")
    (pkg / "loud.py").write_text("from textual.app import App\n")
    report = probe("impure", ["torch", "textual", "triton"], [], tmp_path)
    assert set(report["errors"]) == {"impure.loud"}
    assert sorted(report["attempts"]) == ["textual", "torch"]


def test_the_probe_lets_a_package_through_only_by_the_layer_allowed_to_import_it(tmp_path):
    for name, files in {
        "screen": {"draw.py": "from textual.app import App\n"},
        "cli": {"through.py": "import screen.draw\n", "around.py": "import textual\n",
                "inner.py": "import screen\n"},
    }.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
        for file, text in files.items():
            (tmp_path / name / file).write_text(text)
    report = probe("cli", ["textual"], ["screen"], tmp_path)
    assert set(report["errors"]) == {"cli.around"}
    assert report["attempts"] == ["textual"]
    assert "textual.app" in report["leaked"]  # loaded, through screen.draw


def test_the_import_reader_sees_imports_inside_functions(tmp_path):
    path = tmp_path / "lazy.py"
    path.write_text("import json\n\ndef later():\n    from torch._inductor import config\n")
    assert imported(path) == {"json", "torch._inductor", "torch._inductor.config"}


CORE_PACKAGES = {
    "kinspect.core.dispatch": [],
    "kinspect.core.inductor_code": [],
    "kinspect.core.session": ["kinspect.core.dispatch"],
    "kinspect.core.quality": ["kinspect.core.dispatch", "kinspect.core.session", "kinspect.core.inductor_code"],
    "kinspect.core.trace": ["kinspect.core.dispatch", "kinspect.core.session", "kinspect.core.inductor_code"],
    "kinspect.core.debugger": ["kinspect.core.dispatch", "kinspect.core.session"],
    "kinspect.core.inspector": ["kinspect.core.dispatch", "kinspect.core.session", "kinspect.core.quality"],
    "kinspect.core.ranks": ["kinspect.core.dispatch", "kinspect.core.session", "kinspect.core.quality"],
    "kinspect.core.export": ["kinspect.core.dispatch", "kinspect.core.session", "kinspect.core.quality",
                             "kinspect.core.ranks", "kinspect.core.store"],
}
"""Each core subpackage and the other parts of the core it may import, besides itself,
`kinspect.core.errors` and `kinspect.core.numbers` (the subpackages' docstrings say the same in words)."""


def core_imports_outside(package: str, allowed: list[str]) -> dict[str, list[str]]:
    return imports_outside(package, ["kinspect.core.errors", "kinspect.core.numbers", *allowed], "kinspect.",
                           "kinspect.core")


def imports_outside(package: str, allowed: list[str], within: str, face: str = "") -> dict[str, list[str]]:
    """Each module of `package` and what it imports under `within` that is neither its own
    package, one of `allowed`, nor the `face` itself."""
    own = [package, *allowed]
    found = {}
    for path in REPO.joinpath(*package.split(".")).rglob("*.py"):
        bad = sorted(n for n in imported(path) if n.startswith(within) and n != face
                     and not any(n == p or n.startswith(p + ".") for p in own))
        # `from kinspect.core.x import name` also lists `kinspect.core.x.name`: keep the module.
        bad = sorted({n for n in bad if not any(m != n and n.startswith(m + ".") for m in bad)})
        if bad:
            found[str(path.relative_to(REPO))] = bad
    return found


@pytest.mark.parametrize("package", list(CORE_PACKAGES))
def test_a_core_subpackage_imports_only_the_parts_of_the_core_below_it(package):
    assert core_imports_outside(package, CORE_PACKAGES[package]) == {}


def test_every_core_subpackage_has_a_contract():
    on_disk = {f"kinspect.core.{p.name}" for p in REPO.joinpath("kinspect", "core").iterdir()
               if p.is_dir() and (p / "__init__.py").exists()}
    assert on_disk == set(CORE_PACKAGES)


def test_the_contract_check_catches_an_upward_import(tmp_path, monkeypatch):
    root = tmp_path / "kinspect" / "core" / "dispatch"
    root.mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "up.py").write_text("def f():\n    from kinspect.core.quality.overview import model_quality\n")
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    assert core_imports_outside("kinspect.core.dispatch", []) == {
        "kinspect/core/dispatch/up.py": ["kinspect.core.quality.overview"]}


INDUCTOR_PACKAGES = {
    "kinspect.inductor.launch": [],
    "kinspect.inductor.hooks": [],
    "kinspect.inductor.timing": ["kinspect.inductor.launch", "kinspect.inductor.hooks"],
    "kinspect.inductor.recording": ["kinspect.inductor.launch", "kinspect.inductor.hooks", "kinspect.inductor.timing"],
    "kinspect.inductor.jobs": ["kinspect.inductor.launch", "kinspect.inductor.hooks", "kinspect.inductor.timing",
                               "kinspect.inductor.recording"],
}
"""Each part of the Inductor layer and the parts it may import besides itself (the package's
docstring says the same in words)."""


@pytest.mark.parametrize("package", list(INDUCTOR_PACKAGES))
def test_a_part_of_the_inductor_layer_imports_only_the_parts_below_it(package):
    assert imports_outside(package, INDUCTOR_PACKAGES[package], "kinspect.inductor.") == {}


def test_every_part_of_the_inductor_layer_has_a_contract_and_no_module_sits_beside_them():
    root = REPO / "kinspect" / "inductor"
    parts = {f"kinspect.inductor.{p.name}" for p in root.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert parts == set(INDUCTOR_PACKAGES)
    assert sorted(p.name for p in root.glob("*.py")) == ["__init__.py"]


def inductor_imports(path: Path) -> tuple[set[str], set[str]]:
    """The modules of the Inductor layer an import statement of `path` names below its face,
    and the names it takes from the face."""
    deep, taken = set(), set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            deep.update(a.name for a in node.names if a.name.startswith("kinspect.inductor."))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module.startswith("kinspect.inductor."):
                deep.add(node.module)
            elif node.module == "kinspect.inductor":
                taken.update(a.name for a in node.names)
    return deep, taken


def test_the_commands_and_the_library_reach_the_inductor_layer_only_through_its_face():
    import kinspect.inductor as face

    paths = [*REPO.joinpath("kinspect", "commands").rglob("*.py"), REPO / "kinspect" / "api.py",
             REPO / "kinspect" / "cli.py"]
    found = {str(p.relative_to(REPO)): inductor_imports(p) for p in paths}
    assert {k: sorted(deep) for k, (deep, _) in found.items() if deep} == {}
    taken = set().union(*(t for _, t in found.values()))
    assert taken and taken <= set(face.ENTRY_POINTS)
    for name in face.ENTRY_POINTS:  # every name the face offers resolves
        assert getattr(face, name) is not None


def test_the_face_check_catches_a_command_that_reaches_past_it(tmp_path):
    path = tmp_path / "cmd.py"
    path.write_text("def f():\n    from kinspect.inductor.recording.pipeline import Options\n"
                    "    from kinspect.inductor import LivePipeline\n")
    assert inductor_imports(path) == ({"kinspect.inductor.recording.pipeline"}, {"LivePipeline"})


def test_the_library_entry_point_needs_no_cli():
    assert sorted(n for n in imported(REPO / "kinspect" / "api.py")
                  if n.startswith(("kinspect.commands", "kinspect.tui", "kinspect.cli"))) == []
