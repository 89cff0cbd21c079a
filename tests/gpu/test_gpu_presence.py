"""Deciding without torch that there is no GPU (kinspect/commands/recording.py) must
never rule out one that torch sees, and must agree with torch where it does rule one out."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kinspect.commands import recording


def test_a_gpu_torch_sees_is_never_ruled_out():
    import torch

    assert torch.cuda.is_available()
    assert recording.device_possible(os.environ, sys.platform, Path("/"))
    assert recording.cuda_available()


@pytest.mark.parametrize("visible", ["", "-1", "-1,0"])
def test_where_cuda_visible_devices_hides_every_gpu_torch_sees_none(visible):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=visible)
    seen = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.is_available())"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert seen.stdout.strip() == "False", seen.stderr[-500:]
    assert not recording.device_possible(env, sys.platform, Path("/"))
