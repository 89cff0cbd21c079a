"""What `open`, `explain` and `export` read when given a folder or several files: the rank
sessions of one torchrun job (`model.rank0.session.json`, ...), merged by the core.

One path that is a file stays one session, as before; a folder means the rank sessions in
it (a rank whose recording was killed has only its `.jsonl` log, which is read instead).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from kinspect.core.errors import KinspectError
from kinspect.core.ranks import MergedRanks, merge
from kinspect.core.sessionfile.files import load

RANK_FILE = re.compile(r"\.rank(\d+)\.session\.jsonl?$")


def is_merged(paths: Sequence[str]) -> bool:
    """Several paths, or a folder: the ranks of a job rather than one session."""
    return len(paths) > 1 or (len(paths) == 1 and Path(paths[0]).is_dir())


def rank_files(paths: Sequence[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if not p.is_dir():
            out.append(p)
            continue
        found: dict[str, Path] = {}
        for f in sorted(p.iterdir()):
            if RANK_FILE.search(f.name) and f.is_file():
                stem = f.name[: -len(".jsonl")] if f.name.endswith(".jsonl") else f.name[: -len(".json")]
                if stem not in found or f.suffix == ".json":  # the session file over its log
                    found[stem] = f
        if not found:
            raise KinspectError(f"{p}: holds no rank sessions (MODEL.rankN.session.json, as "
                                "torchrun --nproc-per-node N -m kinspect record model.py writes)")
        out += found.values()
    return out


def load_merged(paths: Sequence[str]) -> MergedRanks:
    files = rank_files(paths)
    return merge([load(f) for f in files], [str(f) for f in files])
