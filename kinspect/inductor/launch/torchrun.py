"""Recording as one rank of a torchrun job.

torchrun starts one `kinspect record` per rank and tells each who it is in its
environment (RANK, WORLD_SIZE, LOCAL_RANK, and the rendezvous in MASTER_ADDR and
MASTER_PORT). kinspect launches nothing itself: it reads those, pins the rank's CUDA
device (LOCAL_RANK) before anything touches CUDA, and joins the process group before the
model file is imported, so a model file can wrap its module in DistributedDataParallel at
import time and read its rank (`torch.distributed.get_rank()`) to build per-rank inputs
or a per-rank workload.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from kinspect.core.errors import KinspectError, echo

VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK")


@dataclass(frozen=True)
class Rank:
    rank: int
    world_size: int
    local_rank: int


def from_environment(environ: Mapping[str, str] | None = None) -> Rank | None:
    """The rank torchrun gave this process; None outside torchrun (no RANK). One line naming
    the variable when torchrun's environment is incomplete or not integers."""
    env = os.environ if environ is None else environ
    if "RANK" not in env:
        return None
    values = {}
    for name in VARIABLES:
        text = env.get(name)
        if text is None:
            raise KinspectError(f"RANK is set but {name} is not: run kinspect record under torchrun, which sets both")
        try:
            values[name] = int(text)
        except ValueError:
            raise KinspectError(f"{name} must be an integer, got {echo(text)}") from None
    rank, world, local = values["RANK"], values["WORLD_SIZE"], values["LOCAL_RANK"]
    if world < 1 or not 0 <= rank < world or local < 0:
        raise KinspectError(f"RANK={rank}, WORLD_SIZE={world}, LOCAL_RANK={local} do not describe a rank of a job")
    return Rank(rank, world, local)


def join(rank: Rank) -> None:
    """Pin this rank's GPU and join the job's process group (NCCL for CUDA tensors, gloo for
    CPU ones), unless the process already joined one."""
    import torch
    import torch.distributed as dist

    if torch.cuda.is_available():
        count = torch.cuda.device_count()
        if rank.local_rank >= count:
            raise KinspectError(f"LOCAL_RANK={rank.local_rank} but this host has {count} CUDA device"
                                f"{'s' if count != 1 else ''}: run at most {count} ranks per host")
        torch.cuda.set_device(rank.local_rank)
    if dist.is_initialized():
        return
    backend = "cpu:gloo,cuda:nccl" if torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend, rank=rank.rank, world_size=rank.world_size)


def leave() -> None:
    """Leave the process group this process joined (NCCL warns at exit otherwise)."""
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()

