"""What a hint's kernel computes where a GEMM's rows are a product of symbols (B*S).

To autotune at a hint Inductor passes the hint for every size argument, so inside the
kernel `M = ks0*ks1` is hint² (16,777,216 at hint 4096), while the launch grid, the key and
the benchmark tensors take the hint for the whole product (4,096 rows). Two things follow,
both seen on the H200 with samples/generate.py (GPT-2, B and S dynamic):

- the templates' early exit `if M * N == 0` multiplies in int32, and 4096² × 2304 is
  9 × 2³², so it reads 0 and every config returns at once: the c_attn configs at hint 4096
  were timed at about 3 µs, an empty launch, where the GEMM takes over 100 µs (cuBLAS at
  the same size), and the pick at that hint is noise;
- at smaller hints the reordering of program ids in groups of GROUP_M row tiles, computed
  from the kernel's M, puts tiles on rows past the grid's: configs were timed on another
  tiling, and on tensors too small for it they fault (stock Inductor died of a CUDA error at
  hint 64 on that GEMM alone).

The rule reads the sizes from each variant's own kernel source and holds them against the
rows of the variant's own key, so it speaks only where the kernel and the key really
disagree: not under an Inductor that keys each hint per symbol, and not where the session
records the one size per symbol each hint was tuned at (`--one-size-per-symbol`), where the
kernel's arguments, the grid, the key and the tensors were all evaluated at those sizes.
"""

from __future__ import annotations

import ast
import functools
import operator
import re

from kinspect.core.numbers import us_text
from kinspect.core.quality.benchmark_tensors import SWIZZLE_ROWS
from kinspect.core.quality.rules import Facts, site_rule
from kinspect.core.session.model import Finding, Site, Variant

KIND = "hint-size-in-kernel"

_SIZE = re.compile(r"^[ \t]*(M|N) = ([A-Za-z0-9_*+ ()]+?)[ \t]*$", re.M)
_ARG = re.compile(r"\bks\d+\b")
_EARLY_EXIT = "if M * N == 0"


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv}


def _arith(node: ast.AST) -> int:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_arith(node.left), _arith(node.right))
    raise ValueError("not plain integer arithmetic")


@functools.lru_cache(maxsize=1024)
def _value(expr: str, hint: int) -> int | None:
    """The expression with the hint for every size argument; None where it is not plain
    integer arithmetic (read by the parser alone: the text comes from a session). No sympy
    here: importing it cost a second of every session's opening."""
    try:
        return _arith(ast.parse(_ARG.sub(str(hint), expr), mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return None


def _int32(v: int) -> int:
    """`v` as the kernel's int32 arithmetic holds it."""
    return (v + 2**31) % 2**32 - 2**31


def _sizes(v: Variant) -> tuple[str, str] | None:
    found = dict(_SIZE.findall(v.source))
    return (found["M"], found["N"]) if "M" in found and "N" in found else None


def _tuned_us(v: Variant) -> float | None:
    return next((r.time_us for r in v.autotune if r.name == v.winner and r.time_us), None)


def _key_rows(v: Variant) -> int:
    """The rows the variant's key (and so its grid and benchmark output) has: the output's
    second-to-last dim, the hint itself under Inductor's own rule; a key at one size per
    symbol (`--one-size-per-symbol`, or an Inductor that evaluates the key per symbol) holds
    the rows the kernel computes, and nothing disagrees."""
    out = v.key[-1] if v.key else ()
    return out[-2] if len(out) >= 2 else v.hint


def rows_beyond_key(site: Site, v: Variant) -> int | None:
    """The rows a hint's kernel computes under Inductor's stock rule (its `M` with the hint
    for every size argument) where they are more than its key's, so the problem it was
    tuned on is neither its key's nor its grid's; None where they agree, the source does
    not say, or the key shows another rule (sizes evaluated per symbol: the kernel got
    those too). Only for a session that does not record the sizes each hint was tuned at."""
    sizes = _sizes(v) if site.keyed_by_hint(v) else None
    if sizes is None or not _ARG.search(sizes[0]):
        return None
    m = _value(sizes[0], v.hint)
    return m if m is not None and m > _key_rows(v) else None


@site_rule(KIND)
def sizes_inside_kernels(site: Site, facts: Facts) -> list[Finding]:
    """One finding per site: the hints whose kernel returned at once, and those whose tiles
    can reach past the grid's rows (a hint that is not whole tile groups of rows)."""
    if facts.session.tuned_sizes(site):
        return []
    empty, past = [], []
    m_expr = ""
    for v in site.variants:
        m = rows_beyond_key(site, v)
        if m is None:
            continue
        m_text, n_text = _sizes(v) or ("", "")  # read already: rows_beyond_key found M there
        n = _value(n_text, v.hint)
        if n is None:
            continue
        m_expr = m_expr or m_text
        rows = _key_rows(v)
        if _EARLY_EXIT in v.source and _int32(m * n) == 0:
            tuned = _tuned_us(v)
            empty.append(f"at hint {v.hint} M * N = {m:,} × {n:,} wraps to 0 in int32 and `{_EARLY_EXIT}` returns at "
                         f"once, so v{v.index} was picked among configs that compute nothing"
                         + (f" (its autotune time, {us_text(tuned)}, timed no GEMM)" if tuned else ""))
        elif rows % SWIZZLE_ROWS:
            past.append((v.hint, m))
    if not empty and not past:
        return []
    parts = list(empty)
    if past:
        s = "s" if len(past) > 1 else ""
        parts.append(f"at hint{s} {', '.join(str(h) for h, _ in past)} (M = {', '.join(f'{m:,}' for _, m in past)} "
                     "inside the kernel) tiles can land on rows past the grid's: timed on another tiling, and outside "
                     "tensors sized for the grid (a CUDA fault on stock Inductor)")
    text = (f"Inductor gives this GEMM's kernel the hint for each size symbol (M = {m_expr}) but sizes its grid, key "
            "and benchmark tensors by the hint itself: " + "; ".join(parts) + " (an Inductor bug: "
            "--one-size-per-symbol tunes each hint on one problem)")
    return [Finding(KIND, text, "error" if empty else "warning", site=site.name, graph=site.graph,
                    variants=tuple(v.index for v in site.variants if v.hint is not None))]
