"""A standalone reproducer and an upstream report for a benchmark tensor that misfits.

The script needs torch and triton only: the template's op on tensors built like the
model's (the same dynamic dims, example sizes, dtype and views), the same hints and
Inductor settings, and a check wrapped around `benchmark_example_value` that prints every
tensor Inductor autotunes on at the hint against what its kernel reads there. It exits 1
when the compile fails or a tensor misfits, so it shows the bug on stock PyTorch with or
without a crash. The report is Markdown ready to paste into an upstream issue: versions,
GPU, the tensors, the expression Inductor replaced, and the script.

The text is built from plain facts (`Operand`, `Misfit`), so it is tested without a GPU.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kinspect.core.quality import benchmark_tensors as rule
from kinspect.core.session.model import Environment, SymbolInfo
from kinspect.inductor.hooks.benchmark_tensors import Operand
from kinspect.inductor.hooks.capture import GraphRecord
from kinspect.inductor.recording.translate import op_of

CALLS = {
    "mm": "torch.mm({0}, {1})",
    "addmm": "torch.addmm({0}, {1}, {2})",
    "bmm": "torch.bmm({0}, {1})",
    "baddbmm": "torch.baddbmm({0}, {1}, {2})",
}
"""Each template op as a call on its inputs in Inductor's order (`OPERANDS`)."""

CHECK = '''
HINT = {hint}
failed = []
orig = sa.AlgorithmSelectorCache.benchmark_example_value


def checked(node, hint_override=None):
    """Each benchmark tensor at HINT against what its kernel reads: the view's sizes as
    Inductor gives the kernel, its strides and offset with HINT put in for every symbol."""
    t = orig(node, hint_override=hint_override)
    if hint_override != HINT:
        return t
    from torch._inductor import ir
    from torch._inductor.virtualized import V

    lay = node if isinstance(node, ir.Layout) else node.get_layout()
    size = lay.size if isinstance(node, ir.Layout) else node.get_size()
    stride = lay.stride if isinstance(node, ir.Layout) else node.get_stride()
    at = lambda e: int(sympy.sympify(e).subs({{s: HINT for s in sympy.sympify(e).free_symbols}}))
    extent = V.graph.sizevars.optimization_hints_with_override(size, hint_override=HINT)
    st = [at(e) for e in stride]
    need = 0 if 0 in extent else 1 + at(lay.offset) + sum((n - 1) * s for n, s in zip(extent, st))
    have = t.untyped_storage().nbytes() // t.element_size() - t.storage_offset()
    name = "out" if isinstance(node, ir.Layout) else node.get_name()
    verdict = "MISFIT" if need > have else "fits"
    print(f"hint {{HINT}} {{name}}: IR size {{[str(x) for x in size]}} stride {{[str(x) for x in stride]}}; "
          f"built shape {{tuple(t.shape)}} stride {{t.stride()}} storage {{have}}; kernel reads {{need}}: {{verdict}}",
          flush=True)
    if need > have:
        failed.append(name)
    return t


sa.AlgorithmSelectorCache.benchmark_example_value = staticmethod(checked)
'''


@dataclass(frozen=True)
class Files:
    script: Path
    report: Path


def _view_code(var: str, op: Operand) -> str | None:
    """`var` turned into the view the template reads, or None where no plain torch call gives it."""
    from sympy import sympify

    base = [sympify(s) for s in op.base]
    size = [sympify(s) for s in op.view.size]
    stride = [sympify(s) for s in op.view.stride]
    if sympify(op.view.offset) != 0:
        return None
    if any(s == 0 for s in stride):  # a broadcast bias: the op broadcasts the base itself
        return var
    contiguous = [sympify(1)] * len(base)
    for i in range(len(base) - 2, -1, -1):
        contiguous[i] = contiguous[i + 1] * base[i + 1]
    if size == base:
        return var
    if len(size) == len(base):
        for perm in itertools.permutations(range(len(base))):
            if all(size[i] == base[p] and (size[i] == 1 or (stride[i] - contiguous[p]).expand() == 0)
                   for i, p in enumerate(perm)):
                return f"{var}.permute({', '.join(map(str, perm))})"
        return None
    dynamic = [i for i, s in enumerate(size) if not s.is_number]
    if len(dynamic) == 1:
        dims = ", ".join("-1" if i in dynamic else str(s) for i, s in enumerate(size))
        return f"{var}.reshape({dims})"
    return None


def script(op: str, operands: Sequence[Operand], hints: Sequence[int], hint: int,
           examples: Mapping[str, int]) -> tuple[str | None, str]:
    """(the script, "") or (None, why no script can be written)."""
    if op not in CALLS:
        return None, f"no reproducer for a {op} template (mm, addmm, bmm and baddbmm have one)"
    names = [f"t{i}" for i in range(len(operands))]
    views = [_view_code(n, o) for n, o in zip(names, operands)]
    if any(v is None for v in views):
        return None, "an input's view is not a permute, reshape or broadcast of its base"
    lines = ["import sys", "", "import sympy", "import torch", "import torch._inductor.config as ic",
             "from torch._inductor import select_algorithm as sa", "",
             f"ic.multi_kernel_hints = {list(hints)}", "ic.max_autotune = True", "ic.max_autotune_gemm = True",
             'ic.max_autotune_gemm_backends = "TRITON"', "ic.force_disable_caches = True",
             CHECK.format(hint=hint), "", f"def f({', '.join(names)}):",
             f"    return {CALLS[op].format(*views)}", "", ""]
    for n, o in zip(names, operands):
        sizes = []
        for s in o.base:
            if s.isdigit():
                sizes.append(s)
            elif s in examples:
                sizes.append(str(examples[s]))
            else:
                return None, f"no example size for {s}"
        lines.append(f'{n} = torch.randn({", ".join(sizes)}, device="cuda", dtype=torch.{o.dtype})')
        for d, s in enumerate(o.base):
            if s in examples:
                lines.append(f"torch._dynamo.mark_dynamic({n}, {d})  # {s}")
    lines += ["", "with torch.no_grad():", "    try:", f"        torch.compile(f)({', '.join(names)})",
              "        torch.cuda.synchronize()", "    except Exception as e:",
              '        print("compile FAILED:", type(e).__name__, str(e).strip().splitlines()[0][:300])',
              "        sys.exit(1)",
              'print("compiled;", f"{len(failed)} benchmark tensors misfit at hint {HINT}: {failed}" if failed '
              'else "every benchmark tensor fits")',
              "sys.exit(1 if failed else 0)", ""]
    return "\n".join(lines), ""


def _t(values: Sequence[object]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ("," if len(values) == 1 else "") + ")"


def report(op: str, misfit: rule.Misfit, tensor: str, environment: Mapping[str, str | None],
           code: str | None, why_no_code: str, hints: Sequence[int]) -> str:
    """The upstream issue, in Markdown."""
    m = misfit
    path = ("`AlgorithmSelectorCache.benchmark_example_value` (in-process autotuning) evaluates every non-constant "
            "expression to the hint (`SizeVarAllocator.optimization_hint_with_override`), strides and allocation "
            "sizes included" if m.path == "in-process" else
            "`TensorMeta.from_irnodes` (autotuning in a subprocess) uses `optimization_hints` with no hint override: "
            "the tensors are built at the example size whatever hint is being tuned")
    rows = [f"| {r.where} | `{r.expr}` | {r.given:,} | {r.at_hint:,} |" for r in m.replaced]
    out = [
        f"# Inductor autotunes {op} at multi_kernel_hints={hint_list(hints)} on a benchmark tensor that does not "
        f"hold what the kernel reads at hint {m.hint}",
        "",
        "## Environment",
        "",
        *(f"- {k}: {v}" for k, v in environment.items() if v),
        f"- Inductor settings: `multi_kernel_hints={hint_list(hints)}`, `max_autotune=True`, "
        "`max_autotune_gemm_backends=\"TRITON\"`, `force_disable_caches=True`",
        "",
        "## What happens",
        "",
        f"At hint {m.hint} the template kernel for `{op}` gets {m.hint} for every size symbol, so it reads "
        f"`{tensor}` with shape {_t(m.needed.size)} and strides {_t(m.needed.stride)}: "
        f"{m.needed.storage:,} elements from its base pointer. The benchmark tensor it is timed on has shape "
        f"{_t(m.given.size)}, strides {_t(m.given.stride)} and {m.given.storage:,} elements of storage. {path}.",
        "",
        "When the over-read leaves the caching allocator's block the compile dies with "
        "`CUDA error: an illegal memory access`; when it stays inside, the config is timed on memory outside "
        "the tensor, and the variant kept for that hint was chosen on that timing.",
        "",
        "| where | IR expression | value Inductor used | value at the hint |",
        "| --- | --- | --- | --- |",
        *rows,
        "",
        "## Expected",
        "",
        "The tensors autotuning builds at a hint hold what the kernel indexes at that hint: each stride, offset "
        "and allocation size evaluated with the hint substituted for its symbols.",
        "",
        "## Reproducer (torch and triton only)",
        "",
    ]
    if code is None:
        out += [f"No standalone script: {why_no_code}.", ""]
    else:
        out += ["It prints each benchmark tensor at the hint against what its kernel reads and exits 1 on a misfit "
                "or a failed compile.", "", "```python", code.rstrip(), "```", ""]
    return "\n".join(out)


def hint_list(hints: Sequence[int]) -> str:
    return "[" + ", ".join(map(str, hints)) + "]"


def _names(path: Path) -> Iterator[Path]:
    """`path`, then `name-2.py`, `name-3.py`..."""
    yield path
    for n in itertools.count(2):
        yield path.with_name(f"{path.stem}-{n}{path.suffix}")


def _new_file(path: Path, text: str | None) -> Path:
    """`text` in a new file at the first of `_names(path)` where nothing is (None: that
    name, unwritten): never over a file, never through a symlink, a dangling one included."""
    for candidate in _names(path):
        if text is None:
            if not os.path.lexists(candidate):
                return candidate
            continue
        try:
            with open(candidate, "x", encoding="utf-8") as f:
                f.write(text)
            return candidate
        except FileExistsError:
            continue
    raise AssertionError


def write(folder: Path, stem: str, code: str | None, text: str) -> Files:
    """The script (when there is one) and the report in `folder`, never over an existing file."""
    folder.mkdir(parents=True, exist_ok=True)
    report_path = _new_file(folder / f"{stem}.md", text)
    return Files(_new_file(folder / f"{stem}.py", code), report_path)


def write_for(graphs: Sequence[GraphRecord], symbols: Sequence[SymbolInfo], hints: Sequence[int],
              environment: Mapping[str, str | None], folder: Path, done: set[tuple[str, int]]) -> list[Files]:
    """A script and a report for each template and hint where a benchmark tensor was short
    and left so (not fitted), once per (site, hint) in `done`."""
    examples = {s.name: s.example for s in symbols if s.example is not None}
    out = []
    for g in graphs:
        for seen in g.misfits:
            op, site = op_of(g, seen)
            site = site or "_".join(seen.inputs)
            if not seen.misfit.short or seen.fitted or (site, seen.misfit.hint) in done:
                continue
            done.add((site, seen.misfit.hint))
            code, why = script(op, seen.operands, hints, seen.misfit.hint, examples)
            tensor = "out" if seen.index is None else seen.inputs[seen.index]
            text = report(op, seen.misfit, tensor, environment, code, why, hints)
            out.append(write(folder, f"{site}-hint{seen.misfit.hint}", code, text))
    return out


def write_beside(model: Path, graphs: Sequence[GraphRecord], symbols: Sequence[SymbolInfo], hints: Sequence[int],
                 env: Environment, done: set[tuple[str, int]], say: Callable[[str], None]) -> list[Files]:
    """`write_for` into MODEL.hint-repro/ beside the model, saying where each file is."""
    facts = {"torch": env.torch, "triton": env.triton, "CUDA": env.cuda, "GPU": env.gpu, "python": env.python}
    folder = model.with_name(model.stem + ".hint-repro")
    try:
        files = write_for(graphs, symbols, hints, facts, folder, done)
    except OSError as e:
        say(f"could not write the reproducers to {folder}: {e.strerror or e}")
        return []
    for f in files:
        say(f"reproducer: {f.script if f.script.exists() else '(none: see the report)'}; upstream report: {f.report}")
    return files
