"""`kinspect open SESSION` and `kinspect model.py`: which source opens, or which error."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from synthetic import synthetic_session

from kinspect import cli
from kinspect.commands import inspect, recording
from kinspect.core.session.model import Session
from kinspect.core.store import save
from kinspect.core.session.format.log import log_header
from kinspect.tui.app import InspectorApp
from tui_helpers import screen_text, wait_until

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "models"


@pytest.fixture
def opened(monkeypatch):
    """Run the CLI without starting the app: record which source it would open."""
    sources = []
    monkeypatch.setattr(inspect, "_run", lambda source: sources.append(source) or 0)
    return sources


@pytest.fixture
def no_cuda(monkeypatch):
    monkeypatch.setattr(recording, "cuda_available", lambda: False)


def model_recording(sites: int, variants: int) -> Session:
    """A synthetic session as model.py's recording (it names the model it records)."""
    s = synthetic_session(sites, variants)
    return replace(s, model=replace(s.model, path="model.py"))


def a_model(tmp_path) -> Path:
    """A valid model file (checked before any recording opens)."""
    model = tmp_path / "model.py"
    model.write_text((FIXTURES / "linear.py").read_text())
    return model


def test_open_a_session_file(tmp_path, opened):
    path = tmp_path / "s.json"
    save(synthetic_session(2, 2), path)
    assert cli.main(["open", str(path)]) == 0
    assert not opened[0].can_measure
    assert opened[0].banner() == f"Recording made on synthetic · torch synthetic · 2026-11-29T00:00:00Z · {path}"


def test_a_model_without_cuda_opens_the_recording_beside_it(tmp_path, opened, no_cuda):
    model = a_model(tmp_path)
    save(model_recording(2, 2), tmp_path / "model.session.json")
    assert cli.main([str(model)]) == 0
    assert opened[0].banner().startswith("Recording made on synthetic · torch synthetic")
    assert opened[0].banner().endswith("model.session.json")


def test_a_torchrun_models_rank_recordings_open_together_without_cuda(tmp_path, opened, no_cuda, capsys):
    model = a_model(tmp_path)
    samples = Path(__file__).resolve().parents[2] / "samples"
    for rank in (1, 0):
        (tmp_path / f"model.rank{rank}.session.json").write_text(
            (samples / f"ddp.rank{rank}.session.json").read_text().replace("samples/ddp.py", "samples/model.py"))
    (tmp_path / "model.rankX.session.json").write_text("not a rank")
    assert cli.main([str(model)]) == 0
    source = opened[0]
    assert source.ranks.ranks == (0, 1) and source.session.environment.rank == 0
    assert "samples" not in source.banner() and "model.rank0.session.json · rank 0 of 2; rank 1 beside it" in source.banner()
    assert recording.no_cuda(model, "kinspect record") == (
        f"{model}: kinspect record needs a CUDA GPU and none is available here; its ranks' recordings open "
        f"anywhere: kinspect open {tmp_path / 'model.rank0.session.json'} {tmp_path / 'model.rank1.session.json'}")


def test_a_killed_recording_opens_from_its_log_marked_truncated(tmp_path, opened, no_cuda):
    model = a_model(tmp_path)
    # a recording killed right after its header: no end record
    (tmp_path / "model.session.jsonl").write_text(json.dumps(log_header(model_recording(1, 2))) + "\n")
    assert cli.main([str(model)]) == 0
    assert "truncated: the recording stopped before its end record" in opened[0].banner()


def test_a_model_without_cuda_or_recording_is_a_one_line_error(tmp_path, capsys, opened, no_cuda):
    model = a_model(tmp_path)
    assert cli.main([str(model)]) == 2
    err = capsys.readouterr().err
    assert err == (f"kinspect: error: {model}: the live pipeline needs a CUDA GPU and none is available here, "
                   f"and it has no recording beside it: record one on a GPU machine with kinspect record {model}\n")
    assert not opened


def test_without_cuda_a_broken_model_file_says_what_is_wrong_though_a_recording_exists(tmp_path, capsys, opened, no_cuda):
    model = tmp_path / "model.py"
    model.write_text((FIXTURES / "broken.py").read_text())
    save(model_recording(2, 2), tmp_path / "model.session.json")
    assert cli.main([str(model)]) == 2
    assert capsys.readouterr().err == "kinspect: error: model.py:7: syntax error: expected ':'\n"
    assert not opened


def test_with_cuda_a_model_opens_live_and_compiles_in_the_inspector(tmp_path, opened, monkeypatch):
    monkeypatch.setattr(recording, "cuda_available", lambda: True)
    model = tmp_path / "model.py"
    model.write_text((FIXTURES / "linear.py").read_text())
    save(model_recording(1, 2), tmp_path / "model.session.json")  # not opened: the model runs
    assert cli.main([str(model)]) == 0
    (source,) = opened
    assert source.live and not source.prepared and not source.can_measure
    assert source.banner().startswith(f"compiling: {model} on CUDA")
    assert source.session.sites == []  # they appear once the app has run prepare()


def test_a_broken_model_file_is_a_one_line_error_before_the_app_starts(tmp_path, capsys, opened, monkeypatch):
    monkeypatch.setattr(recording, "cuda_available", lambda: True)
    model = tmp_path / "model.py"
    model.write_text("model = 3\n")
    assert cli.main([str(model)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("kinspect: error: ")
    assert not opened


@pytest.mark.parametrize("name,message", [
    ("missing.py", "no such model file"),
    ("notes.txt", "expected a model file (.py), a session file (.json, .jsonl) or a TORCH_TRACE log"),
    ("missing.json", "no such file"),
])
def test_bad_paths(tmp_path, capsys, opened, no_cuda, name, message):
    assert cli.main([str(tmp_path / name)]) == 2
    assert message in capsys.readouterr().err


def test_without_cuda_a_model_that_parses_opens_its_recording_before_loading(tmp_path, opened, no_cuda, monkeypatch):
    """Loading the model imports torch (seconds): the recording opens first, checked later."""
    from kinspect.inductor.launch import modelfile

    monkeypatch.setattr(modelfile, "load_model_file", lambda path: pytest.fail("loaded before the recording opened"))
    model = tmp_path / "model.py"
    model.write_text("import torch\nmodel = 3\n")
    save(model_recording(2, 2), tmp_path / "model.session.json")
    assert cli.main([str(model)]) == 0
    assert opened[0].banner().endswith("model.session.json")


async def _checked(app: InspectorApp, shown: str | None = None) -> str:
    """The screen once the model check has ended (or, with `shown`, once that text is on
    screen, wherever the banner wraps it: a quick check can end between two looks at the workers)."""
    async with app.run_test(size=(120, 30)) as pilot:
        seen: list[bool] = []

        def ended() -> bool:
            if shown is not None and shown in " ".join(screen_text(app).split()):
                return True
            checks = [w for w in app.workers if w.group == "check"]
            if checks:
                seen.append(True)
            return bool(seen) and all(w.is_finished for w in checks)

        # the check starts after the first frame and loads the model in its own process
        await wait_until(pilot, ended, timeout=30)
        await pilot.pause()
        return screen_text(app)


async def test_without_cuda_a_model_that_fails_to_load_says_so_over_its_recording(tmp_path, no_cuda):
    model = tmp_path / "model.py"
    model.write_text("import torch\nraise ValueError('no weights file')\n")
    save(model_recording(2, 2), tmp_path / "model.session.json")
    app = InspectorApp(inspect.source_for_path(str(model)))
    text = await _checked(app)
    first = text.splitlines()[0]
    assert first.startswith(" model.py:2: ValueError while loading: no weights file · still showing")
    assert "multi_kernel_1" in text  # the recording stays on screen


@pytest.mark.parametrize("builder,message", [
    ("def inputs(B=1000):\n    raise RuntimeError('tokenizer missing')\n",
     "model.py: inputs(B=1000) failed: RuntimeError: tokenizer missing"),
    ("def inputs(B=1000, H=8):\n    return torch.randn(B, 1024)\n",
     "model.py: no input dim depends on H; use it in inputs() or remove the parameter"),
])
def test_without_cuda_a_builder_that_fails_or_a_size_no_dim_moves_with_is_reported(
        tmp_path, capsys, no_cuda, builder, message):
    """In the one line a GPU gives (it was: needs a CUDA GPU and has no recording)."""
    model = tmp_path / "model.py"
    model.write_text(f"import torch\nmodel = torch.nn.Linear(1024, 64)\n{builder}")
    assert cli.main([str(model)]) == 2
    assert capsys.readouterr().err == f"kinspect: error: {message}\n"


async def test_without_cuda_a_builder_that_fails_says_so_over_the_recording(tmp_path, no_cuda):
    model = tmp_path / "model.py"
    model.write_text("import torch\nmodel = torch.nn.Linear(1024, 64)\n"
                     "def inputs(B=1000):\n    raise RuntimeError('tokenizer missing')\n")
    save(model_recording(2, 2), tmp_path / "model.session.json")
    text = await _checked(InspectorApp(inspect.source_for_path(str(model))))
    assert text.splitlines()[0].startswith(" model.py: inputs(B=1000) failed: RuntimeError: tokenizer missing")


MISSING = "from a_library_not_installed_here import Net\n"
"""What samples/gpt2.py is without `transformers`: a model file whose library is missing."""


async def test_without_its_library_a_models_recording_opens_with_a_quiet_note_not_a_red_error(tmp_path, no_cuda):
    model = tmp_path / "model.py"
    model.write_text("import torch\n" + MISSING + "model = Net()\n")
    save(model_recording(2, 2), tmp_path / "model.session.json")
    app = InspectorApp(inspect.source_for_path(str(model)))
    text = await _checked(app, shown="runs live only with")
    banner = " ".join(line.strip() for line in text.splitlines()[:3])
    assert "model.py runs live only with a_library_not_installed_here installed (not here)" in banner
    assert "import failed" not in text and "still showing" not in text  # the red banner says "still showing"
    assert "multi_kernel_1" in text


def test_without_its_library_explain_explains_the_recording_and_record_names_it(tmp_path, capsys, no_cuda):
    model = tmp_path / "model.py"
    model.write_text("import torch\n" + MISSING + "model = Net()\n")
    save(model_recording(2, 2), tmp_path / "model.session.json")
    assert cli.main(["explain", str(model)]) == 0
    out, err = capsys.readouterr()
    assert "multi_kernel_1" in out and "import failed" not in err
    assert err.startswith(f"kinspect: no CUDA GPU here: explaining the recording {tmp_path / 'model.session.json'}")
    assert "model.py runs live only with a_library_not_installed_here installed (not here)" in err
    assert cli.main(["record", str(model)]) == 2
    err = capsys.readouterr().err
    assert "import failed" not in err and err.count("\n") == 1
    assert err == (f"kinspect: error: {model}: kinspect record needs a CUDA GPU and none is available here, and it "
                   "needs a_library_not_installed_here, not installed here; its recording opens anywhere: "
                   f"kinspect open {tmp_path / 'model.session.json'}\n")


async def test_without_cuda_a_model_that_loads_leaves_its_recording_as_it_was(tmp_path, no_cuda):
    model = a_model(tmp_path)
    save(model_recording(2, 2), tmp_path / "model.session.json")
    app = InspectorApp(inspect.source_for_path(str(model)))
    text = await _checked(app)
    assert text.splitlines()[0].startswith(" Recording made on synthetic · torch synthetic")
    assert "failed" not in text


@pytest.mark.parametrize("environ,platform,nodes,possible", [
    ({}, "linux", [], False),
    ({}, "linux", ["dev/nvidiactl", "dev/nvidia0"], True),
    ({}, "linux", ["proc/driver/nvidia/version"], True),  # the module is loaded; /dev nodes come on first use
    ({}, "linux", ["dev/dxg"], True),  # WSL2
    ({}, "linux", ["dev/nvhost-ctrl-gpu"], True),  # Jetson
    ({}, "linux", ["dev/kfd"], True),  # ROCm
    ({"CUDA_VISIBLE_DEVICES": ""}, "linux", ["dev/nvidia0"], False),
    ({"CUDA_VISIBLE_DEVICES": "-1"}, "linux", ["dev/nvidia0"], False),
    ({"CUDA_VISIBLE_DEVICES": "1,0"}, "linux", ["dev/nvidia0"], True),
    ({}, "darwin", [], False),
    ({}, "win32", [], True),  # torch is asked
])
def test_a_cuda_device_is_ruled_out_without_torch_only_where_none_can_be(tmp_path, environ, platform, nodes, possible):
    (tmp_path / "dev").mkdir()
    for node in nodes:
        (tmp_path / node).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / node).touch()
    assert recording.device_possible(environ, platform, tmp_path) is possible
