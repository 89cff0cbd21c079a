"""A live compile's session, assembled from what the hooks saw, and its crash-safe log
kept in step with it.

The session is rebuilt after every run: from the capture (symbols, graphs, sites; a
recompile met in the workload adds a graph and its symbols) and from the recorder (the
dispatches, each tied to its call site), with the findings derived afresh. Whatever is new
goes into the log at once, so a recording killed later opens with all the compile knew:
every graph with its wrapper code, every site, the symbols as they stand. The recorder
writes the dispatches themselves, as they happen.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import os
import platform
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kinspect.core.session.compile_changes import CompileChanges
from kinspect.core.quality.findings import derive_findings
from kinspect.core.session.format.log import LiveLog
from kinspect.core.session.model import Environment, Graph, ModelInfo, Session, Site, SymbolInfo
from kinspect.core.session.runtime import Measurement
from kinspect.inductor.hooks import compile_caches
from kinspect.inductor.recording import translate
from kinspect.inductor.hooks.capture import GraphRecord
from kinspect.inductor.hooks.kernels import variant_facts
from kinspect.inductor.launch.modelfile import DynamicDim, ModelFile
from kinspect.inductor.hooks.recorder import Recorder
from kinspect.inductor.launch.torchrun import Rank


def rank_fields(rank: Rank | None) -> dict[str, int | None]:
    """The environment's fields naming this process's place in a torchrun job."""
    if rank is None:
        return {"rank": None, "world_size": None, "local_rank": None}
    return {"rank": rank.rank, "world_size": rank.world_size, "local_rank": rank.local_rank}


def _installed_torch() -> str | None:
    """torch's `__version__` as importing it would give it (`2.11.0+cu130`; the package's
    metadata drops the local part), read from torch/version.py as text, never run."""
    import ast
    import importlib.util
    from importlib import metadata

    with contextlib.suppress(Exception):  # no torch, or a version file of another shape
        spec = importlib.util.find_spec("torch")
        for folder in (spec.submodule_search_locations or []) if spec else []:
            tree = ast.parse((Path(folder) / "version.py").read_text())
            for node in tree.body:
                if (isinstance(node, ast.AnnAssign | ast.Assign) and isinstance(node.value, ast.Constant)
                        and isinstance(node.value.value, str)
                        and any(getattr(t, "id", None) == "__version__"
                                for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))):
                    return node.value.value
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def machine(rank: Rank | None, import_torch: bool = True) -> Environment:
    """This machine as the session states it (versions, the GPU, the rank), whoever compiles;
    without `import_torch`, for a program that never imported it, torch's version as
    installed and no GPU named (importing torch to ask costs seconds)."""
    if not import_torch and "torch" not in sys.modules:
        return Environment(created=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                           torch=_installed_torch(), python=platform.python_version(),
                           platform=platform.platform(terse=True), **rank_fields(rank))
    import torch

    try:
        import triton

        triton_version = triton.__version__
    except ImportError:
        triton_version = None
    return Environment(
        created=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        torch=torch.__version__,
        triton=triton_version,
        python=platform.python_version(),
        gpu=torch.cuda.get_device_name() if torch.cuda.is_available() else None,
        cuda=torch.version.cuda,
        platform=platform.platform(terse=True),
        **rank_fields(rank),
    )


def environment(hints: Sequence[int], *, train: bool, allow_caches: bool, rank: Rank | None,
                changes: CompileChanges = CompileChanges()) -> Environment:
    """This machine and the settings the compile runs under, as the session states them."""
    return dataclasses.replace(machine(rank), config={
        "multi_kernel_hints": list(hints),
        "max_autotune": True,
        "max_autotune_gemm_backends": "TRITON",
        "inductor_caches": compile_caches.described(allow_caches),
        "train": train,
        **changes.config(),
    })


def model_info(mf: ModelFile, hints: Sequence[int]) -> ModelInfo:
    return ModelInfo(path=str(mf.path), name=mf.model_name, hints=tuple(hints),
                     workload=tuple(dict(w) for w in mf.workload))


class WrapperCodes:
    """Each graph's wrapper file, read once (the session is rebuilt after every run);
    None where it cannot be read."""

    def __init__(self) -> None:
        self._codes: dict[str, str | None] = {}

    def __call__(self, g: GraphRecord) -> str | None:
        if g.wrapper_path is None:
            return None
        if g.wrapper_path not in self._codes:
            code = None
            with contextlib.suppress(OSError, UnicodeDecodeError):
                code = Path(g.wrapper_path).read_text()
            self._codes[g.wrapper_path] = code
        return self._codes[g.wrapper_path]


def kernel_facts(recorder: Recorder) -> Callable[[str], list[dict[str, Any]]]:
    """Per site name, its variants' compiled-kernel facts (source, config), read off the
    runtime instance the recorder attached when the wrapper loaded."""

    def facts(site_name: str) -> list[dict[str, Any]]:
        for ls in recorder.sites:
            if ls.name == site_name:
                return variant_facts(ls.call, ls.wrapper_file)
        return []

    return facts


def compile_facts(graphs: Sequence[GraphRecord], *, dyn: Sequence[DynamicDim], input_names: Sequence[str],
                  examples: Mapping[str, int], hints: Sequence[int], code_of: Callable[[GraphRecord], str | None],
                  facts_of: Callable[[str], list[dict[str, Any]]]) -> tuple[list[SymbolInfo], list[Graph], list[Site]]:
    """The session's symbols, graphs and sites from the capture's graph records."""
    codes = [code_of(g) for g in graphs]
    symbols = translate.symbols(graphs, dyn, input_names, examples)
    out_graphs = [translate.graph(g, code, hints) for g, code in zip(graphs, codes)]
    sites = [site for g, code in zip(graphs, codes) for site in translate.sites(g, code, facts_of)]
    return symbols, out_graphs, sites


class SessionLog:
    """The crash-safe log of a recording, written as the session grows: the header
    when opened, then each graph and site once and the symbols whenever they change
    (a reader keeps the last symbols record), the measurements as they are taken.
    `writer` is what the recorder appends the dispatches to."""

    def __init__(self, path: str | os.PathLike[str], session: Session,
                 on_failure: Callable[[str], None] | None = None) -> None:
        self.writer = LiveLog(path, session, on_failure)
        self._symbols: list[SymbolInfo] = []
        self._graphs: set[str] = set()
        self._sites: set[str] = set()

    def sync(self, session: Session) -> None:
        """Append what the log does not hold yet of the session's compile facts."""
        if session.symbols and session.symbols != self._symbols:
            self.writer.symbols(session.symbols)
            self._symbols = list(session.symbols)
        for g in session.graphs:
            if g.name not in self._graphs:
                self.writer.graph(g)
                self._graphs.add(g.name)
        for site in session.sites:  # the runtime_site records are the recorder's to write
            if site.name not in self._sites:
                self.writer.site(site)
                self._sites.add(site.name)

    def measurements(self, measured: Iterable[Measurement]) -> None:
        for m in measured:
            self.writer.measurement(m)

    def close(self) -> None:
        self.writer.close()


def refresh(session: Session, recorder: Recorder, log: SessionLog | None) -> None:
    """After a run or a compile: the events as the recorder holds them, each tied to its
    call site by the wrapper line that ran it, the findings derived afresh, the log in step."""
    lines = {site.name: {c.line: c.index for c in site.call_sites} for site in session.sites}
    session.events = recorder.dispatch_events(call_site=lambda name, line: lines.get(name, {}).get(line))
    session.findings = derive_findings(session)
    if log is not None:
        log.sync(session)


def add_measurements(session: Session, measured: Sequence[Measurement], log: SessionLog | None) -> None:
    """Measurements join the session and, at once, the log."""
    session.measurements += measured
    if log is not None:
        log.measurements(measured)
