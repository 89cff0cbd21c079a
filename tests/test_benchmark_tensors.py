"""Inductor's benchmark tensors at a size hint, on the CPU: the fit rule on the IR's
expressions, and Inductor's real `AlgorithmSelectorCache.get_inputs` /
`benchmark_example_value` (and `TensorMeta`) driven on layouts with a sympy symbol, checked
and fitted by kinspect's hooks; the findings, reproducer and report they give."""

from __future__ import annotations

import ast
from types import SimpleNamespace

import pytest

from kinspect.core.quality import benchmark_tensors as rule
from kinspect.core.session.compile_changes import PATCH_KEY

BMM_Q = rule.Layout(("8", "s63", "128"), ("128*s63", "128", "1"))
"""q of `torch.bmm(q, k.transpose(1, 2))`, q and k (8, S, 128), S dynamic (the H200's crash)."""


def test_the_bmm_at_hint_4096_reads_past_the_tensor_inductor_built():
    # What Inductor built on the H200 (hint-benchmark-tensors.md): stride 4096, 552,960 elements.
    given = rule.Concrete((8, 4096, 128), (4096, 128, 1), 0, 552_960)
    m = rule.check("arg0_1", BMM_Q, 4096, (8, 4096, 128), given, rule.Concrete((8, 4096, 128), (4096, 128, 1), 0, 0))
    assert m is not None and m.short
    assert m.needed == rule.Concrete((8, 4096, 128), (524_288, 128, 1), 0, 4_194_304)
    assert [(r.where, r.expr, r.given, r.at_hint) for r in m.replaced] == [("stride[0]", "128*s63", 4096, 524_288)]
    text = rule.message(m, "bmm", "a (arg0_1)", {"s63": "S"})
    assert text.startswith("at hint 4096, bmm's a (arg0_1) was autotuned on a tensor of shape (8, 4096, 128), "
                           "stride (4096, 128, 1) (552,960 elements of storage) where the kernel reads shape "
                           "(8, 4096, 128), stride (524288, 128, 1) (4,194,304 elements)")
    assert "stride[0] 128*S: given 4,096, 524,288 at S=4096" in text and "reads past the tensor" in text


def test_a_constant_stride_fits_and_the_subprocess_example_size_does_not():
    vit = rule.Layout(("s0", "197", "192"), ("37824", "192", "1"))
    built = rule.Concrete((4096, 197, 192), (37824, 192, 1), 0, 4096 * 37824)
    assert rule.check("arg0_1", vit, 4096, (4096, 197, 192), built, built) is None
    # The autotune subprocess built it at the example size (B=8) whatever the hint.
    example = rule.Concrete((8, 197, 192), (37824, 192, 1), 0, 8 * 37824)
    m = rule.check("arg0_1", vit, 4096, (4096, 197, 192), example, example, "subprocess")
    assert m is not None and m.short and m.replaced[0].where == "size[0]"
    assert "ignoring the hint" in rule.message(m, "addmm", "x", {"s0": "B"})
    small = rule.check("arg0_1", vit, 4, (4, 197, 192), example, example, "subprocess")
    assert small is not None and not small.short
    assert "timed at another size than the hint's" in rule.message(small, "addmm", "x", {})


GPT2_X = rule.Layout(("s27*s52", "768"), ("768", "1"))
"""GPT-2's c_attn input: the (B, S, 768) activations as (B*S, 768) rows, B and S dynamic."""


def test_rows_that_are_a_product_of_symbols_reach_whole_tile_groups_past_the_grid():
    # samples/generate.py on the H200: at hint 64 the kernel got ks0=ks1=64 (M=4,096 inside it)
    # and a grid and tensors of 64 rows; its GROUP_M reordering put tiles on rows past 64 and faulted.
    built = rule.Concrete((64, 768), (768, 1), 0, 64 * 768)
    m = rule.check("buf3", GPT2_X, 64, (64, 768), built, built)
    assert m is not None and m.short
    assert m.needed == rule.Concrete((2048, 768), (768, 1), 0, 2048 * 768)
    assert "size[0] S*B: built 64, the kernel covers 2,048 at hint 64" in rule.message(
        m, "addmm", "x", {"s27": "S", "s52": "B"})
    # Storage for whole tile groups fits; so do 4096 rows at hint 4096, whole groups already.
    roomy = rule.Concrete((64, 768), (768, 1), 0, 2048 * 768)
    assert rule.check("buf3", GPT2_X, 64, (64, 768), roomy, built) is None
    full = rule.Concrete((4096, 768), (768, 1), 0, 4096 * 768)
    assert rule.check("buf3", GPT2_X, 4096, (4096, 768), full, full) is None
    # One symbol: the kernel's rows are the grid's, nothing is padded.
    single = rule.Layout(("s0", "768"), ("768", "1"))
    assert rule.check("x", single, 64, (64, 768), built, built) is None


@pytest.mark.parametrize("patched", [True, False])
def test_the_patch_is_named_wherever_a_session_shows(patched, tmp_path, capsys):
    """The banner, the Markdown report and explain of a session made with the fit say so."""
    from dataclasses import replace

    from synthetic import synthetic_session

    from kinspect import cli
    from kinspect.core.export import report_md
    from kinspect.core.source import RecordedSource
    from kinspect.core.store import save

    s = synthetic_session(sites=1, measured=False)
    if patched:
        s.environment = replace(s.environment, config={**s.environment.config, PATCH_KEY: True})
    path = tmp_path / "s.session.json"
    save(s, path)
    assert cli.main(["explain", str(path)]) == 0
    said = capsys.readouterr().out
    shown = [RecordedSource(s, path).banner(), report_md.render(s), said]
    assert [("patched by kinspect" in text) for text in shown] == [patched] * 3


# ---------------------------------------------------------------- Inductor's own code

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def graph():
    """A real GraphLowering with one backed symbol (S, example 100) as V.graph."""
    import torch.fx
    from torch._dynamo.source import ConstantSource
    from torch._inductor.graph import GraphLowering
    from torch._inductor.virtualized import V
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    env = ShapeEnv()
    s = env.create_symbol(100, ConstantSource("S"))
    fx = torch.fx.Graph()
    fx.output(None)
    g = GraphLowering(torch.fx.GraphModule({}, fx), shape_env=env)
    with V.set_graph_handler(g):
        yield SimpleNamespace(graph=g, s=s)


def _bmm_nodes(s):
    from torch._inductor import ir

    cpu, bf = torch.device("cpu"), torch.bfloat16
    q = ir.Buffer(name="q", layout=ir.FixedLayout(cpu, bf, [8, s, 128], [128 * s, 128, 1]))
    k = ir.Buffer(name="k", layout=ir.FixedLayout(cpu, bf, [8, s, 128], [128 * s, 128, 1]))
    kt = ir.ReinterpretView(data=k, layout=ir.FixedLayout(cpu, bf, [8, 128, s], [128 * s, 1, 128]))
    out = ir.FixedLayout(cpu, bf, [8, s, s], [s * s, s, 1])
    return [q, kt], out


def _storage(t) -> int:
    return t.untyped_storage().nbytes() // t.element_size() - t.storage_offset()


@pytest.mark.parametrize("fit", [False, True], ids=["checked", "fitted"])
def test_inductors_own_benchmark_tensors_for_the_bmm_are_checked_and_fitted(graph, fit):
    from torch._inductor.select_algorithm import AlgorithmSelectorCache

    from kinspect.inductor.hooks import benchmark_tensors

    inputs, out = _bmm_nodes(graph.s)
    seen = []
    with benchmark_tensors.watching(seen.append, fit=fit):
        args = AlgorithmSelectorCache.get_inputs([], inputs, out, None, hint_override=4096)
    tensors = [*args.triton.input_tensors, args.triton.output_tensor]
    assert [tuple(t.shape) for t in tensors] == [(8, 4096, 128), (8, 4096, 128), (8, 4096, 4096)]
    assert [t.stride() for t in tensors] == [(4096, 128, 1), (4096, 128, 1), (4096, 4096, 1)]  # Inductor's own
    assert [_storage(t) for t in tensors] == ([4_194_304, 4_194_304, 134_217_728] if fit
                                              else [552_960, 552_960, 16_805_888])
    assert [(s.inputs, s.index, s.misfit.tensor, s.fitted) for s in seen] == [
        (("q", "k"), 0, "q", fit), (("q", "k"), 1, "k", fit), (("q", "k"), None, "out", fit)]
    assert seen[1].misfit.needed.stride == (524_288, 1, 128)  # k read through its transpose
    assert [o.view.size for o in seen[0].operands] == [("8", str(graph.s), "128"), ("8", "128", str(graph.s))]
    # At the example size (no hint) nothing is replaced, so nothing is reported.
    seen.clear()
    with benchmark_tensors.watching(seen.append, fit=fit):
        AlgorithmSelectorCache.get_inputs([], inputs, out, None, hint_override=None)
    assert seen == []


def test_outside_watching_the_tensors_are_inductors_and_nothing_is_seen(graph):
    from torch._inductor.select_algorithm import AlgorithmSelectorCache

    from kinspect.inductor.hooks import benchmark_tensors

    with benchmark_tensors.watching(lambda s: pytest.fail("seen outside")):
        pass
    inputs, out = _bmm_nodes(graph.s)
    args = AlgorithmSelectorCache.get_inputs([], inputs, out, None, hint_override=4096)
    assert _storage(args.triton.input_tensors[0]) == 552_960


def test_the_subprocess_description_is_made_to_fit_at_the_hint(graph):
    """`TensorMeta.from_irnodes` (the subprocess's tensors) applies no hint: kinspect's fit
    describes the tensor Inductor's own process builds at the hint, with the storage its
    kernel reads, and `to_tensor` builds that."""
    from torch._inductor.autotune_process import TensorMeta

    from kinspect.inductor.hooks import benchmark_tensors

    (q, kt), _ = _bmm_nodes(graph.s)
    meta = TensorMeta.from_irnodes(kt.unwrap_view())
    assert tuple(meta.sizes) == (8, 100, 128)  # the example size
    seen = []
    fitted = benchmark_tensors._fit_meta(meta, kt, 4096, ("q", "k"), 1, seen.append, True)
    assert [(s.misfit.path, s.misfit.short, s.fitted) for s in seen] == [("subprocess", True, True)]
    t = fitted.to_tensor()
    assert tuple(t.shape) == (8, 4096, 128) and _storage(t) >= 4_194_304


# ---------------------------------------------------------------- findings, reproducer, report

def _graph_record(seen):
    from kinspect.inductor.hooks.capture import GraphRecord, SiteRecord

    rec = GraphRecord(0, "inference", None)
    rec.misfit_ops[("q", "k")] = "bmm"
    rec.sites.append(SiteRecord("multi_kernel_0", "buf0", "bmm", [("q", "input", ()), ("k", "input", ()),
                                                                  ("buf0", "output", ())], {}, [], []))
    rec.misfits.extend(seen)
    return rec


@pytest.fixture(scope="module")
def seen_bmm(graph):
    from torch._inductor.select_algorithm import AlgorithmSelectorCache

    from kinspect.inductor.hooks import benchmark_tensors

    inputs, out = _bmm_nodes(graph.s)
    seen = []
    with benchmark_tensors.watching(seen.append):
        AlgorithmSelectorCache.get_inputs([], inputs, out, None, hint_override=4096)
    return seen


def _findings(records, symbols=()):
    """The hint-benchmark-tensor findings a session holding these graph records derives."""
    from kinspect.core.quality.findings import derive_findings
    from kinspect.core.session.model import Environment, Session
    from kinspect.inductor.recording import translate

    s = Session(Environment("2026-12-01T00:00:00Z"), symbols=list(symbols),
                graphs=[translate.graph(r, None, [4096]) for r in records])
    return [f for f in derive_findings(s) if f.kind == rule.KIND]


def test_each_misfit_is_a_finding_naming_the_site_the_op_part_and_the_users_sizes(seen_bmm, graph):
    from kinspect.core.session.model import SymbolInfo

    found = _findings([_graph_record(seen_bmm)], [SymbolInfo(str(graph.s), "S")])
    assert [(f.kind, f.site, f.severity) for f in found] == [("hint-benchmark-tensor", "multi_kernel_0", "error")] * 3
    assert found[0].message.startswith("at hint 4096, bmm's a was autotuned on a tensor of shape (8, 4096, 128)")
    assert "bmm's b was" in found[1].message and "bmm's out was" in found[2].message
    assert "128*S" in found[0].message and "S**2" in found[2].message


def test_a_site_many_layers_share_speaks_once_and_fitted_tensors_are_one_note(seen_bmm, graph):
    """Twelve layers' templates feed one site: one finding per hint and tensor, with the count;
    what kinspect fitted is one info finding per site."""
    from dataclasses import replace

    from kinspect.core.session.model import SymbolInfo

    rec = _graph_record(seen_bmm)
    rec.sites.append(replace(rec.sites[0], tensors=[("q2", "input", ()), ("k2", "input", ()), ("buf9", "output", ())]))
    rec.misfits += [replace(s, inputs=("q2", "k2")) for s in seen_bmm]
    found = _findings([rec], [SymbolInfo(str(graph.s), "S")])
    assert len(found) == 3 and all("the same in 2 templates that share this site" in f.message for f in found)
    rec.misfits = [replace(s, fitted=True) for s in rec.misfits]
    (note,) = _findings([rec])
    assert note.severity == "info" and note.site == "multi_kernel_0"
    assert note.message.startswith("bmm: 6 benchmark tensors in 2 templates (one per layer) did not hold what the "
                                   "kernel reads at hints 4096 (in-process autotuning); kinspect gave each the storage")


def test_a_compile_that_died_before_its_site_names_the_op_autotuned(seen_bmm, tmp_path):
    from kinspect.inductor.hooks.capture import GraphRecord

    rec = GraphRecord(0, "inference", None)
    rec.misfits.extend(seen_bmm)
    rec.misfit_ops[("q", "k")] = "bmm"
    found = _findings([rec])
    assert found[0].site is None and found[0].message.startswith("at hint 4096, bmm's a (q) was autotuned")
    from kinspect.core.session.model import SymbolInfo
    from kinspect.inductor.recording import reproducer

    (files,) = reproducer.write_for([rec], [SymbolInfo(str(seen_bmm[0].operands[0].base[1]), "S", example=100)],
                                    [4096], {}, tmp_path, set())
    assert files.script.name == "q_k-hint4096.py" and "torch.bmm(" in files.script.read_text()


def test_fitted_templates_of_a_compile_that_died_before_its_sites_are_one_note(seen_bmm):
    """samples/generate.py's compile failed after kinspect fitted eight templates' tensors:
    explain showed the same sentence eight times, one per template."""
    from dataclasses import replace

    from kinspect.inductor.hooks.capture import GraphRecord

    rec = GraphRecord(0, "inference", None)
    rec.misfits.extend(replace(s, fitted=True) for s in seen_bmm)
    rec.misfits.extend(replace(s, inputs=("q2", "k2"), fitted=True) for s in seen_bmm)
    rec.misfit_ops[("q", "k")] = rec.misfit_ops[("q2", "k2")] = "bmm"
    (note,) = _findings([rec])
    assert note.site is None and note.message.startswith("bmm: 6 benchmark tensors in 2 templates (one per layer)")


def test_the_finding_is_derived_on_load_from_the_misfits_the_session_holds(seen_bmm, graph, tmp_path):
    """A saved session keeps each graph's misfits (expressions as text) and derives the
    finding from them when opened: a stale stored one is replaced, and a file whose
    misfits were taken out has none left."""
    import json

    from kinspect.core.session.model import Finding, SymbolInfo
    from kinspect.core.store import load, save
    from kinspect.inductor.recording import translate
    from synthetic import synthetic_session

    s = synthetic_session(sites=1, measured=False)
    s.symbols.append(SymbolInfo(str(graph.s), "S"))
    s.graphs[0] = translate.graph(_graph_record(seen_bmm), None, [4096])
    s.findings = [Finding(rule.KIND, "stale: at hint 4096, bmm's a was autotuned on ...", "error", site="multi_kernel_0")]
    save(s, tmp_path / "s.json")
    data = json.loads((tmp_path / "s.json").read_text())
    held = data["graphs"][0]["misfits"]
    assert [m["layout"]["stride"][0] for m in held] == ["128*" + str(graph.s), "128*" + str(graph.s), str(graph.s) + "**2"]
    got = [f for f in load(tmp_path / "s.json").findings if f.kind == rule.KIND]
    assert len(got) == 3 and not any(f.message.startswith("stale") for f in got)
    assert "stride[0] 128*S: given 4,096, 524,288 at S=4096" in got[0].message
    del data["graphs"][0]["misfits"]
    (tmp_path / "s.json").write_text(json.dumps(data))
    assert [f for f in load(tmp_path / "s.json").findings if f.kind == rule.KIND] == []


def test_misfit_expressions_in_a_session_are_never_parsed(seen_bmm, tmp_path):
    """The expressions are a file's text: an expression sympy would evaluate is only shown."""
    import json

    from kinspect.core.store import load, save
    from kinspect.inductor.recording import translate
    from synthetic import synthetic_session

    s = synthetic_session(sites=1, measured=False)
    s.graphs[0] = translate.graph(_graph_record(seen_bmm), None, [4096])
    save(s, tmp_path / "s.json")
    data = json.loads((tmp_path / "s.json").read_text())
    data["graphs"][0]["misfits"][0]["replaced"][0]["expr"] = "__import__('os').system('false')"
    (tmp_path / "s.json").write_text(json.dumps(data))
    (first, *_) = [f for f in load(tmp_path / "s.json").findings if f.kind == rule.KIND]
    assert "stride[0] __import__('os').system('false'): given 4,096" in first.message
    data["graphs"][0]["misfits"][0]["index"] = 7
    (tmp_path / "s.json").write_text(json.dumps(data))
    from kinspect.core.errors import SessionError

    with pytest.raises(SessionError, match=r"graphs\[0\]\.misfits\[0\]\.index: names input 7 of a template with 2"):
        load(tmp_path / "s.json")


def test_the_reproducer_is_a_standalone_script_and_the_report_holds_it(seen_bmm, graph, tmp_path):
    from kinspect.core.session.model import Environment, SymbolInfo
    from kinspect.inductor.recording import reproducer

    env = Environment("2026-12-01T00:00:00Z", torch="2.11.0+cu130", triton="3.6.0", gpu="NVIDIA H200", cuda="13.0")
    said = []
    files = reproducer.write_beside(tmp_path / "attn.py", [_graph_record(seen_bmm)],
                                    [SymbolInfo(str(graph.s), "S", example=100)], [64, 256, 4096], env, set(), said.append)
    assert len(files) == 1 and files[0].script.name == "multi_kernel_0-hint4096.py"
    assert files[0].script.parent == tmp_path / "attn.hint-repro"
    assert said == [f"reproducer: {files[0].script}; upstream report: {files[0].report}"]
    code = files[0].script.read_text()
    tree = ast.parse(code)
    imports = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imports |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert imports <= {"sys", "sympy", "torch"}  # no kinspect: it runs on stock PyTorch
    assert "return torch.bmm(t0, t1.permute(0, 2, 1))" in code
    assert "torch._dynamo.mark_dynamic(t0, 1)" in code and "torch.randn(8, 100, 128" in code
    assert "ic.multi_kernel_hints = [64, 256, 4096]" in code and "HINT = 4096" in code
    report = files[0].report.read_text()
    assert report.startswith("# Inductor autotunes bmm at multi_kernel_hints=[64, 256, 4096] on a benchmark tensor")
    assert "- torch: 2.11.0+cu130" in report and "- GPU: NVIDIA H200" in report
    assert f"| stride[0] | `128*{graph.s}` | 4,096 | 524,288 |" in report
    assert code.rstrip() in report
    # Once per site and hint: a second call writes nothing, and never over the files there.
    done = {("multi_kernel_0", 4096)}
    assert reproducer.write_beside(tmp_path / "attn.py", [_graph_record(seen_bmm)], [], [64], env, done, said.append) == []
    # A name taken by a link that points nowhere is passed over, never written through.
    (tmp_path / "attn.hint-repro" / "multi_kernel_0-hint4096-2.py").symlink_to(tmp_path / "elsewhere.py")
    again = reproducer.write_beside(tmp_path / "attn.py", [_graph_record(seen_bmm)], [], [64, 256, 4096], env, set(),
                                    said.append)
    assert again[0].script.name == "multi_kernel_0-hint4096-3.py" and not (tmp_path / "elsewhere.py").exists()


def test_a_view_no_plain_call_makes_gets_a_report_without_a_script(seen_bmm):
    from kinspect.inductor.recording import reproducer
    from kinspect.inductor.hooks.benchmark_tensors import Operand

    odd = Operand(("8", "s0", "128"), rule.Layout(("8", "s0", "64"), ("128*s0", "128", "1"), "64"), "bfloat16")
    code, why = reproducer.script("bmm", [odd, odd], [64], 64, {"s0": 100})
    assert code is None and "not a permute, reshape or broadcast" in why
    text = reproducer.report("bmm", seen_bmm[0].misfit, "q", {}, code, why, [64])
    assert "No standalone script: an input's view is not a permute" in text


def test_a_fitted_pipelines_session_states_the_patch():
    from kinspect.inductor.recording.assembly import environment

    from kinspect.core.session.compile_changes import CompileChanges

    fitted = CompileChanges(fit_benchmark_tensors=True)
    assert environment([64], train=False, allow_caches=False, rank=None, changes=fitted).config[PATCH_KEY] is True
    assert PATCH_KEY not in environment([64], train=False, allow_caches=False, rank=None).config


def test_a_sticky_cuda_fault_in_the_autotune_child_restarts_it_while_a_fit_is_on():
    """One config that faults must cost only itself: the next config gets a fresh child."""
    import functools

    ap = pytest.importorskip("torch._inductor.autotune_process")
    from kinspect.inductor.hooks import benchmark_tensors

    benchmark_tensors._install()
    fault = functools.partial(exec, "raise RuntimeError('CUDA error: an illegal memory access was encountered')")
    child = ap.TuningProcess(device=None)
    try:
        first = child.process.pid
        child.put(fault)
        with pytest.raises(RuntimeError, match="illegal memory access"):
            child.get(120)
        assert child.process.pid == first  # no fit: Inductor's own behaviour, the child kept
        with benchmark_tensors.watching(lambda seen: None, fit=True):
            child.put(fault)
            with pytest.raises(RuntimeError, match="illegal memory access"):
                child.get(120)
        fresh = child.process.pid
        assert fresh != first and child.alive()
        child.restart()  # what a torch that restarts after this fault itself then asks for
        assert child.process.pid == fresh  # not a second start
        child.put(functools.partial(int, "7"))
        assert child.get(120) == 7  # the fresh child runs the next benchmark
    finally:
        child.kill()  # not shutdown(): its graceful exit takes seconds, and nothing is left to run


def test_a_child_class_without_restart_still_gets_a_fresh_child_after_a_fault():
    """Older releases' TuningProcess has no `restart`; the fault must still cost only its config."""
    import functools
    import inspect

    ap = pytest.importorskip("torch._inductor.autotune_process")
    from kinspect.inductor.hooks import benchmark_tensors

    members = {k: inspect.unwrap(v) if inspect.isfunction(v) else v
               for k, v in vars(ap.TuningProcess).items() if k != "restart"}
    old = type("OlderTuningProcess", (), members)
    assert benchmark_tensors.restart_child_after_faults(old)
    assert not hasattr(old, "restart")
    fault = functools.partial(exec, "raise RuntimeError('CUDA error: an illegal memory access was encountered')")
    child = old(device=None)
    try:
        first = child.process.pid
        with benchmark_tensors.watching(lambda seen: None, fit=True):
            child.put(fault)
            with pytest.raises(RuntimeError, match="illegal memory access"):
                child.get(120)
        assert child.process.pid != first and child.alive()
        child.put(functools.partial(int, "7"))
        assert child.get(120) == 7
    finally:
        child.kill()  # not shutdown(): its graceful exit takes seconds, and nothing is left to run


def test_a_child_class_missing_what_a_restart_needs_is_left_alone():
    pytest.importorskip("torch._inductor.autotune_process")
    from kinspect.inductor.hooks import benchmark_tensors

    class Bare:
        def get(self):
            return 1

    assert not benchmark_tensors.restart_child_after_faults(Bare)
    assert Bare.get.__name__ == "get" and Bare().get() == 1


def test_a_compile_that_died_with_short_tensors_says_at_which_op_and_hint_and_what_gets_through(seen_bmm):
    """Stock Inductor dies of a CUDA fault reported at a later call: the one line kinspect
    run prints names the first tensor the kernel read past, and the option."""
    from kinspect.inductor.recording.translate import no_site_reason

    rec = _graph_record(seen_bmm)
    rec.sites.clear()
    rec.templates, rec.dynamic_inputs = 1, True
    said = no_site_reason(rec, [64, 256, 4096])
    assert said.startswith("Inductor raised before it wrote this graph's code, so no kernel was "
                           "chosen: at hint 4096, bmm's q was autotuned on a tensor smaller than its kernel reads")
    assert said.endswith("(Inductor's sizes at a hint disagree; 3 such tensors in all); --one-size-per-symbol tunes "
                         "each hint on one problem")
