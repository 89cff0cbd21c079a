"""The set of ordinary programs kinspect must get through (tests/gpu/programs), run as a
user runs them: `kinspect run --hints ... --measure PROGRAM.py`, stock or with
`--one-size-per-symbol`, each dispatch also logged by an independent hook on Inductor's
`SizeHintMultiKernelCall.run` (a `sitecustomize` that knows nothing of kinspect), so a test
can hold every recorded pick against the one Inductor made.

Used by tests/gpu/test_gpu_programs.py; scripts/program_table.py prints what they saved.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from gpu_cases import ROOT

PROGRAMS_DIR = Path(__file__).resolve().parent / "programs"

HINTS = os.environ.get("PROGRAMS_HINTS", "64,256,4096")
"""The hints every program runs at: the default, or (PROGRAMS_HINTS) those advise proposed,
so a proposal is held to Inductor's own picks as the default is."""


@dataclass(frozen=True)
class Program:
    name: str
    needs: str
    """The library the program imports beside torch."""
    flags: tuple[str, ...] = ()
    """kinspect flags this program is run with in both modes (`--compile-layers-once`)."""

    @property
    def path(self) -> Path:
        return PROGRAMS_DIR / f"{self.name}.py"


PROGRAMS = (
    Program("encoder_serve", "transformers"),
    Program("seq2seq_generate", "transformers"),
    Program("decoder_generate", "transformers"),
    Program("vit_classify", "torchvision"),
    Program("cnn_classify", "torchvision"),
    Program("moe_layers", "torch"),
    Program("mlp_train", "torch"),
    Program("gpt_train", "transformers"),
    Program("llama_serve", "transformers", ("--compile-layers-once",)),
)

MODES = {"stock": (), "fixed": ("--one-size-per-symbol", "--fusion-per-hint"),
         "timed": ("--one-size-per-symbol", "--fusion-per-hint", "--autotune-device-time")}
"""Each mode's own flags: Inductor as it is, kinspect's two fixes of its hint tuning (one size
per symbol at each hint, each hint's fused choice among its own), and those two with
Inductor's benchmarks timed by the GPU's work alone."""

HOOK = '''
import json, os
from torch._inductor.codegen import multi_kernel as _mk

_log = open(os.environ["KINSPECT_PICKS_LOG"], "a", buffering=1)
_run = _mk.SizeHintMultiKernelCall.run


def run(self, *args, **kwargs):
    out = _run(self, *args, **kwargs)
    key = self._get_shape_cache_key(*args, **kwargs)
    _log.write(json.dumps([self.multi_kernel_name, [list(s) for s in key], self.picked_kernel]) + "\\n")
    return out


_mk.SizeHintMultiKernelCall.run = run
'''
"""The independent hook: Inductor's own key and pick after each `run`, one JSON line each."""


@dataclass
class Ran:
    program: Program
    mode: str
    returncode: int
    stdout: str
    stderr: str
    session: Path
    picks: list[tuple[str, tuple[tuple[int, ...], ...], int]]
    seconds: float


def run(program: Program, mode: str, out: Path, timeout: float | None = None) -> Ran:
    """Run one program under `kinspect run` as a user types it; its session, stderr and the
    independent hook's log go into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{program.name}.{mode}"
    hook_dir = out / f"{stem}.hook"
    hook_dir.mkdir(exist_ok=True)
    (hook_dir / "sitecustomize.py").write_text(HOOK)
    picks_log = out / f"{stem}.picks.jsonl"
    picks_log.unlink(missing_ok=True)
    session = out / f"{stem}.session.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hook_dir), str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "KINSPECT_PICKS_LOG": str(picks_log), "COLUMNS": "200"}
    cmd = [sys.executable, "-m", "kinspect", "run", "--hints", HINTS, "--measure", *MODES[mode], *program.flags,
           "-o", str(session), str(program.path)]
    timeout = timeout or float(os.environ.get("PROGRAM_TIMEOUT", "420"))
    started = time.perf_counter()
    try:
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
        code, stdout, stderr = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as e:
        code, stdout, stderr = -9, _text(e.stdout), f"{_text(e.stderr)}\nkinspect test: timed out after {timeout} s"
    took = time.perf_counter() - started
    (out / f"{stem}.stderr.txt").write_text(stderr)
    picks = []
    if picks_log.exists():
        for line in picks_log.read_text().splitlines():
            name, key, picked = json.loads(line)
            picks.append((name, tuple(tuple(s) for s in key), picked))
    return Ran(program, mode, code, stdout, stderr, session, picks, took)


def _text(b: bytes | str | None) -> str:
    return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")


def kinspect_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("kinspect:")]
