"""Run something once a module has been imported, by whoever imports it.

A program recorded with `kinspect run` may never touch torch (or import it late):
importing torch and Inductor to patch them costs seconds before the program's first line.
Patched instead right after the program's own `import torch` runs, the hooks are in place
before anything could compile, and a program that never imports torch starts as fast as
under `python`.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any


@contextlib.contextmanager
def after_import(name: str, then: Callable[[], None]) -> Iterator[None]:
    """`then()` once module `name` is imported: now if it is already, else right after
    its import executes it (in the importing thread, the module whole in `sys.modules`).
    Nothing is called once the block has ended."""
    if name in sys.modules:
        then()
        yield
        return
    finder = _Finder(name, then)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        finder.done = True
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(finder)


def importing(package: str, but: str) -> bool:
    """Whether a module of `package` other than `but` is part-way through its import now.

    Dynamo's own import imports Inductor part-way through (`trace_rules` imports
    `torch._inductor.test_operators`), and code run then that imports Dynamo's modules finds
    names they have not defined yet. importlib flags every module it is executing
    (`__spec__._initializing`), and this reads the flag."""
    return any(getattr(getattr(module, "__spec__", None), "_initializing", False)
               for name, module in list(sys.modules.items())
               if name != but and (name == package or name.startswith(package + ".")))


class _Finder(importlib.abc.MetaPathFinder):
    """Finds `name` as the finders after it do, and wraps its loader to call `then` after."""

    def __init__(self, name: str, then: Callable[[], None]) -> None:
        self.name = name
        self.then = then
        self.done = False
        self._finding = False

    def find_spec(self, fullname: str, path: Any = None, target: ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name or self.done or self._finding:
            return None
        self._finding = True
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._finding = False
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _ThenLoader(spec.loader, self)
        return spec

    def imported(self) -> None:
        if not self.done:
            self.done = True
            with contextlib.suppress(ValueError):
                sys.meta_path.remove(self)
            self.then()


class _ThenLoader(importlib.abc.Loader):
    def __init__(self, loader: Any, finder: _Finder) -> None:
        self.loader = loader
        self.finder = finder

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        self.finder.imported()

    def __getattr__(self, attr: str) -> Any:  # get_resource_reader, is_package, get_code, ...
        return getattr(self.loader, attr)
