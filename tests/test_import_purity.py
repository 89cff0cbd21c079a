"""kinspect.core is pure: no module under it imports torch, textual or triton, even lazily
at import time, so headless commands and the tests' model of Inductor run anywhere."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

PROBE = textwrap.dedent(
    """
    import importlib, json, pkgutil, sys

    BLOCKED = {"torch", "textual", "triton"}
    attempts = []

    class Block:
        '''Refuse the blocked packages, and remember who asked.'''
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
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
    leaked = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    print(json.dumps({"modules": names, "errors": errors, "attempts": attempts, "leaked": leaked}))
    """
)


def probe(package: str, *paths: Path) -> dict:
    env_path = [str(p) for p in (*paths, REPO)]
    result = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path[:0] = {env_path!r}\n" + PROBE, package],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_every_core_module_imports_without_torch_textual_or_triton():
    report = probe("kinspect.core")
    assert report["errors"] == {}
    assert report["attempts"] == []
    assert report["leaked"] == []
    # The walk really covered the core, subpackages included.
    modules = set(report["modules"])
    for name in ("kinspect.core.shapes", "kinspect.core.decision", "kinspect.core.sessionfile.read", "kinspect.core.batch"):
        assert name in modules
    on_disk = {
        "kinspect." + ".".join(p.relative_to(REPO / "kinspect").with_suffix("").parts).removesuffix(".__init__")
        for p in (REPO / "kinspect" / "core").rglob("*.py")
    }
    assert on_disk <= modules


def test_the_probe_catches_a_module_that_imports_torch(tmp_path):
    pkg = tmp_path / "impure"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "clean.py").write_text("import json\n")
    (pkg / "sneaky.py").write_text("def f():\n    pass\n\ntry:\n    import torch._inductor\nexcept ImportError:\n    torch = None\n")
    (pkg / "loud.py").write_text("from textual.app import App\n")
    report = probe("impure", tmp_path)
    assert set(report["errors"]) == {"impure.loud"}
    assert sorted(report["attempts"]) == ["textual", "torch"]
