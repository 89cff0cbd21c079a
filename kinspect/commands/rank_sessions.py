"""What `open`, `explain` and `export` read when given a folder or several files: the rank
sessions of one torchrun job (`model.rank0.session.json`, ...), merged by the core.

One path that is a file stays one session, as before; a folder means the rank sessions in
it (a rank whose recording was killed has only its `.jsonl` log, which is read instead),
or a distributed job's TORCH_TRACE logs, one per rank (`dedicated_log_torch_trace_rank_N_*`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from kinspect.core.errors import KinspectError
from kinspect.core.ranks.merged import MergedRanks, merge
from kinspect.core.store import load
from kinspect.core.trace.files import output_code_files, ranked, trace_files

RANK_FILE = re.compile(r"\.rank(\d+)\.session\.jsonl?$")


def is_merged(paths: Sequence[str]) -> bool:
    """Several paths, or a folder: the ranks of a job rather than one session (a folder of
    TORCH_TRACE logs that name no ranks, or one, is one program's, and so is a
    TORCH_COMPILE_DEBUG folder of output_code.py modules)."""
    if len(paths) != 1:
        return len(paths) > 1
    folder = Path(paths[0])
    return folder.is_dir() and (len(ranked(folder)) > 1 or not (trace_files(folder) or output_code_files(folder)))


def rank_files(paths: Sequence[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if not p.is_dir():
            out.append(p)
            continue
        found = rank_sessions_in(p) or ranked(p)
        if not found:
            raise KinspectError(f"{p}: holds no rank sessions (MODEL.rankN.session.json, as "
                                "torchrun --nproc-per-node N -m kinspect record model.py writes) "
                                "and no TORCH_TRACE logs")
        out += found
    return out


def rank_sessions_in(folder: Path, model: str | None = None) -> list[Path]:
    """The rank sessions in a folder (only `model`'s, given its stem), by model and rank; a
    rank's session file over the log its recording left."""
    found: dict[tuple[str, int], Path] = {}
    for f in folder.iterdir() if folder.is_dir() else ():
        m = RANK_FILE.search(f.name)
        if m is None or not f.is_file() or (model is not None and f.name[:m.start()] != model):
            continue
        rank = (f.name[:m.start()], int(m.group(1)))
        if rank not in found or f.suffix == ".json":
            found[rank] = f
    return [found[r] for r in sorted(found)]


def load_merged(paths: Sequence[str]) -> MergedRanks:
    files = rank_files(paths)
    return merge([load(f) for f in files], [str(f) for f in files])
