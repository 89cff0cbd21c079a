"""Loading a user's model.py: the model, the input builder, the workload, the hints.

The convention is what a PyTorch user would write anyway, with nothing imported from
kinspect, so the file still runs with `python model.py`:

    model = nn.Linear(1024, 4096)            # a module or a function (also: `def model(...)`)
    def inputs(B=1000):                      # builds the model's inputs from named sizes
        return torch.randn(B, 1024)          # a tensor or a tuple of them
    workload = [{"B": b} for b in (1, 64, 100, 1000, 8192)]   # optional: shapes to step through
    hints = [64, 256, 4096]                  # optional: multi_kernel_hints

The builder's parameter names are the symbols a user types (`B=1000`); their defaults are
the example sizes. A builder without parameters gives a static model, which kinspect
still compiles, to say why it gets no size-hint multi-kernel. Which input dims depend on which name is found by calling the builder
twice per name with different values and seeing which dims move, so the user never marks
anything dynamic by hand.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kinspect.core.errors import KinspectError, echo
from kinspect.core.dispatch.shapes import MAX_SIZE
from kinspect.core.dispatch.shapes import sizes_text


class ModelFileError(KinspectError):
    """A model.py that cannot be used, with what to fix."""


@dataclass(frozen=True)
class DynamicDim:
    input: int
    """Position of the tensor among the builder's outputs."""
    dim: int
    names: tuple[str, ...]
    """The builder parameters this dim's size moves with."""


@dataclass
class ModelFile:
    path: Path
    model: Callable[..., Any]
    model_name: str
    builder: Callable[..., Any]
    names: tuple[str, ...]
    examples: dict[str, int]
    workload: list[dict[str, int]]
    hints: list[int] | None
    input_names: tuple[str, ...]

    def check_names(self, names: Iterable[str], flag: str) -> None:
        """A command's sizes name only what inputs() takes: one line naming the first that
        does not, before minutes of compiling."""
        unknown = sorted(set(names) - set(self.names))
        if unknown:
            raise ModelFileError(f"{flag} names {unknown[0]}, which {self.path.name}'s inputs() does not take "
                                 f"({', '.join(self.names) or 'no sizes'})")

    def build(self, sizes: Mapping[str, int]) -> tuple[Any, ...]:
        """Call the builder; any exception becomes a one-line error naming the sizes."""
        missing = [n for n in self.names if n not in sizes and n not in self.examples]
        if missing:
            raise ModelFileError(f"{self.path.name}: no value for {', '.join(missing)}")
        args = {n: sizes.get(n, self.examples.get(n)) for n in self.names}
        try:
            out = self.builder(**args)
        except Exception as e:  # the user's code: report it, don't crash
            if type(e).__name__ == "OutOfMemoryError":
                raise  # not a bug in the file: the caller reports it for that shape
            raise ModelFileError(
                f"{self.path.name}: inputs({sizes_text(args, ', ')}) failed: {type(e).__name__}: {_first_line(e)}"
            ) from e
        return _as_tensors(out, self.path.name)

    def dynamic_dims(self) -> list[DynamicDim]:
        """Which input dims move with which names; a name no dim moves with is an error.

        Each name is probed at twice its example: a dim like `D // 8` moves with it, and
        a builder that needs `D % 8 == 0` still accepts it."""
        import torch

        base = self.build(self.examples)
        found: dict[tuple[int, int], list[str]] = {}
        for name in self.names:
            probe = dict(self.examples)
            probe[name] = 2 * self.examples[name]
            moved = self.build(probe)
            if len(moved) != len(base):
                raise ModelFileError(f"{self.path.name}: inputs() returns a different number of tensors when {name} changes")
            for i, (a, b) in enumerate(zip(base, moved)):
                if not isinstance(a, torch.Tensor):
                    continue
                if a.dim() != b.dim():
                    raise ModelFileError(f"{self.path.name}: input {i} changes rank when {name} changes")
                for d in range(a.dim()):
                    if a.shape[d] != b.shape[d]:
                        found.setdefault((i, d), []).append(name)
        used = {n for names in found.values() for n in names}
        for name in self.names:
            if name not in used:
                raise ModelFileError(
                    f"{self.path.name}: no input dim depends on {name}; use it in inputs() or remove the parameter"
                )
        return [DynamicDim(i, d, tuple(n)) for (i, d), n in sorted(found.items())]


def distinct_examples(examples: Mapping[str, int]) -> dict[str, int]:
    """Example sizes must differ, or Dynamo's duck sizing merges their symbols."""
    out: dict[str, int] = {}
    used: set[int] = set()
    for name, v in examples.items():
        while v in used:
            v += 1
        used.add(v)
        out[name] = v
    return out


def _first_line(e: BaseException) -> str:
    """Errors are one line; the user's exception text may hold many."""
    lines = str(e).strip().splitlines()
    return lines[0] if lines else ""


def _as_tensors(out: Any, fname: str) -> tuple[Any, ...]:
    import torch

    items = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if not any(isinstance(t, torch.Tensor) for t in items):
        raise ModelFileError(f"{fname}: inputs() must return a tensor or a tuple of tensors")
    return items


_MODEL_NAMES = ("model", "forward", "fn")
_BUILDER_NAMES = ("inputs", "make_inputs", "example_inputs")


def load_model_file(path: str | Path) -> ModelFile:
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"{path}: no such file")
    module = _import(path)
    model, model_name = _find(module, _MODEL_NAMES, path, "the model", "`model = MyModule()` or `def model(x): ...`")
    builder, builder_name = _find(module, _BUILDER_NAMES, path, "an input builder", "`def inputs(B=1000): return torch.randn(B, 1024)`")
    if not callable(model):
        raise ModelFileError(f"{path.name}: `{model_name}` is not callable; assign an nn.Module or a function")
    if not callable(builder):
        raise ModelFileError(f"{path.name}: `{builder_name}` is not a function; define it as def {builder_name}(B=1000): ...")
    names, examples = _builder_signature(builder, path)
    workload = _workload(getattr(module, "workload", None), names, path)
    for n in names:
        if n not in examples:
            if workload and n in workload[0]:
                examples[n] = workload[0][n]
            else:
                raise ModelFileError(f"{path.name}: give {n} a default in inputs(), e.g. def inputs({n}=1000)")
    hints = getattr(module, "hints", None)
    if hints is not None:
        if not isinstance(hints, (list, tuple)) or not hints or not all(
            isinstance(h, int) and not isinstance(h, bool) and h > 0 for h in hints
        ):
            raise ModelFileError(f"{path.name}: hints must be a list of positive integers, e.g. [64, 256, 4096]")
        hints = list(hints)
    return ModelFile(
        path=path, model=model, model_name=model_name, builder=builder, names=names,
        examples=examples, workload=workload, hints=hints,
        input_names=_forward_params(model),
    )


def check_model_file(path: str | Path) -> ModelFile:
    """Everything a model file can be checked for without a GPU: it loads, its builder runs
    at the example sizes and at twice each, and every size moves some input dim. The
    builder runs on the CPU, where the live pipeline probes it too."""
    mf = load_model_file(path)
    mf.dynamic_dims()
    return mf


def missing_imports(path: str | Path) -> list[str]:
    """The modules a model file imports unconditionally at its top that are not installed
    here, found without importing anything (its recording opens without them). Imports
    inside `try` or `if` blocks are the file's own fallbacks and are left out."""
    path = Path(path)
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # the full check reports these
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names += [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.split(".")[0])
    missing = []
    for name in dict.fromkeys(names):
        try:
            found = name in sys.modules or importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


def check_syntax(path: str | Path) -> None:
    """The part of `load_model_file`'s check that needs no torch: the file is there and
    parses (milliseconds, where loading it imports torch: seconds). Without a GPU its
    recording opens after this, while the rest is checked in the background."""
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"{path}: no such file")
    try:
        compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
    except SyntaxError as e:
        raise _syntax_error(path, e) from e
    except ValueError as e:  # a NUL byte (Python 3.11 raises this, not a SyntaxError)
        raise _syntax_error(path, SyntaxError(str(e))) from e
    except (RecursionError, MemoryError) as e:  # `1 + 1 + ...` 200,000 times, a million `-` in a row
        raise ModelFileError(f"{path.name}: nested too deeply for Python's parser ({type(e).__name__}): "
                             "not a model file Python can compile") from None


def _syntax_error(path: Path, e: SyntaxError) -> ModelFileError:
    if e.lineno is None:  # a NUL byte: Python names no line
        data = path.read_bytes()
        if b"\0" in data:
            line = data[:data.index(b"\0")].count(b"\n") + 1
            return ModelFileError(f"{path.name}:{line}: holds a NUL byte: not Python source (a binary file?)")
        return ModelFileError(f"{path.name}: syntax error: {e.msg}")
    return ModelFileError(f"{path.name}:{e.lineno}: syntax error: {e.msg}")


IMPORT_LIMIT_S = float(os.environ.get("KINSPECT_IMPORT_TIMEOUT_S", "300"))
"""How long a model file may take to import (torch, transformers and building the model
take seconds to a minute) before kinspect says it seems to loop, rather than hang."""


class _ImportTimeout(BaseException):
    """Raised in the importing thread when `IMPORT_LIMIT_S` is over."""


class _ExitCalled(BaseException):
    """The model file called `os._exit` while loading: kinspect says so instead of vanishing."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


@contextmanager
def _guarded_import() -> Iterator[None]:
    """Time-limit the import (in the main thread, where a signal can interrupt it) and turn
    `os._exit` into an exception for its duration."""
    def timeout(signum: int, frame: Any) -> None:
        raise _ImportTimeout

    def exit_called(status: int) -> None:
        raise _ExitCalled(status)

    main = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    if main:
        previous = signal.signal(signal.SIGALRM, timeout)
        signal.setitimer(signal.ITIMER_REAL, IMPORT_LIMIT_S)
    real_exit, os._exit = os._exit, exit_called  # type: ignore[assignment]
    try:
        yield
    finally:
        os._exit = real_exit
        if main:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def _import(path: Path) -> Any:
    mod_name = f"kinspect_model_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise ModelFileError(f"{path}: cannot be imported as a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        with _guarded_import():
            spec.loader.exec_module(module)
    except _ImportTimeout:
        raise ModelFileError(f"{path.name}: still loading after {IMPORT_LIMIT_S:g} s: does it loop at import? "
                             "(KINSPECT_IMPORT_TIMEOUT_S sets the limit)") from None
    except _ExitCalled as e:
        raise ModelFileError(f"{path.name}{_user_line(e, path)}: called os._exit({echo(e.status)}) while loading; "
                             'move what runs the script under `if __name__ == "__main__":`') from None
    except SyntaxError as e:
        raise _syntax_error(path, e) from e
    except ImportError as e:
        raise ModelFileError(f"{path.name}: import failed: {_first_line(e)}") from e
    except SystemExit as e:  # e.g. argparse at top level, reading kinspect's arguments
        raise ModelFileError(
            f"{path.name}{_user_line(e, path)}: exited while loading (exit status {echo(e.code)}); "
            'move what runs the script under `if __name__ == "__main__":`'
        ) from e
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # the user's code may raise anything, BaseException subclasses included
        line = _user_line(e, path)
        said = _first_line(e)
        raise ModelFileError(f"{path.name}{line}: {type(e).__name__} while loading" + (f": {said}" if said else "")) from e
    return module


def _user_line(e: BaseException, path: Path) -> str:
    for frame in reversed(traceback.extract_tb(e.__traceback__)):
        if Path(frame.filename).resolve() == path.resolve():
            return f":{frame.lineno}"
    return ""


def _find(module: Any, names: Sequence[str], path: Path, what: str, example: str) -> tuple[Any, str]:
    for name in names:
        value = getattr(module, name, None)
        if value is not None:
            return value, name
    raise ModelFileError(f"{path.name}: nothing to inspect: define {what} as {example}")


def _builder_signature(builder: Callable[..., Any], path: Path) -> tuple[tuple[str, ...], dict[str, int]]:
    try:
        sig = inspect.signature(builder)
    except (TypeError, ValueError) as e:
        raise ModelFileError(f"{path.name}: cannot read the input builder's parameters: {e}") from e
    names: list[str] = []
    examples: dict[str, int] = {}
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ModelFileError(f"{path.name}: inputs() must name its sizes, e.g. def inputs(B=1000); *args/**kwargs are not allowed")
        names.append(p.name)
        if p.default is not p.empty:
            if not _is_size(p.default) or p.default < 2:
                raise ModelFileError(f"{path.name}: default of {p.name} must be an integer >= 2 (sizes 0 and 1 are specialised by the compiler)")
            examples[p.name] = p.default
    return tuple(names), examples


def _is_size(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_SIZE


def _workload(value: Any, names: tuple[str, ...], path: Path) -> list[dict[str, int]]:
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise ModelFileError(f"{path.name}: workload must be a list, e.g. [{{'B': 64}}, {{'B': 1000}}]")
    out = []
    for i, step in enumerate(value):
        if _is_size(step) and len(names) == 1:
            step = {names[0]: step}
        if not isinstance(step, dict):
            if not names:
                raise ModelFileError(f"{path.name}: workload[{i}] must be a dict of sizes, and inputs() takes none")
            raise ModelFileError(f"{path.name}: workload[{i}] must be a dict of sizes like {{'{names[0]}': 1000}}")
        unknown = [k for k in step if k not in names]
        if unknown:
            raise ModelFileError(f"{path.name}: workload[{i}] names {unknown[0]!r}, which inputs() does not take")
        for k, v in step.items():
            if not _is_size(v):
                raise ModelFileError(f"{path.name}: workload[{i}][{k!r}] must be a non-negative integer")
        out.append(dict(step))
    return out


def _forward_params(model: Any) -> tuple[str, ...]:
    """The names of the model's inputs, as Dynamo's sources name them. A wrapper that only
    passes `*inputs` on to its `.module` (DistributedDataParallel) is seen through: Dynamo
    compiles the wrapped module's forward, so its names are the ones that count."""
    fn = getattr(model, "forward", model)
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return ()
    named = tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    inner = getattr(model, "module", None)
    if not named and inner is not None and inner is not model and callable(inner):
        return _forward_params(inner)
    return named
