"""Facts about a variant's compiled kernel, read from Inductor's `CachingAutotuner`.

What a user needs to judge a variant is its Triton source and launch configuration; the
registers, spills and shared memory are only known once the launcher exists, so each is
read where present and left out otherwise (never guessed).
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path
from typing import Any

_SCALARS = (int, float, str, bool)


def source_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def kernel_facts(k: Any) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    meta = getattr(k, "inductor_meta", {}) or {}
    src = ""
    path = None
    with contextlib.suppress(Exception):
        path = k.fn.fn.__code__.co_filename
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
    configs = getattr(k, "configs", None) or []
    if configs:
        c = configs[0]
        for attr in ("num_warps", "num_stages", "num_ctas"):
            v = getattr(c, attr, None)
            if isinstance(v, int):
                config[attr] = v
        for name, value in (getattr(c, "kwargs", {}) or {}).items():
            if isinstance(value, _SCALARS):
                config.setdefault(str(name), value)
    launchers = getattr(k, "launchers", None) or []
    if launchers:
        for attr, key in (("n_regs", "registers"), ("n_spills", "spills"), ("shared", "shared_bytes")):
            v = getattr(launchers[0], attr, None)
            if isinstance(v, int):
                config[key] = v
    return facts | {"config": config}


def variant_facts(call: Any) -> list[dict[str, Any]]:
    """Facts for each variant of a `SizeHintMultiKernelCall`, in variant order."""
    try:
        kernels = call.kernels
    except Exception:  # still compiling, or failed: facts come later
        return []
    return [kernel_facts(k) for k in kernels]
