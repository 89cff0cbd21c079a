"""Facts about a variant's compiled kernel, read from Inductor's `CachingAutotuner`.

What a user needs to judge a variant is its Triton source and launch configuration; the
registers, spills and shared memory are only known once the launcher exists, so each is
read where present and left out otherwise (never guessed).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from kinspect.core.inductor_code.kernels import kernel_sources, launch_args, source_hash

_SCALARS = (int, float, str, bool)


def wrapper_kernel_sources(wrapper_path: str | None) -> dict[str, str]:
    """Kernel name -> full Triton module source, read from the wrapper Inductor wrote
    (`kinspect.core.inductor_code.kernels`: with its decorator, triton_meta and
    inductor_meta, where the loaded kernel may keep only the bare function)."""
    if not wrapper_path:
        return {}
    try:
        return kernel_sources(Path(wrapper_path).read_text())
    except (OSError, UnicodeDecodeError):
        return {}


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
    for name, value in launch_args(src).items():
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
