"""Build the TORCH_TRACE fixtures the CPU tests open: a real trace's framing around a
recorded sample's real wrapper code.

A CPU cannot compile Triton GEMM templates, so no CPU run writes a size-hint multi-kernel
into its trace. This script runs the sample's model on the CPU under `TORCH_TRACE` (the
same module, compiled the way the recording compiled it, so Dynamo's entries name the same
symbols, sources and parameters), then puts the H200 recording's wrapper code
(`graphs[i].wrapper_code` of samples/NAME.session.json) in place of each
`inductor_output_code` payload, with the payload's digest made again. Every other line is
the CPU trace's own.

    python scripts/trace_fixture.py            # every fixture, into tests/fixtures/traces/
    python scripts/trace_fixture.py mlp        # one
    python scripts/trace_fixture.py --pack DIR OUT.log.gz [MB]   # a GPU run's trace folder as one gzip
                                               # (scripts/device_session.sh trace; under MB, 15 by default)

mlp: samples/mlp.py, one process. ddp: the MLP of samples/ddp.py in DistributedDataParallel,
two ranks on gloo (torchrun), one log per rank, each gzipped, each rank's output code from
samples/ddp.rankN.session.json. cpu: a CPU compile's own trace, nothing replaced (its GEMMs
are extern kernels: what a trace without a multi-kernel looks like; a recompile, a trained
module's forward and backward), gzipped. Needs torch
(scripts/test's .venv has it); takes a minute or two.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "traces"
CODE_ENTRY = re.compile(r'^\S+ \S+ +\d+ [^\]]*\] \{"inductor_output_code": ')

MLP = textwrap.dedent('''
    import runpy, torch
    model = runpy.run_path(sys.argv[1], run_name="sample")["model"]
    torch._inductor.config.multi_kernel_hints = [64, 256, 4096]

    def entry(*args):  # as kinspect's recording compiles a model file's model (fresh_entry)
        return model(*args)

    compiled = torch.compile(entry)
    with torch.no_grad():
        for b in (100, 300):
            x = torch.randn(b, 1024, dtype=torch.bfloat16)
            torch._dynamo.mark_dynamic(x, 0)
            compiled(x)
''')

DDP = textwrap.dedent('''
    import runpy, torch, torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    sample = runpy.run_path(sys.argv[1], run_name="sample")  # its MLP, before the group is joined: on the CPU
    dist.init_process_group("gloo")
    torch._inductor.config.multi_kernel_hints = [64, 256, 4096]
    model = torch.compile(DistributedDataParallel(sample["net"]))
    with torch.no_grad():
        for b in ((100, 300) if dist.get_rank() == 0 else (300, 1000)):
            x = torch.randn(b, 1024, dtype=torch.bfloat16)
            torch._dynamo.mark_dynamic(x, 0)
            model(x)
    dist.destroy_process_group()
''')

CPU = textwrap.dedent('''
    import torch
    torch._inductor.config.multi_kernel_hints = [64, 256, 4096]

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(32, 64)
            self.fc2 = torch.nn.Linear(64, 16)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))

    mlp = torch.compile(MLP(), dynamic=True)
    matmul = torch.compile(lambda a, b: a @ b)  # static, then recompiled dynamic for a new size
    with torch.no_grad():
        for b in (3, 5, 9):
            mlp(torch.randn(b, 32))
        matmul(torch.randn(4, 8), torch.randn(8, 4))
        matmul(torch.randn(6, 8), torch.randn(8, 4))

    class Head(torch.nn.Module):  # trained: a forward and a backward graph
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(16, 8)

        def forward(self, x):
            return self.proj(x)

    head = torch.compile(Head(), dynamic=True)
    for b in (3, 5):
        head(torch.randn(b, 16)).sum().backward()
''')


def spliced(log: str, codes: list[str]) -> str:
    """The log with its output-code payloads replaced by `codes`, in order."""
    lines = log.split("\n")
    out: list[str] = []
    i = n = 0
    while i < len(lines):
        line = lines[i]
        if not CODE_ENTRY.match(line):
            out.append(line)
            i += 1
            continue
        if n >= len(codes):
            raise SystemExit(f"the CPU trace has more output code than the sample ({len(codes)} graphs)")
        record = json.loads(line[line.index("] {") + 2:])
        record["has_payload"] = hashlib.md5(codes[n].encode()).hexdigest()
        out.append(line[:line.index("] {") + 2] + json.dumps(record))
        out += ["\t" + part for part in codes[n].split("\n")]
        n += 1
        i += 1
        while i < len(lines) and lines[i].startswith("\t"):
            i += 1
    if n != len(codes):
        raise SystemExit(f"the CPU trace has {n} output codes, the sample {len(codes)} graphs")
    return "\n".join(out)


def wrapper_codes(session: Path) -> list[str]:
    return [g["wrapper_code"] for g in json.loads(session.read_text())["graphs"]]


def traced(program: str, args: list[str], ranks: int = 0) -> list[Path]:
    """Run `program` on the CPU under TORCH_TRACE; its logs, rank by rank."""
    folder = Path(tempfile.mkdtemp(prefix="kinspect-trace-"))
    script = folder / "program.py"
    script.write_text("import sys\n" + program)
    env = {**os.environ, "TORCH_TRACE": str(folder / "trace"), "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1",
           "CUDA_VISIBLE_DEVICES": ""}
    command = [sys.executable, str(script), *args]
    if ranks:
        command = [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={ranks}", str(script), *args]
    subprocess.run(command, check=True, env=env, cwd=folder)
    logs = sorted((folder / "trace").glob("dedicated_log_torch_trace_*.log"))
    if len(logs) != max(ranks, 1):
        raise SystemExit(f"expected {max(ranks, 1)} trace logs, got {[p.name for p in logs]}")
    return logs


def mlp() -> None:
    (log,) = traced(MLP, [str(ROOT / "samples" / "mlp.py")])
    out = OUT / "mlp" / "dedicated_log_torch_trace_fixture.log"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(spliced(log.read_text(), wrapper_codes(ROOT / "samples" / "mlp.session.json")))
    print(f"wrote {out.relative_to(ROOT)} ({out.stat().st_size:,} bytes)")


def ddp() -> None:
    logs = traced(DDP, [str(ROOT / "samples" / "ddp.py")], ranks=2)
    for rank, log in enumerate(logs):
        assert f"rank_{rank}_" in log.name, log.name
        text = spliced(log.read_text(), wrapper_codes(ROOT / "samples" / f"ddp.rank{rank}.session.json"))
        out = OUT / "ddp" / f"dedicated_log_torch_trace_rank_{rank}_fixture.log.gz"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(gzip.compress(text.encode(), mtime=0))
        print(f"wrote {out.relative_to(ROOT)} ({out.stat().st_size:,} bytes)")


def cpu() -> None:
    """A CPU compile's own trace, untouched: GEMMs as extern kernels, a recompile."""
    (log,) = traced(CPU, [])
    out = OUT / "cpu" / "dedicated_log_torch_trace_fixture.log.gz"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(gzip.compress(log.read_bytes(), mtime=0))
    print(f"wrote {out.relative_to(ROOT)} ({out.stat().st_size:,} bytes)")


FIXTURES = {"mlp": mlp, "ddp": ddp, "cpu": cpu}

DROPPABLE = re.compile(rb'^\S+ \S+ +\d+ [^\]]*\] \{"(chromium_event|describe_tensor|describe_storage|describe_source|'
                       rb'guard_added_fast|dynamo_cpp_guards_str|artifact)"')


def pack(folder: Path, out: Path, limit_mb: float) -> None:
    """A trace folder (TORCH_TRACE=folder) as one gzip file of its log that holds Inductor's
    output code (a run's autotune processes write logs of their own); over `limit_mb`, the
    entries kinspect does not read (chromium events, tensor descriptions, guards, artifacts)
    are left out, whole, payloads included, and the line saying so is printed."""
    logs = [p for p in folder.glob("dedicated_log_torch_trace_*.log") if b'{"inductor_output_code"' in p.read_bytes()]
    if not logs:
        raise SystemExit(f"{folder}: no trace log holds Inductor output code")
    log = max(logs, key=lambda p: p.stat().st_size)
    data = log.read_bytes()
    packed = gzip.compress(data, 9, mtime=0)
    if len(packed) > limit_mb * 2**20:
        kept, skipping = [], False
        for line in data.split(b"\n"):
            if not line.startswith(b"\t"):
                skipping = bool(DROPPABLE.match(line))
            if not skipping:
                kept.append(line)
        packed = gzip.compress(b"\n".join(kept), 9, mtime=0)
        print(f"{log.name}: entries kinspect does not read left out, {len(data):,} bytes to {sum(map(len, kept)):,}")
    out.write_bytes(packed)
    print(f"wrote {out} ({len(packed):,} bytes gzipped) from {log.name}; {len(logs)} of "
          f"{len(list(folder.glob('*.log')))} logs hold output code")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--pack"]:
        pack(Path(sys.argv[2]), Path(sys.argv[3]), float(sys.argv[4]) if len(sys.argv) > 4 else 15)
    else:
        for name in sys.argv[1:] or list(FIXTURES):
            FIXTURES[name]()
