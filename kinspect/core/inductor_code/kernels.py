"""The Triton kernels a wrapper defines, read from its text: each kernel's source as
`NAME = async_compile.triton('NAME', '''SOURCE''', device_str=...)` holds it (decorator,
triton_meta and inductor_meta included, which the loaded kernel may have dropped), its
launch configuration as that source states it, and its parameters.

Each definition is read on its own lines, parsed by `ast` (which executes nothing), so a
wrapper cut short or damaged after a kernel still gives that kernel; Inductor never
writes `'''` inside a kernel's source, which is what tells where one ends.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

_START = re.compile(r"^(?P<var>[A-Za-z_][A-Za-z0-9_]*) = async_compile\.triton\(")
_SCALARS = (int, float, str, bool)
MAX_INT = 2**62
MAX_STR = 256
"""Config values kept: the bounds a session holds a variant's config to."""


@dataclass(frozen=True)
class KernelSpan:
    """Where one kernel's definition sits in the wrapper (1-based, inclusive)."""

    name: str
    first: int
    last: int


def kernel_spans(lines: list[str]) -> Iterator[KernelSpan]:
    """Each `async_compile.triton(...)` definition whose source literal closes (Inductor
    opens it at the end of the first line; a definition on one line is one line)."""
    i = 0
    while i < len(lines):
        m = _START.match(lines[i])
        if m is None:
            i += 1
            continue
        end = i
        if lines[i].endswith("'''"):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("'''")), -1)
            if end < 0:
                return
        yield KernelSpan(m["var"], i + 1, end + 1)
        i = end + 1


def kernel_sources(code: str) -> dict[str, str]:
    """Kernel name -> its whole Triton module source, as the wrapper defines it."""
    lines = code.splitlines()
    out = {}
    for span in kernel_spans(lines):
        src = _literal_source("\n".join(lines[span.first - 1:span.last]))
        if src is not None:
            out[span.name] = src
    return out


def _literal_source(fragment: str) -> str | None:
    try:
        tree = ast.parse(fragment)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    stmt = tree.body[0] if len(tree.body) == 1 else None
    call = stmt.value if isinstance(stmt, ast.Assign) else None
    if not isinstance(call, ast.Call) or len(call.args) < 2:
        return None
    src = call.args[1]
    return src.value if isinstance(src, ast.Constant) and isinstance(src.value, str) else None


def source_hash(text: str) -> str:
    """What tells two kernels' sources apart in a session (the same digest a recording keeps)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass(frozen=True)
class KernelFacts:
    """What a kernel's source says of it: its launch configuration and parameters."""

    config: Mapping[str, object]
    """`config_args` from inductor_meta (BLOCK_M, GROUP_M, ...) and the decorator's
    num_warps and num_stages: scalars only."""
    params: tuple[str, ...]
    """The jitted function's parameter names (`in_ptr0, arg_A, arg_B, out_ptr0, ks0`)."""


@functools.lru_cache(maxsize=256)
def kernel_facts(src: str) -> KernelFacts:
    """Read from the source's `@triton_heuristics.template(...)` decorator and `def` line;
    empty where the source says nothing of them (registers and spills are known only to a
    loaded kernel's launcher). Only those lines are parsed: a trace holds thousands of
    kernels, and their bodies say nothing of this."""
    try:
        tree = ast.parse(_head(src))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return KernelFacts(MappingProxyType({}), ())
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    if fn is None:
        return KernelFacts(MappingProxyType({}), ())
    config: dict[str, object] = {}
    launch: dict[str, object] = {}
    for deco in fn.decorator_list:
        if not isinstance(deco, ast.Call):
            continue
        for kw in deco.keywords:
            if kw.arg in ("num_warps", "num_stages") and isinstance(kw.value, ast.Constant):
                if _kept(kw.value.value):
                    launch[kw.arg] = kw.value.value
            elif kw.arg == "inductor_meta" and isinstance(kw.value, ast.Dict):
                config.update(_config_args(kw.value))
    params = tuple(a.arg for a in fn.args.args)
    return KernelFacts(MappingProxyType({**config, **launch}), params)


def _head(src: str) -> str:
    """The source's first decorated `def` with its decorators, its body left out; the whole
    source where it has none."""
    lines = src.splitlines()
    first = next((i for i, line in enumerate(lines) if line.startswith("@")), None)
    if first is None:
        return src
    for j in range(first, len(lines)):
        if lines[j].startswith("def ") and lines[j].rstrip().endswith(":"):
            return "\n".join(lines[first:j + 1]) + "\n    pass\n"
    return src


def launch_args(src: str) -> dict[str, object]:
    """num_warps and num_stages as the source's decorator states them."""
    facts = kernel_facts(src)
    return {k: v for k, v in facts.config.items() if k in ("num_warps", "num_stages")}


def _config_args(meta: ast.Dict) -> dict[str, object]:
    for k, v in zip(meta.keys, meta.values):
        if isinstance(k, ast.Constant) and k.value == "config_args":
            try:
                value = ast.literal_eval(v)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                return {}
            if isinstance(value, dict):
                return {str(n)[:MAX_STR]: x for n, x in value.items() if isinstance(n, str) and _kept(x)}
    return {}


def _kept(value: object) -> bool:
    if not isinstance(value, _SCALARS):
        return False
    if isinstance(value, int) and not isinstance(value, bool):
        return abs(value) <= MAX_INT
    if isinstance(value, float):
        return value == value and abs(value) != float("inf")
    return not isinstance(value, str) or len(value) <= MAX_STR
