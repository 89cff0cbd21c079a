"""benchmarks/program_goal.py on GPU sessions of the MLP training loop: the goal's figures
against their targets, and a session of one hint not counted."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.program_goal import main

SESSIONS = Path(__file__).parent / "fixtures" / "sessions"


def test_each_session_against_the_targets_and_the_count(capsys, tmp_path):
    one_hint = json.loads((SESSIONS / "mlp_h200_2026-11-29.session.json").read_text())
    one_hint["model"]["hints"] = [64]
    for site in one_hint["sites"]:
        site["variants"] = site["variants"][:1]
    for recorded in ("events", "measurements", "findings", "sweeps"):
        one_hint.pop(recorded, None)
    (tmp_path / "one_hint.session.json").write_text(json.dumps(one_hint))
    assert main([str(SESSIONS / f"mlp_train_{name}.session.json") for name in
                 ("fixed_h200_2026-12-07", "busy_gpu_h100_2026-12-07")] + [str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "x1.180 (target x1.05), worst site multi_kernel_1@graph_1 x1.620 (target x1.15): misses" in lines[0]
    assert "x1.014 (target x1.05), worst site multi_kernel_0 x1.061 (target x1.15): meets" in lines[1]
    assert lines[2].endswith("hints 64: one variant per site, nothing to pick among (not counted)")
    assert lines[3] == "1 of 2 sessions meet the goal (one compile each)"
