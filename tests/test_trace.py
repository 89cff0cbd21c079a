"""A TORCH_TRACE log read into a session: the compiled code's facts as a recording holds
them, each compile apart, and nothing lost or run when the log is cut short, damaged or
hostile. The fixtures are real CPU traces around the H200 recordings' wrapper code
(scripts/trace_fixture.py)."""

from __future__ import annotations

import gzip
import hashlib
import json
import re

import pytest
from traces import CPU, DDP, MLP, SAMPLES, text_of, trace_against_recording, write_log

from kinspect.core.dispatch.shapes import SymbolShape
from kinspect.core.errors import SessionError
from kinspect.core.session.format.document import session_from_json, session_to_json
from kinspect.core.store import load
from kinspect.core.trace.files import is_trace, read_trace


def test_a_trace_opens_as_the_sites_the_recording_captured():
    trace, recorded = load(MLP), load(SAMPLES / "mlp.session.json")
    assert [s.name for s in trace.sites] == [s.name for s in recorded.sites]
    for mine, theirs in zip(trace.sites, recorded.sites):
        assert mine.keys == theirs.keys
        assert [(v.hint, v.kernel_name, v.source) for v in mine.variants] == \
            [(v.hint, v.kernel_name, v.source) for v in theirs.variants]
        assert [c.module for c in mine.call_sites] == [c.module for c in theirs.call_sites]  # 0 and 2: Sequential's
    (sym,) = trace.symbols
    assert (sym.name, sym.sources, sym.input, sym.dim) == ("s33", ("L['args'][0].size()[0]",), "args[0]", 0)
    assert trace.graphs[0].name == "graph_0 [0/0] (inference)"
    assert trace.graphs[0].parameters["arg0_1"] == "0.weight"
    assert not trace.events and not trace.measurements and trace.truncated is None
    env = trace.environment
    assert env.config["torch_trace"] == MLP.name and env.config["multi_kernel_hints"] == [64, 256, 4096]
    assert env.gpu == "a CUDA GPU of compute capability 9.0 (132 SMs)"  # the kernels' metadata: a trace names none
    assert env.torch.startswith("2.") and env.created.startswith("20")


def test_a_typed_shape_gives_the_key_a_recording_gives():
    trace, recorded = load(MLP), load(SAMPLES / "mlp.session.json")
    for b in (2, 100, 128, 129, 1000, 8192):
        for mine, theirs in zip(trace.sites, recorded.sites):
            key = trace.runtime_key(mine, SymbolShape({"s33": b}))
            assert key == recorded.runtime_key(theirs, SymbolShape({"B": b}))
            assert mine.decide(key).chosen == theirs.decide(key).chosen


def test_the_findings_that_need_no_timing_come_with_the_trace():
    kinds = {f.kind for f in load(MLP).findings}
    assert "identical-variants" in kinds  # multi_kernel_0's hints 256 and 4096 emitted one kernel
    assert not {"slow-pick", "model-disagrees"} & kinds


def test_each_compile_keeps_its_graphs_and_a_recompile_is_a_graph_of_its_own():
    s = load(CPU)
    assert [g.name for g in s.graphs] == ["graph_0 [0/0] (inference)", "graph_1 [1/0] (inference)",
                                         "graph_2 [1/1] (inference)", "graph_3 [2/0] (forward)",
                                         "graph_4 [2/0] (backward)"]
    assert [c.rsplit(":", 1)[0] for c in s.environment.config["trace_compiles"]] == [
        "[0/0] forward (program.py:12)", "[1/0] <lambda> (program.py:16)", "[1/1] <lambda> (program.py:16)",
        "[2/0] forward (program.py:28)"]
    assert not s.sites
    # s27 was made a constant (32) by Dynamo; the trained module's batch is s77 again, from the same source
    assert [(sym.name, sym.sources) for sym in s.symbols] == [("s77", ("L['x'].size()[0]",)),
                                                             ("s97", ("L['a'].size()[0]",))]
    assert s.graphs[3].parameters == {"primals_1": "proj.weight", "primals_2": "proj.bias"}  # a training graph's


def test_each_piece_ddp_split_a_graph_into_names_its_own_parameters():
    for rank in (0, 1):
        trace = load(DDP / f"dedicated_log_torch_trace_rank_{rank}_fixture.log.gz")
        recorded = load(SAMPLES / f"ddp.rank{rank}.session.json")
        assert [[c.module for c in s.call_sites] for s in trace.sites] == [["up"], ["down"]]
        assert [[c.module for c in s.call_sites] for s in recorded.sites] == [["up"], ["down"]]


def test_a_symbol_two_compiles_name_alike_for_other_sources_is_kept_apart(tmp_path):
    text = text_of(MLP)
    other = re.sub(r'"frame_id": 0', '"frame_id": 7', text).replace("L['args'][0].size()[0]", "L['y'].size()[0]")
    s = read_trace(write_log(tmp_path, text + other))
    assert [sym.name for sym in s.symbols] == ["s33", "s33_1"]
    assert [g.name for g in s.graphs] == ["graph_0 [0/0] (inference)", "graph_1 [7/0] (inference)"]
    assert s.sites[2].name == "multi_kernel_0@graph_1" and s.sites[2].symbols == {"s33_1"}
    assert s.runtime_key(s.sites[2], SymbolShape({"s33_1": 5})) == ((4096,), (5, 1024), (4096, 1024), (5, 4096))


def test_a_gzip_of_a_trace_is_the_same_trace(tmp_path):
    gz = tmp_path / "trace.log.gz"
    gz.write_bytes(gzip.compress(MLP.read_bytes()))
    assert is_trace(gz)
    assert session_to_json(load(gz))["sites"] == session_to_json(load(MLP))["sites"]


def test_a_trace_session_saves_and_loads_back(tmp_path):
    from kinspect.core.store import save

    path = tmp_path / "t.session.json"
    save(load(MLP), path)
    again = load(path)
    assert again.graphs[0].parameters == load(MLP).graphs[0].parameters
    assert again.environment.config["torch_trace"] == MLP.name


# ---------------------------------------------------------------- damaged and hostile logs


def test_a_log_cut_anywhere_opens_with_what_it_holds(tmp_path):
    data = MLP.read_bytes()
    whole = load(MLP)
    code_at = data.index(b'{"inductor_output_code"')
    cuts = sorted({*range(0, len(data), len(data) // 40), code_at + 5000, code_at - 1, len(data) - 1})
    for cut in cuts:
        path = tmp_path / "cut.log"
        path.write_bytes(data[:cut])
        try:
            s = read_trace(path)
        except SessionError:
            pytest.fail(f"cut at {cut}")
        if s.sites:
            assert [x.keys for x in s.sites] == [x.keys for x in whole.sites]
        if code_at < cut < code_at + len(whole.graphs[0].wrapper_code):
            assert s.truncated and "cut short" in s.truncated and not s.sites
            assert any("no Inductor output code" in f.message for f in s.findings)


def test_garbage_lines_and_a_damaged_payload_are_said_and_skipped(tmp_path):
    lines = text_of(MLP).split("\n")
    at = next(i for i, line in enumerate(lines) if '"inductor_output_code"' in line)
    lines.insert(3, "\x00\xff not a trace line")
    lines.insert(5, 'V1204 00:00:00.000000 1 x.py:1] {"create_symbol": not json')
    lines[at + 40] = lines[at + 40] + " # changed"  # the payload no longer matches its digest
    s = read_trace(write_log(tmp_path, "\n".join(lines)))
    messages = [f.message for f in s.findings if f.kind == "trace"]
    assert any("2 lines of the log are not trace entries" in m for m in messages)
    assert any("does not match its digest" in m for m in messages)
    assert not s.sites  # a damaged payload is not read as if whole


def hostile_log(tmp_path, code: str, **meta: object) -> str:
    record = {"inductor_output_code": {"filename": "\x1b]0;pwned\x07.py"}, "frame_id": 0, "frame_compile_id": 0,
              **meta, "has_payload": hashlib.md5(code.encode()).hexdigest()}
    head = 'V1204 00:00:00.000000 1 torch/_inductor/graph.py:1] '
    return head + json.dumps(record) + "".join(f"\n\t{line}" for line in code.split("\n")) + "\n"


def test_text_from_a_trace_is_data_never_run(tmp_path):
    marker = tmp_path / "ran"
    code = (text_of(MLP).split('"inductor_output_code"')[1].split("\n", 1)[1].split("\nV")[0]
            .replace("\n\t", "\n").lstrip("\t"))
    code = f"import os; os.system('touch {marker}')\n__import__('os').system('touch {marker}')\n" + code
    code = code.replace("multi_kernel_0", "multi_kernel_0\x1b[31m", 1)
    s = read_trace(write_log(tmp_path, hostile_log(tmp_path, code)))
    assert not marker.exists()
    assert "\x1b" not in s.graphs[0].wrapper_code and "\ufffd" in s.graphs[0].wrapper_code
    assert any("control characters" in f.message for f in s.findings)
    session_from_json(json.loads(json.dumps(session_to_json(s))))  # all of it is what a session file may hold


def test_huge_numbers_and_names_in_a_trace_are_refused_quietly(tmp_path):
    code = "\n".join([
        "arg_index = {", "    0: [slice(0, 2, None), slice(2, 3, None)],", "}",
        "multi_kernel_0 = async_compile.size_hint_multi_kernel('multi_kernel_0', {",
        f"    (({10**40},), (64,)): triton_tem_a,", "}, arg_index=arg_index)",
        "arg_index = {", "    0: [slice(0, 2, None), slice(2, 3, None)],", "}",
        f"{'m' * 300} = async_compile.size_hint_multi_kernel('{'m' * 300}', {{",
        "    ((64,), (64,)): triton_tem_a,", "}, arg_index=arg_index)",
    ])
    log = hostile_log(tmp_path, code, rank=10**30) + ('V1204 00:00:00.000000 1 x.py:1] {"create_symbol": {"symbol": "s0", '
                                                       f'"val": "{"9" * 5000}", "source": "L[\'x\'].size()[0]"}}}}\n')
    s = read_trace(write_log(tmp_path, log))
    assert not s.sites and s.environment.rank is None
    assert s.symbols[0].example is None
    assert any("could not be read" in f.message for f in s.findings)
    assert any("too long" in f.message for f in s.findings)


def test_what_is_no_trace_is_refused_in_one_line(tmp_path, kinspect_cli):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.log").write_text("just a log\n")
    result = kinspect_cli("explain", empty / "notes.log")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    result = kinspect_cli("open", tmp_path / "absent.log.gz")
    assert result.returncode == 2 and result.stderr == f"kinspect: error: {tmp_path / 'absent.log.gz'}: no such file\n"


def test_a_graph_without_a_site_says_why(tmp_path):
    s = load(CPU)
    assert [g.no_site_reason.split(":")[0] for g in s.graphs] == [
        "not autotuned", "not a dynamic size", "not autotuned", "not autotuned", "not autotuned"]
    assert {f.kind for f in s.findings} == {"no-site"}
    text = text_of(CPU).replace('\\"cpp_wrapper\\": false', '\\"cpp_wrapper\\": true')
    assert text != text_of(CPU)
    s = read_trace(write_log(tmp_path, text))
    assert {g.no_site_reason for g in s.graphs} == {"cpp_wrapper picks one kernel at compile time, so there is no "
                                                    "runtime dispatch"}


def test_hints_given_per_compile_are_read_off_the_keys(tmp_path):
    """`kinspect run --hints`, or `torch.compile(options=...)`: the process-wide settings the
    log's metrics copy hold no hints, and say nothing of what the compile ran with."""
    text = text_of(MLP).replace('\\"multi_kernel_hints\\": [64, 256, 4096]', '\\"multi_kernel_hints\\": []')
    assert text != text_of(MLP)
    s = read_trace(write_log(tmp_path, text))
    assert s.model.hints == (64, 256, 4096) and s.environment.config["multi_kernel_hints"] == [64, 256, 4096]
    assert "max_autotune" not in s.environment.config


def test_a_saved_output_code_module_opens_as_one_graph(tmp_path, kinspect_cli):
    path = tmp_path / "output_code.py"
    code = load(SAMPLES / "generate.session.json").graphs[0].wrapper_code
    path.write_text(code)
    s = load(path)
    assert [x.name for x in s.sites] == [f"multi_kernel_{i}" for i in range(code.count("size_hint_multi_kernel("))]
    assert [(sym.name, sym.sources) for sym in s.symbols] == [("s27", ()), ("s52", ())]  # no Dynamo entries name them
    out = kinspect_cli("explain", path, "--shape", "s52=4 s27=100", "--site", "multi_kernel_0")
    assert out.returncode == 0, out.stderr
    assert "▶" in out.stdout and "transformer" not in out.stdout  # no Dynamo graph: no module names
    assert {f.kind for f in s.findings} == {"key-not-true-size", "hint-size-in-kernel", "shared-cache",
                                            "identical-variants"}  # what needs no timing, from the code alone


def test_a_debug_folder_s_output_code_modules_open_as_its_graphs(tmp_path):
    """TORCH_COMPILE_DEBUG=1 writes each graph's module as `output_code.py` in a folder of its own."""
    for i, sample in enumerate(("mlp", "gemm_2d")):
        graph = tmp_path / "torch_compile_debug" / "run_1" / "torchinductor" / f"model__{i}_inference_{i}.{i}"
        graph.mkdir(parents=True)
        (graph / "output_code.py").write_text(load(SAMPLES / f"{sample}.session.json").graphs[0].wrapper_code)
    s = load(tmp_path / "torch_compile_debug")
    assert [g.name for g in s.graphs] == ["graph_0 [model__0_inference_0.0] (inference)",
                                         "graph_1 [model__1_inference_1.1] (inference)"]
    assert [x.name for x in s.sites] == ["multi_kernel_0", "multi_kernel_1", "multi_kernel_0@graph_1"]


@pytest.mark.parametrize("trace, recording", [
    (MLP, SAMPLES / "mlp.session.json"),
    (SAMPLES / "generate.trace.log.gz", SAMPLES / "generate.session.json"),
], ids=["mlp fixture", "generate, recorded on the H200 with its trace"])
def test_the_trace_predicts_every_pick_its_recording_saw(trace, recording):
    """The GPU test's check (tests/gpu/test_gpu_trace.py) on what is committed: the mlp
    fixture holds its recording's output code; samples/generate.trace.log.gz is the trace of
    the run that recorded samples/generate.session.json (scripts/device_session.sh trace)."""
    if not trace.exists():
        pytest.skip(f"{trace.name} is recorded on the GPU by scripts/device_session.sh trace")
    checked, wrong = trace_against_recording(load(trace), load(recording))
    assert wrong == []
    assert checked == len(load(recording).events) > 0


# ---------------------------------------------------------------- an Inductor that evaluates a hint per symbol

def _per_symbol_trace(tmp_path, lowered_at_4096: int, stated: bool = True) -> tuple:
    """samples/generate.trace.log.gz as an Inductor with docs/upstream/hint-per-symbol.patch
    would write it: each multi-kernel's keys made at one size per symbol (B = S = the hint,
    both lowered to `lowered_at_4096` at hint 4096), the payload's digest made anew; with
    `stated`, the compile's settings state the hints (a program that sets them globally:
    the sample's were set per compile, as `kinspect run --hints` does)."""
    stock = load(SAMPLES / "generate.trace.log.gz")
    values = {64: 64, 256: 256, 4096: lowered_at_4096}
    lines = text_of(SAMPLES / "generate.trace.log.gz").split("\n")
    if stated:
        for i, line in enumerate(lines):
            if '"compilation_metrics"' in line and '"inductor_config"' in line:
                record = json.loads(line.split("] ", 1)[1])
                config = json.loads(record["compilation_metrics"]["inductor_config"])
                config["multi_kernel_hints"] = [64, 256, 4096]
                record["compilation_metrics"]["inductor_config"] = json.dumps(config)
                lines[i] = line.split("] ", 1)[0] + "] " + json.dumps(record)
    at = next(i for i, line in enumerate(lines) if '"inductor_output_code"' in line)
    end = next(i for i in range(at + 1, len(lines)) if not lines[i].startswith("\t"))
    code = "\n".join(line[1:] for line in lines[at + 1:end])
    for site in stock.sites:
        name = site.name.split("@")[0]
        start = code.index(f"{name} = async_compile.size_hint_multi_kernel(")
        stop = code.index("}, arg_index", start)
        block = code[start:stop]
        for v in site.variants:
            key = tuple(t.key_at_hint(v.hint, dict.fromkeys(t.symbols, values[v.hint])) for t in site.tensors)
            block = block.replace(f"{v.key}: {v.kernel_name}", f"{key}: {v.kernel_name}")
        code = code[:start] + block + code[stop:]
    head = json.loads(lines[at].split("] ", 1)[1])
    head["has_payload"] = hashlib.md5(code.encode()).hexdigest()
    lines[at] = lines[at].split("] ", 1)[0] + "] " + json.dumps(head)
    lines[at + 1:end] = ["\t" + line for line in code.split("\n")]
    return stock, read_trace(write_log(tmp_path, "\n".join(lines)))


def test_a_trace_from_an_inductor_that_keys_each_hint_per_symbol_reads_its_sites_and_sizes(tmp_path):
    """The keys hold B*S as the kernels compute it (4,096 rows at hint 64, 262,144 at hint
    4096 lowered to 512 each): the sites keep the wrapper's sizes and the compile's hints,
    the graph states each hint's sizes, and no finding calls the sizes inconsistent (read
    by stock's rule, every site was `t1_0` sizes with hints 64, 256 and 512)."""
    stock, per_symbol = _per_symbol_trace(tmp_path, 512)
    assert [s.tensors for s in per_symbol.sites] == [s.tensors for s in stock.sites]
    for site in per_symbol.sites:
        assert [v.hint for v in site.variants] == [64, 256, 4096]
    c_attn = per_symbol.sites[0]
    assert c_attn.variants[0].key[-1] == (4096, 2304) and c_attn.variants[2].key[-1] == (262_144, 2304)
    (graph,) = [g for g in per_symbol.graphs if g.sites]
    assert [(a.hint, sorted(a.values.values()), a.lowered_for) for a in graph.hint_sizes] == [
        (64, [64, 64], None), (256, [256, 256], None), (4096, [512, 512], "lowered from 4096 by this Inductor's own rule")]
    kinds = {f.kind for f in per_symbol.findings}
    assert not kinds & {"hint-size-in-kernel", "key-not-true-size"}
    assert {"hint-size-in-kernel", "key-not-true-size"} <= {f.kind for f in stock.findings}
    assert not stock.graphs[0].hint_sizes


def test_without_stated_hints_per_symbol_keys_give_the_size_their_symbols_hold_as_hint_and_say_so(tmp_path):
    """No hints in the compile's settings (set per compile, as `kinspect run --hints` does):
    a key whose symbols all hold 4096 was made at hint 4096; one lowered to 512 reads as
    hint 512, which nothing in the trace can correct, and the session says how it read them."""
    _, read = _per_symbol_trace(tmp_path / "a", 4096, stated=False)
    assert [v.hint for v in read.sites[0].variants] == [64, 256, 4096]
    assert read.sites[0].variants[2].key[-1] == (4096 * 4096, 2304)
    assert not {"hint-size-in-kernel", "key-not-true-size"} & {f.kind for f in read.findings}
    _, lowered = _per_symbol_trace(tmp_path / "b", 512, stated=False)
    assert [v.hint for v in lowered.sites[0].variants] == [64, 256, 512]
    assert any("the trace states no hints: each variant's hint is read as the size its symbols hold" in f.message
               for f in lowered.findings)
