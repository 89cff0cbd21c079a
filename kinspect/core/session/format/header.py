"""What a session says about itself: where it was recorded and of which model.

Both a session file and a recording log's header hold these two records, so each record's
JSON form and its reading sit side by side here for both to use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kinspect.core.errors import SessionError, echo
from kinspect.core.session.model import READ_VERSIONS, Environment, ModelInfo
from kinspect.core.session.format.checks import (
    MAX_RANKS,
    MAX_TEXT,
    a_list,
    a_number,
    a_scalar_map,
    a_string,
    a_string_or_null,
    an_int,
    an_int_or_null,
    an_object,
    size_maps,
)

MAX_WORKLOAD = 1_000_000


def check_version(d: Mapping[str, Any], fmt: str, versions: tuple[int, ...] = READ_VERSIONS,
                  what: str = "session") -> None:
    """A document of format `fmt` (a `what`) at a version this kinspect reads (`versions`)."""
    if d.get("format") != fmt:
        raise SessionError(f"not a kinspect session: missing \"format\": \"{fmt}\"")
    version = d.get("version")
    if version is None:
        raise SessionError(f"{what} has no \"version\"")
    if type(version) is not int or version not in versions:  # true and 1.0 equal 1 in Python
        known = " and ".join(map(str, versions))
        raise SessionError(f"{what} format version {echo(version)} is not supported "
                           f"(this kinspect reads version{'s' if len(versions) > 1 else ''} {known})")


def environment_to_json(e: Environment) -> dict[str, Any]:
    return {
        "created": e.created, "torch": e.torch, "triton": e.triton, "python": e.python,
        "gpu": e.gpu, "cuda": e.cuda, "platform": e.platform,
        "config": dict(e.config), "peaks": dict(e.peaks),
        "rank": e.rank, "world_size": e.world_size, "local_rank": e.local_rank,
    }


def environment_from_json(d: Any) -> Environment:
    d = an_object(d, "environment")
    peaks = {
        a_string(k, "environment.peaks key"): a_number(v, f"environment.peaks.{k}")
        for k, v in an_object(d.get("peaks", {}), "environment.peaks").items()
    }
    rank = an_int_or_null(d.get("rank"), "environment.rank", 0, MAX_RANKS - 1)
    world_size = an_int_or_null(d.get("world_size"), "environment.world_size", 1, MAX_RANKS)
    if rank is not None and world_size is not None and rank >= world_size:
        raise SessionError(f"environment.rank: rank {rank} of a job of {world_size} (ranks run 0 to {world_size - 1})")
    return Environment(
        created=a_string(d.get("created"), "environment.created"),
        torch=a_string_or_null(d.get("torch"), "environment.torch"),
        triton=a_string_or_null(d.get("triton"), "environment.triton"),
        python=a_string_or_null(d.get("python"), "environment.python"),
        gpu=a_string_or_null(d.get("gpu"), "environment.gpu"),
        cuda=a_string_or_null(d.get("cuda"), "environment.cuda"),
        platform=a_string_or_null(d.get("platform"), "environment.platform"),
        config=a_scalar_map(d.get("config", {}), "environment.config"),
        peaks=peaks,
        rank=rank,
        world_size=world_size,
        local_rank=an_int_or_null(d.get("local_rank"), "environment.local_rank", 0, MAX_RANKS - 1),
    )


def model_to_json(m: ModelInfo) -> dict[str, Any]:
    return {"path": m.path, "name": m.name, "hints": list(m.hints), "workload": [dict(w) for w in m.workload]}


def model_from_json(d: Any) -> ModelInfo:
    d = an_object(d if d is not None else {}, "model")
    workload = size_maps(d.get("workload", []), "model.workload", MAX_WORKLOAD)
    return ModelInfo(
        path=a_string_or_null(d.get("path"), "model.path", MAX_TEXT),
        name=a_string_or_null(d.get("name"), "model.name"),
        hints=tuple(an_int(h, f"model.hints[{i}]") for i, h in enumerate(a_list(d.get("hints", []), "model.hints", 256))),
        workload=tuple(workload),
    )
