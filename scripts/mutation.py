"""Mutation testing of kinspect's core with mutmut: does the suite fail when the code is wrong?

mutmut changes one thing at a time in a function (a comparison, an operator, a constant, a
default argument) and runs the tests that call that function; a mutant the tests still
pass is a mistake the suite would not catch. Each module is mutated on its own, against
its own test files only (`TESTS`): the session reader or the symbolic sizes are called by
nearly every test, and running all of those against each of their mutants would take hours
on two cores. mutmut works in `.mutation/` (a copy of kinspect, the tests and the
samples, made afresh each run) and forks a worker per mutant.

    scripts/mutation                                  # kinspect/core/dispatch and quality
    scripts/mutation --module kinspect/core/dispatch/heuristics.py
    scripts/mutation --limit 300                      # 300 mutants spread over the modules

It prints each module's count as it goes, then every mutant that was not killed, as the
lines it changed, and the score: killed/total. A mutant whose function none of the
module's test files calls is not killed: it is listed as untested.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".mutation"

DEFAULT_MODULES = ("kinspect/core/dispatch", "kinspect/core/quality")
TESTS = {
    "kinspect/core/dispatch/batch.py": ["test_batch.py", "test_fast_paths.py", "test_decision_vs_inductor.py"],
    "kinspect/core/dispatch/decision.py": ["test_heuristics.py", "test_decision_vs_inductor.py", "test_batch.py"],
    "kinspect/core/dispatch/fit.py": ["test_explain_cli.py", "test_sessionfile.py"],
    "kinspect/core/dispatch/heuristics.py": ["test_heuristics.py", "test_decision_vs_inductor.py"],
    "kinspect/core/dispatch/operands.py": ["test_symbolic.py"],
    "kinspect/core/dispatch/shapes.py": ["test_shapes.py", "test_hostile_input.py", "test_batch.py"],
    "kinspect/core/dispatch/symbolic.py": ["test_symbolic.py", "test_shapes.py"],
    "kinspect/core/quality/advise.py": ["test_advise.py", "test_advise_grid.py"],
    "kinspect/core/quality/benchmark_fit.py": ["test_compile_failure.py", "test_benchmark_fit.py"],
    "kinspect/core/quality/boundaries.py": ["test_boundaries.py"],
    "kinspect/core/quality/comparison.py": ["test_comparison.py", "test_compare_advise_cpu.py"],
    "kinspect/core/quality/decision_map.py": ["test_one_kernel.py", "test_plot_cli.py"],
    "kinspect/core/quality/explain.py": ["test_explain_cli.py", "test_measure_stats.py", "test_timings.py"],
    "kinspect/core/quality/finding_groups.py": ["test_finding_groups.py"],
    "kinspect/core/quality/findings.py": ["test_findings.py", "test_quality.py", "test_variance.py",
                                          "test_kernel_sizes.py", "test_call_sites.py"],
    "kinspect/core/quality/kernel_sizes.py": ["test_kernel_sizes.py"],
    "kinspect/core/quality/model_calls.py": ["test_compare_advise_cpu.py", "test_advise.py"],
    "kinspect/core/quality/overview.py": ["test_quality.py", "test_fast_paths.py", "test_one_kernel.py",
                                          "test_variance.py"],
    "kinspect/core/quality/roofline.py": ["test_roofline_finding.py", "test_measure_stats.py"],
    "kinspect/core/quality/rules.py": ["test_findings.py"],
    "kinspect/core/quality/sweep_plan.py": ["test_sweep_plan.py"],
    "kinspect/core/quality/variance.py": ["test_variance.py"],
    "kinspect/core/quality/whatif.py": ["test_quality.py", "test_heuristics.py", "test_one_kernel.py"],
}
"""Each module's own test files: those that test it in this process (a test that runs
kinspect in a subprocess cannot see a mutant). A module not named here is run against the
test files that import it."""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--module", action="append", metavar="PATH",
                   help=f"a package folder or .py file to mutate (repeatable; default: {' and '.join(DEFAULT_MODULES)})")
    p.add_argument("--tests", action="append", metavar="FILE",
                   help="the test files to run against every module's mutants (repeatable; default: TESTS)")
    p.add_argument("--limit", type=int, metavar="N", help="test at most N mutants, spread evenly over the modules")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="mutants tested at once (default: one per core)")
    args = p.parse_args(argv)

    files = []
    for m in (x.rstrip("/") for x in (args.module or DEFAULT_MODULES)):
        path = ROOT / m
        if not m.startswith("kinspect/") or not path.exists():
            p.error(f"no module {m} in kinspect/")
        files += [str(f.relative_to(ROOT)) for f in sorted(path.rglob("*.py"))] if path.is_dir() else [m]

    start = time.monotonic()
    _copy()
    names = _generate(files, args.jobs)
    chosen = _spread([n for f in files for n in names.get(f, [])], args.limit) if args.limit is not None else None
    statuses: dict[str, str] = {}
    untried: list[str] = []
    failed: list[str] = []
    for f in files:
        todo = [n for n in names.get(f, []) if chosen is None or n in chosen]
        if not todo:
            continue
        tests = args.tests or TESTS.get(f) or _importers(f)
        if not tests:
            untried.append(f)
            statuses.update((n, "no tests") for n in todo)
            continue
        t0 = time.monotonic()
        got = _run(f, [t if t.startswith("tests/") else f"tests/{t}" for t in tests], todo if chosen else [], args.jobs)
        if got is None:
            failed.append(f)
            continue
        statuses.update(got)
        killed = sum(s in ("killed", "timeout") for s in got.values())
        print(f"{f}: {killed}/{len(got)} killed ({time.monotonic() - t0:.0f} s)", flush=True)
    _report(statuses, files, untried, time.monotonic() - start)
    if failed:
        print(f"mutation: mutmut could not run {', '.join(failed)} (above: why)", file=sys.stderr)
        return 1
    return 0


def _copy() -> None:
    """A fresh copy to mutate (mutmut writes its mutants and results beside the sources)."""
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "__snapshots__")
    for d in ("kinspect", "tests", "samples", "docs"):
        shutil.copytree(ROOT / d, WORK / d, ignore=ignore)


def _configure(only: list[str], tests: list[str]) -> None:
    config = {
        "source_paths": ["kinspect"],
        "only_mutate": only,
        "also_copy": ["samples/", "docs/"],
        "pytest_add_cli_args_test_selection": tests,
        # one process per mutant, forked by mutmut: no xdist, no cache to write
        "pytest_add_cli_args": ["-p", "no:xdist", "-p", "no:cacheprovider", "-q"],
        # the workers are forked from a server that only runs tests: a test that starts
        # processes of its own (an autotune child, a compile pool) then leaves none behind
        # in mutmut's main process for it to reap as a worker
        "process_isolation": "forkserver",
    }
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    lines = "\n".join(f"{k} = {json.dumps(v)}" for k, v in config.items())
    (WORK / "pyproject.toml").write_text(f"{pyproject}\n[tool.mutmut]\n{lines}\n", encoding="utf-8")


def _fresh() -> None:
    """Forget the last module's mutants and statistics: each run starts from the sources."""
    shutil.rmtree(WORK / "mutants", ignore_errors=True)
    (WORK / "mutmut-stats.json").unlink(missing_ok=True)


def _generate(files: list[str], jobs: int) -> dict[str, list[str]]:
    """Every mutant's name per module, in function order (mutmut's own generation step)."""
    _fresh()
    _configure(files, [])
    code = ("from mutmut.__main__ import create_mutants; from mutmut.utils.file_utils import copy_src_dir; "
            f"copy_src_dir(); create_mutants({jobs})")
    subprocess.run([sys.executable, "-c", code], cwd=WORK, check=True, stdout=subprocess.DEVNULL)
    return {str(meta.relative_to(WORK / "mutants")).removesuffix(".meta"): list(codes)
            for meta, codes in _results()}


def _results() -> list[tuple[Path, dict[str, int | None]]]:
    return [(meta, json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"])
            for meta in sorted((WORK / "mutants").rglob("*.py.meta"))]


def _spread(names: list[str], limit: int) -> set[str]:
    """`limit` of the names taken at even steps, so that every module keeps its share."""
    if limit >= len(names):
        return set(names)
    step = len(names) / limit
    return {names[int(i * step)] for i in range(limit)}


def _importers(module: str) -> list[str]:
    dotted = module.removesuffix(".py").replace("/", ".")
    return [f.name for f in sorted((ROOT / "tests").glob("test_*.py"))
            if f"from {dotted} import" in (text := f.read_text(encoding="utf-8")) or f"import {dotted}\n" in text]


def _run(module: str, tests: list[str], names: list[str], jobs: int) -> dict[str, str] | None:
    from mutmut.stats import status_by_exit_code

    _fresh()
    _configure([module], tests)
    run = subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children", str(jobs), *names],
                         cwd=WORK, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if run.returncode != 0:
        print(run.stdout[-2000:], file=sys.stderr)
        print(f"mutation: mutmut run on {module} failed ({run.returncode}); its tests, run in {WORK / 'mutants'}, "
              "say why", file=sys.stderr)
        return None
    out = {}
    for _, codes in _results():
        for name, code in codes.items():
            if not names or name in names:
                out[name] = status_by_exit_code[code]
    _keep_diffs([n for n, s in out.items() if s not in ("killed", "timeout")])
    return out


_DIFFS: dict[str, str] = {}


def _keep_diffs(names: list[str]) -> None:
    """Each mutant that was not killed as the lines it changed, read while its module's
    mutants are still on disk."""
    if not names:
        return
    code = ("import sys\nfrom mutmut.mutation.diff_apply import get_diff_for_mutant\n"
            "for name in sys.argv[1:]:\n"
            "    lines = [l.strip() for l in get_diff_for_mutant(name).splitlines()\n"
            "             if l[:1] in '+-' and l[:3] not in ('+++', '---')]\n"
            "    print('\\0'.join([name, *lines]))\n")
    run = subprocess.run([sys.executable, "-c", code, *names], cwd=WORK, capture_output=True, text=True)
    for line in run.stdout.splitlines():
        name, *lines = line.split("\0")
        _DIFFS[name] = "\n".join(f"      {x}" for x in lines)


def _report(statuses: dict[str, str], files: list[str], untried: list[str], seconds: float) -> None:
    killed = [n for n, s in statuses.items() if s in ("killed", "timeout")]
    untested = [n for n, s in statuses.items() if s == "no tests"]
    survived = [n for n, s in statuses.items() if n not in killed and n not in untested]
    for title, group in (("survived", survived), ("untested (none of the module's test files calls the function)", untested)):
        if group:
            print(f"\n{len(group)} {title}:")
            for n in group:
                print(f"  {n}" + (f" ({statuses[n]})" if statuses[n] not in ("survived", "no tests") else ""))
                if n in _DIFFS:
                    print(_DIFFS[n])
    for f in untried:
        print(f"{f}: no test file named in TESTS or importing it")
    total = len(statuses)
    share = f" ({100 * len(killed) / total:.1f}%)" if total else ""
    print(f"\nmutation score: {len(killed)}/{total} killed{share}; {len(survived)} survived, {len(untested)} untested; "
          f"{len(files)} modules in {seconds / 60:.1f} min")


if __name__ == "__main__":
    sys.exit(main())
