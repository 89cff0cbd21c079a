"""The real-program set on the GPU, as a user runs it (tests/gpu/real_programs.py): every
program, stock, with kinspect's fixes (`--one-size-per-symbol --fusion-per-hint`) and with
those and `--autotune-device-time` (mode `timed`), under `kinspect run --hints 64,256,4096
--measure` (PROGRAMS_HINTS: other hints, such as advise's proposal). With the fixes every one saves a session, and
no variant runs a choice tuned at an earlier hint; stock, every one saves one or ends in
kinspect's own one-line reason. Every dispatch a saved session holds is the one an
independent hook on Inductor's `SizeHintMultiKernelCall.run` saw, key and pick, in order,
and kinspect's model predicted it.

With KINSPECT_RECORD_DIR set (scripts/device_session.sh programs) the sessions, the hook's
logs and each run's stderr are kept there; scripts/program_table.py tabulates them.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from real_programs import MODES, PROGRAMS, kinspect_lines, run

from kinspect.core.quality.findings import earlier_hints_choices
from kinspect.core.store import load


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory) -> Path:
    return Path(os.environ.get("KINSPECT_RECORD_DIR") or tmp_path_factory.mktemp("programs"))


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_the_program_records_and_every_pick_is_inductors(program, mode, out_dir):
    if importlib.util.find_spec(program.needs) is None:
        pytest.skip(f"{program.name} needs {program.needs}")
    ran = run(program, mode, out_dir)
    said = kinspect_lines(ran.stderr)
    print(f"\n{program.name} [{mode}] {ran.seconds:.0f} s, exit {ran.returncode}: {said[-1] if said else 'nothing'}")
    if ran.returncode != 0:
        assert mode == "stock", ran.stderr[-4000:]
        # Stock Inductor may fail; kinspect then says why in its own line, naming the op, the
        # hint and the option that gets through.
        assert said and "--one-size-per-symbol" in said[-1] and " at hint " in said[-1], ran.stderr[-4000:]
        if not ran.session.exists() or not load(ran.session).sites:
            return
        _side_by_side(program, out_dir)
    s = load(ran.session)
    assert s.sites, ran.stderr[-4000:]
    events = sorted(s.events, key=lambda e: e.seq)
    assert [(e.key, e.picked) for e in events] == [(key, picked) for _, key, picked in ran.picks]
    assert all(e.picked == e.predicted for e in events)
    # Every site names its template's GEMM and each variant its hint, also where two hints
    # share a key, or the checks below (autotune tables, borrowed choices) pass vacuously.
    unnamed = [site.name for site in s.sites if site.op == "template" or any(v.hint is None for v in site.variants)]
    assert not unnamed, unnamed
    if mode == "timed":
        # Inductor's benchmarks timed by the GPU alone: no variant autotuned at many times
        # what its kernel takes at the same sizes.
        assert s.environment.config.get("autotune_device_time") is True
        assert not [f.message for f in s.findings if f.kind == "autotune-timed-overhead"]
    if mode != "stock":
        assert s.environment.config.get("one_size_per_symbol") is True
        assert all(g.hint_sizes for g in s.graphs if g.sites)
        # With one size per symbol each hint is tuned on the problem it keys: no finding of a
        # hint tuned on another one, by the sizes nor by the autotune times against kinspect's,
        # and no hint of a graph with sites tuned at its example sizes (rounding for guards of
        # alignment, and holding at their examples the symbols no one size lets run, reach one).
        assert not [f.message for f in s.findings if f.kind in (
            "hint-size-in-kernel", "hint-benchmark-tensor", "autotune-time-disagrees", "hint-at-examples")]
        assert s.environment.config.get("fusion_per_hint") is True
        borrowed = [f"{site.name} v{v.index} (hint {v.hint}) runs {c.name}, tuned at hint {c.tuned_at}"
                    for site in s.sites for v, c in earlier_hints_choices(site)]
        assert not borrowed, borrowed
    _side_by_side(program, out_dir)


def _side_by_side(program, out_dir: Path) -> None:
    """Once both modes of a program have saved a session (whichever run ends second), the
    two side by side as a user compares them: `kinspect compare stock fixed`, the table with
    the whole model, and each line under it in one of its two forms."""
    stock, fixed = (out_dir / f"{program.name}.{mode}.session.json" for mode in ("stock", "fixed"))
    if not (stock.exists() and fixed.exists()):
        return
    done = subprocess.run([sys.executable, "-m", "kinspect", "compare", str(stock), str(fixed)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
    print(f"\n{program.name} compare:\n{done.stdout}")
    assert done.returncode == 0, done.stderr[-4000:]
    assert "whole model" in done.stdout
    for line in done.stdout.split("└")[-1].splitlines():
        if " · " in line and ": ×" in line:  # a site whose two compiles' figures differ
            assert ("both compiles tuned the same problem at every hint" in line
                    or "the compiles tuned different problems at " in line), line
