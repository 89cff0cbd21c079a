"""What a user sees when something else fails: a model file that floods its output
before it fails to load, and an inspector that crashes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kinspect.commands.model_output import KEEP

REPO = Path(__file__).resolve().parent.parent

FLOOD = textwrap.dedent("""\
    import os, sys
    for i in range(20_000):
        print("x" * 999)
    os.write(1, b"written from C\\n" * 1000)
    sys.stderr.write("progress 99%")
    raise ValueError("the one-line error")
""")
"""20 MB to stdout through Python and from C, a line left open on stderr, then the error."""


@pytest.mark.parametrize("command", [["explain"], ["record"], []], ids=["explain", "record", "inspector"])
def test_a_model_that_floods_its_output_still_ends_on_its_one_line_error(tmp_path, command):
    model = tmp_path / "flood.py"
    model.write_text(FLOOD, encoding="utf-8")
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "NO_COLOR": "1", "TERM": "dumb"}
    # stdout and stderr into one pipe, in the order a terminal shows them
    done = subprocess.run([sys.executable, "-m", "kinspect", *command, str(model)], cwd=REPO, env=env,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    out = done.stdout.decode("utf-8", "replace")
    assert done.returncode == 2
    assert out.splitlines()[-1] == "kinspect: error: flood.py:6: ValueError while loading: the one-line error"
    assert len(done.stdout) < 2 * KEEP + 1000
    left_out = 20_000 * 1000 + 15_000 + len("progress 99%") - 2 * KEEP
    assert f"[kinspect: {left_out:,} bytes that flood.py printed while loading are left out here]" in out
    assert out.startswith("x" * 999 + "\n")
    assert "written from C\nprogress 99%\nkinspect: error:" in out


def test_an_inspector_that_crashes_exits_non_zero_with_its_traceback(kinspect_cli, session_file, monkeypatch):
    from kinspect.tui import app

    class Crashing(app.InspectorApp):
        CSS_PATH = Path(app.__file__).with_name(app.InspectorApp.CSS_PATH)  # relative to this file otherwise

        def on_mount(self) -> None:
            raise RuntimeError("a stand-in crash")

        def run(self, *args, **kwargs):
            return super().run(*args, headless=True, **kwargs)

    monkeypatch.setattr(app, "InspectorApp", Crashing)
    done = kinspect_cli("open", session_file)
    assert done.returncode == 1
    assert "RuntimeError" in done.stdout + done.stderr and "a stand-in crash" in done.stdout + done.stderr


@pytest.mark.parametrize("command, sample", [
    ("sweep", "gpt2"), ("advise", "generate"), ("compare", "gpt2"),
])
def test_without_a_gpu_or_the_models_library_the_gpu_line_comes_first(kinspect_cli, command, sample):
    """samples/gpt2.py imports transformers, not installed here: the GPU's line, naming the
    recording to open, as samples/linear.py gets, not the file's import error."""
    from kinspect.commands.recording import cuda_available
    from kinspect.inductor import missing_imports

    model = Path("samples") / f"{sample}.py"
    if cuda_available() or not missing_imports(REPO / model):
        pytest.skip("a CUDA GPU, or transformers, is here")
    result = kinspect_cli(command, model, "--range", "B=2..8")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (f"kinspect: error: {model}: kinspect {command} needs a CUDA GPU and none is available "
                             f"here, and it needs transformers, not installed here; its recording opens anywhere: "
                             f"kinspect open samples/{sample}.session.json\n")
