"""A model file's recording, and what the commands that run a model do without CUDA.

`kinspect model.py`, `kinspect explain model.py` and `kinspect record model.py` share
this: the model file is checked first on any machine (a syntax error is a syntax error
with or without a GPU), and without CUDA the user is told which recording of it exists
(`model.session.json`, or the `.jsonl` log a killed recording leaves), never a file
name that is not there.
"""

from __future__ import annotations

from pathlib import Path

RECORDING_SUFFIX = ".session.json"


def recording_path(model: Path) -> Path:
    """Where `kinspect record` saves a model's session."""
    return model.with_name(model.stem + RECORDING_SUFFIX)


def rank_path(path: Path, rank: int) -> Path:
    """Where one rank of a torchrun job saves: the rank before `.session.json` (or before
    the file's last suffix), so `model.session.json` becomes `model.rank0.session.json`."""
    name = path.name
    if name.endswith(RECORDING_SUFFIX):
        return path.with_name(f"{name[:-len(RECORDING_SUFFIX)]}.rank{rank}{RECORDING_SUFFIX}")
    if path.suffix:
        return path.with_name(f"{path.stem}.rank{rank}{path.suffix}")
    return path.with_name(f"{name}.rank{rank}")


def existing_recording(model: Path) -> Path | None:
    """The recording beside a model: its session file, else the log a killed run left."""
    recording = recording_path(model)
    for candidate in (recording, recording.with_suffix(".jsonl")):
        if candidate.is_file():
            return candidate
    return None


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def no_cuda(model: Path, what: str, instead: str = "kinspect open") -> str:
    """One line: `what` needs CUDA; open the recording that exists, or make one."""
    head = f"{model}: {what} needs a CUDA GPU and none is available here"
    found = existing_recording(model)
    if found is not None:
        return f"{head}; its recording opens anywhere: {instead} {found}"
    return f"{head}, and it has no recording beside it: record one on a GPU machine with kinspect record {model}"
