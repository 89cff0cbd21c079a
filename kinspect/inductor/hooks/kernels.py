"""Facts about a variant's compiled kernel, read from Inductor's `CachingAutotuner`.

What a user needs to judge a variant is its Triton source and launch configuration; the
registers, spills and shared memory are only known once the launcher exists, so each is
read where present and left out otherwise (never guessed).
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
from pathlib import Path
from typing import Any

_SCALARS = (int, float, str, bool)


def source_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def wrapper_kernel_sources(wrapper_path: str | None) -> dict[str, str]:
    """Kernel name -> full Triton module source, read from the wrapper Inductor wrote.

    The wrapper defines each kernel as `name = async_compile.triton('name', SOURCE, ...)`;
    parsing it with `ast` (which executes nothing) yields the source with its decorator,
    triton_meta and inductor_meta, where the loaded kernel may keep only the bare function.
    """
    if not wrapper_path:
        return {}
    try:
        tree = ast.parse(Path(wrapper_path).read_text())
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    out = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "triton" and len(node.args) >= 2):
            continue
        name, src = node.args[0], node.args[1]
        if isinstance(name, ast.Constant) and isinstance(src, ast.Constant) and isinstance(src.value, str):
            out[str(name.value)] = src.value
    return out


def _decorator_launch_args(src: str) -> dict[str, int]:
    """num_warps / num_stages from the kernel's `@triton_heuristics.template(...)` line,
    for launchers that do not expose their config."""
    out: dict[str, int] = {}
    try:
        tree = ast.parse(src)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return out
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call):
                    for kw in deco.keywords:
                        if kw.arg in ("num_warps", "num_stages") and isinstance(kw.value, ast.Constant) \
                                and isinstance(kw.value.value, int):
                            out[kw.arg] = kw.value.value
    return out


def kernel_facts(k: Any, sources: dict[str, str]) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    meta = getattr(k, "inductor_meta", {}) or {}
    path = None
    with contextlib.suppress(Exception):
        path = k.fn.fn.__code__.co_filename
    src = sources.get(str(meta.get("kernel_name", "")), "")
    if not src and path:
        with contextlib.suppress(OSError):
            src = Path(path).read_text()
    if not src:
        src = str(getattr(getattr(k, "fn", None), "src", "") or "")
    facts["source"] = src
    facts["source_hash"] = source_hash(src) if src else ""
    facts["source_path"] = path
    config: dict[str, Any] = {}
    for name, value in (meta.get("config_args") or {}).items():
        if isinstance(value, _SCALARS):
            config[str(name)] = value
    launchers = getattr(k, "launchers", None) or []
    configs = [getattr(launchers[0], "config", None)] if launchers else []
    configs += list(getattr(k, "configs", None) or [])
    for c in configs:
        for attr in ("num_warps", "num_stages", "num_ctas"):
            v = getattr(c, attr, None)
            if isinstance(v, int) and not isinstance(v, bool):
                config.setdefault(attr, v)
        for name, value in (getattr(c, "kwargs", {}) or {}).items():
            if isinstance(value, _SCALARS):
                config.setdefault(str(name), value)
    for name, value in _decorator_launch_args(src).items():
        config.setdefault(name, value)
    if launchers:
        for attr, key in (("n_regs", "registers"), ("n_spills", "spills"), ("shared", "shared_bytes")):
            v = getattr(launchers[0], attr, None)
            if isinstance(v, int):
                config[key] = v
    return facts | {"config": config}


def variant_facts(call: Any, wrapper_path: str | None) -> list[dict[str, Any]]:
    """Facts for each variant of a `SizeHintMultiKernelCall`, in variant order."""
    try:
        kernels = call.kernels
    except Exception:  # still compiling, or failed: facts come later
        return []
    sources = wrapper_kernel_sources(wrapper_path)
    return [kernel_facts(k, sources) for k in kernels]
