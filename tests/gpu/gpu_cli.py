"""`python -m kinspect ...` as a user runs it on the GPU (shared by tests/gpu modules)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from gpu_cases import ROOT


def kinspect(*args: object) -> subprocess.CompletedProcess[str]:
    """A compile takes ~20 s and each compiled baseline another; allow minutes."""
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
    env.pop("FORCE_COLOR", None)
    result = subprocess.run([sys.executable, "-m", "kinspect", *map(str, args)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=1200)
    print(result.stderr[-4000:])
    assert result.returncode == 0, result.stderr
    # Inductor logs a benign autotuning failure (a config over the shared-memory limit) with
    # its traceback, glog-style; kinspect itself must print none.
    ours = [line for line in result.stderr.splitlines() if not re.match(r"[EWI]\d{4} \d\d:\d\d:\d\d", line)]
    assert not any(line.startswith("Traceback") for line in ours), result.stderr
    return result
