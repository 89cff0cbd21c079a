"""The TORCH_TRACE fixtures (made by scripts/trace_fixture.py) and ways to damage a copy."""

from __future__ import annotations

import gzip
from pathlib import Path

TRACES = Path(__file__).resolve().parent / "fixtures" / "traces"
SAMPLES = Path(__file__).resolve().parent.parent / "samples"
MLP = TRACES / "mlp" / "dedicated_log_torch_trace_fixture.log"
"""samples/mlp.py compiled on the CPU, its output code the H200 recording's: two sites."""
DDP = TRACES / "ddp"
"""samples/ddp.py's MLP in DDP on two gloo ranks, each rank's output code its H200 recording's."""
CPU = TRACES / "cpu" / "dedicated_log_torch_trace_fixture.log.gz"
"""A CPU compile's own trace: extern GEMMs, no multi-kernel, a recompile."""


def text_of(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode()


def write_log(folder: Path, text: str, name: str = "dedicated_log_torch_trace_x.log") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    return path


def matched_sites(trace, recording) -> tuple[dict, list[str]]:
    """Each recorded site's site in the trace (in the trace's graph whose output code is the
    recording graph's, by Inductor's name), and each way the two differ."""
    wrong: list[str] = []
    graphs = {g.wrapper_code: g.name for g in trace.graphs if g.wrapper_code}
    sites = {}
    for g in recording.graphs:
        name = graphs.get(g.wrapper_code)
        if name is None:
            wrong.append(f"{g.name}: no graph of the trace holds its output code")
            continue
        for site_name in g.sites:
            site = recording.site(site_name)
            mine = next((s for s in trace.sites if s.graph == name and s.name.split("@")[0] == site_name.split("@")[0]),
                        None)
            if mine is None:
                wrong.append(f"{site_name}: not in the trace's {name}")
                continue
            theirs = [(v.key, v.kernel_name, v.hint) for v in site.variants]
            if [(v.key, v.kernel_name, v.hint) for v in mine.variants] != theirs:
                wrong.append(f"{site_name}: the trace's variants differ from the recording's")
            sites[site_name] = mine
    return sites, wrong


def trace_against_recording(trace, recording) -> tuple[int, list[str]]:
    """Every dispatch a recording saw, decided on the trace's site for that multi-kernel:
    how many were checked, and each way the two differ (sites, keys, kernels, hints, picks)."""
    sites, wrong = matched_sites(trace, recording)
    checked = 0
    for e in recording.events:
        mine = sites.get(e.site)
        if mine is None or e.override is not None:
            continue
        checked += 1
        if mine.decide(e.key).chosen != e.picked:
            wrong.append(f"event {e.seq}: {e.site} ran v{e.picked} at {e.key}, the trace predicts "
                         f"v{mine.decide(e.key).chosen}")
    return checked, wrong
