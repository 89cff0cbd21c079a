"""A model file's recording, and what the commands that run a model do without CUDA.

`kinspect model.py`, `kinspect explain model.py` and `kinspect record model.py` share
this: the model file is checked first on any machine (a syntax error is a syntax error
with or without a GPU), and without CUDA the user is told which recording of it exists
(`model.session.json`, or the `.jsonl` log a killed recording leaves), never a file
name that is not there. A recording needs none of the model's libraries: where one the
file imports is not installed (`transformers` for samples/gpt2.py), the recording opens
with a quiet note saying so, not the file's import error.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

import kinspect
from kinspect.commands.rank_sessions import rank_sessions_in
from kinspect.core.errors import KinspectError
from kinspect.core.ranks.merged import MergedRanks
from kinspect.core.session.model import Session
from kinspect.core.source import RecordedSource
from kinspect.core.store import recording_path

def existing_recording(model: Path) -> Path | None:
    """The recording beside a model: its session file, else the log a killed run left."""
    recording = recording_path(model)
    for candidate in (recording, recording.with_suffix(".jsonl")):
        if candidate.is_file():
            return candidate
    return None


def recording_of(model: Path, session: Session, found: Path | str) -> Session:
    """`session`, the recording found beside `model`, refused in one line where it records
    another program (a file copied or renamed beside it), never explained as this one's."""
    recorded = session.model.path
    if recorded and Path(recorded).name != model.name:
        raise KinspectError(f"{found} is a recording of {Path(recorded).name}, not of {model.name}: open it with "
                            f"kinspect open {found}, or record {model.name} on a GPU machine (kinspect record {model})")
    return session


def cuda_available() -> bool:
    """Whether a model can run live here. Where no CUDA device can be present this is
    known without importing torch, which takes about 1.7 s before the first screen."""
    if not device_possible(os.environ, sys.platform, Path("/")):
        return False
    import torch

    return torch.cuda.is_available()


_DEVICE_NODES = ("nvidia", "nvhost", "nvmap", "dxg", "kfd")
"""Names in /dev of the kernel drivers a GPU torch can use: NVIDIA's (nvidiactl,
nvidia0, ... and, on Jetson, nvhost-*, nvmap), WSL2's GPU paravirtualisation (dxg) and
ROCm's (kfd, which torch.cuda also answers for)."""


def device_possible(environ: Mapping[str, str], platform: str, root: Path) -> bool:
    """False only where torch.cuda.is_available() is sure to be False.

    CUDA_VISIBLE_DEVICES set empty, or to a list starting with -1, hides every device.
    macOS has no CUDA. On Linux a device needs its kernel driver: NVIDIA's module shows
    /proc/driver/nvidia once loaded (before its /dev nodes exist) and /dev/nvidia*
    after, and container runtimes mount those into a GPU container; without any of
    them, or the WSL2, Jetson and ROCm nodes, no device can be opened. Anywhere else
    torch is asked.
    """
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.split(",")[0].strip() in ("", "-1"):
        return False
    if platform == "darwin":
        return False
    if not platform.startswith("linux"):
        return True
    if (root / "proc" / "driver" / "nvidia").exists():
        return True
    try:
        names = os.listdir(root / "dev")
    except OSError:
        return True
    return any(name.startswith(_DEVICE_NODES) for name in names)


def missing_libraries(model: Path) -> str | None:
    """A quiet note naming the modules the model file imports that are not installed
    here, or None. Reads the file's imports; imports nothing."""
    from kinspect.inductor import missing_imports

    missing = missing_imports(model)
    if not missing:
        return None
    return f"{model.name} runs live only with {' and '.join(missing)} installed (not here); its recording needs none of it"


def needs_gpu_first(model: str | Path, what: str) -> None:
    """Without CUDA, a model file that cannot load here (a library it imports is missing) is
    refused by the GPU's line, naming its recording, before its import error: the GPU is
    what it lacks first. One that loads is checked first, as on a GPU machine."""
    from kinspect.inductor import missing_imports

    path = Path(model)
    if path.suffix == ".py" and path.is_file() and missing_imports(path) and not cuda_available():
        raise KinspectError(no_cuda(path, what))


def no_cuda(model: Path, what: str, instead: str = "kinspect open") -> str:
    """One line: `what` needs CUDA; open the recording that exists, or make one."""
    head = f"{model}: {what} needs a CUDA GPU and none is available here"
    from kinspect.inductor import missing_imports

    missing = missing_imports(model)
    if missing:
        head += f", and it needs {' and '.join(missing)}, not installed here"
    found = existing_recording(model)
    if found is not None:
        return f"{head}; its recording opens anywhere: {instead} {found}"
    ranks = rank_sessions_in(model.parent, model.stem)
    if ranks:
        return f"{head}; its ranks' recordings open anywhere: {instead} {' '.join(map(str, ranks))}"
    return f"{head}, and it has no recording beside it: record one on a GPU machine with kinspect record {model}"


_CHECK = """
import os
import sys
from kinspect.commands.model_output import model_output
from kinspect.core.errors import KinspectError
from kinspect.inductor import check_model_file
try:
    with model_output(os.path.basename(sys.argv[1])):
        check_model_file(sys.argv[1])
except KinspectError as e:
    sys.stderr.write(str(e) + "\\n")
    sys.exit(3)
"""


def check_model_file(model: Path, cancel: threading.Event) -> None:
    """Load `model` and probe its builder as `kinspect model.py` does on a GPU, in a
    process of its own, and raise its one-line error. Its own process: importing torch there leaves this one's
    GIL to the inspector drawing the recording, and what the file prints cannot reach
    the screen (and only `model_output.KEEP` bytes from each end of it come back here). Returns early, checking nothing more, once `cancel` is set."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(kinspect.__file__).resolve().parents[1]), *filter(None, [os.environ.get("PYTHONPATH")])]))
    proc = subprocess.Popen([sys.executable, "-c", _CHECK, str(model)], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while True:
        try:
            err = proc.communicate(timeout=0.1)[1]
            break
        except subprocess.TimeoutExpired:
            if cancel.is_set():
                proc.kill()
                proc.communicate()
                return
    if proc.returncode == 3:
        raise KinspectError(err.strip().splitlines()[-1])
    if proc.returncode < 0:
        raise KinspectError(f"{model.name}: loading it killed its process ({signal_name(-proc.returncode)})")
    if proc.returncode != 0:
        last = err.strip().splitlines()[-1] if err.strip() else f"exit status {proc.returncode}"
        raise KinspectError(f"{model.name}: loading it failed: {last}")


def signal_name(number: int) -> str:
    """`SIGKILL` for 9; a signal Python has no name for (a real-time one, 40) by number."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class ModelRecording(RecordedSource):
    """A model's recording opened where the model cannot run: on screen at once, while
    the model file is checked in the background (`check`). A file whose libraries are
    missing here is not checked: it cannot load, and the banner says why, quietly."""

    def __init__(self, model: Path, session: Session, path: Path, ranks: MergedRanks | None = None) -> None:
        super().__init__(session, path, ranks)
        self.model_file = model
        self.missing = missing_libraries(model)

    def banner(self) -> str:
        text = super().banner()
        return text if self.missing is None else f"{text} · {self.missing}"

    def check(self, cancel: threading.Event) -> None:
        if self.missing is None:
            check_model_file(self.model_file, cancel)
