"""A compile that dies while autotuning says which GEMM and which hint, on the CPU.

The case from the H200: bmm(q, k.transpose(1, 2)), S dynamic, hints 64/256/4096, dies
autotuning at hint 4096 with a CUDA illegal memory access. Here Inductor's real
`MultiTemplateBuffer.choice_timings` (with kinspect's capture hook around it) runs on a
stand-in IR node whose benchmark raises that error, inside the real
`LivePipeline.run_sizes` (its compiled model replaced by the autotuning that fails).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from torch._inductor import ir  # noqa: E402

from kinspect.core.errors import KinspectError  # noqa: E402
from kinspect.inductor.recording import fault_probe, pipeline  # noqa: E402
from kinspect.inductor.launch.modelfile import load_model_file  # noqa: E402
from kinspect.inductor.recording.pipeline import LivePipeline, Options  # noqa: E402

MODEL = Path(__file__).resolve().parent / "fixtures" / "models" / "attention.py"
ILLEGAL = "CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be asynchronously reported"


class ScoresNode:
    """What the capture hook and choice_timings read of a MultiTemplateBuffer for bmm."""

    def __init__(self, fails_at: int) -> None:
        self._choice_timings: dict = {}
        self.origin_node = SimpleNamespace(target=SimpleNamespace(_opname="bmm"))
        self.fails_at = fails_at

    def get_name(self) -> str:
        return "buf0"

    def _choice_timings_fn(self, hint: int) -> dict:
        if hint == self.fails_at:
            raise RuntimeError(ILLEGAL)
        return {}


def autotune_every_hint(node: ScoresNode) -> None:
    for hint in (64, 256, 4096):
        ir.MultiTemplateBuffer.choice_timings(node, hint)


@pytest.fixture
def live(monkeypatch, tmp_path):
    monkeypatch.setattr(pipeline, "require_cuda", lambda: None)
    live = LivePipeline(load_model_file(MODEL), Options(hints=[64, 256, 4096], failure_log=tmp_path / "attention.kinspect.log"))
    live._inputs = lambda sizes: ()
    live._compiled = lambda: autotune_every_hint(ScoresNode(fails_at=4096))
    return live


def test_a_compile_dying_while_autotuning_names_the_op_and_hint_and_keeps_the_traceback(live, tmp_path, monkeypatch):
    monkeypatch.setattr(fault_probe, "locate", lambda model, hints: None)  # the synchronous rerun could not say
    log = tmp_path / "attention.kinspect.log"
    with pytest.raises(KinspectError) as err:
        live.run_sizes({}, what="compile")
    assert str(err.value) == (
        "compiling attention.py failed while autotuning bmm (buf0) at hint 4096: RuntimeError: CUDA error: an "
        "illegal memory access was encountered; --fit-benchmark-tensors gives Inductor's benchmark tensors the "
        f"storage each kernel reads; without hint 4096 it may compile: --hints 64,256 (traceback in {log})")
    text = log.read_text()
    assert text.startswith("\n--- kinspect: attention.py failed while autotuning bmm (buf0) at hint 4096\n"
                           "Traceback (most recent call last):\n")
    assert "_choice_timings_fn" in text and text.rstrip().endswith("CUDA kernel errors might be asynchronously reported")


def test_a_cuda_fault_names_the_hint_and_config_a_synchronous_rerun_found_and_never_the_subprocess_switch(
        live, tmp_path, monkeypatch):
    """CUDA reports a fault late: the rerun with CUDA_LAUNCH_BLOCKING=1 is what the line names."""
    asked = []

    def locate(model, hints):
        asked.append((Path(model).name, list(hints)))
        return fault_probe.Fault(256, "buf3", "addmm", "BLOCK_M=64, BLOCK_N=128", "CUDA error: an illegal memory access",
                                 None)

    monkeypatch.setattr(fault_probe, "locate", locate)
    with pytest.raises(KinspectError) as err:
        live.run_sizes({}, what="compile")
    text = str(err.value)
    assert asked == [("attention.py", [64, 256, 4096])]
    assert text.startswith("compiling attention.py failed while autotuning addmm (buf3) at hint 256: RuntimeError: "
                           "CUDA error: an illegal memory access was encountered (reported while autotuning at hint "
                           "4096); rerun with CUDA_LAUNCH_BLOCKING=1, the fault is at hint 256 while autotuning addmm "
                           "(buf3), config BLOCK_M=64, BLOCK_N=128: its benchmark tensors hold what the kernel reads "
                           "there, so the cause is not a known one")
    assert "without hint 256 it may compile: --hints 64,4096" in text
    assert "AUTOTUNE_IN_SUBPROC" not in text


def test_inside_the_synchronous_rerun_no_rerun_is_started(live, monkeypatch):
    monkeypatch.setenv("CUDA_LAUNCH_BLOCKING", "1")
    monkeypatch.setattr(fault_probe, "locate", lambda model, hints: pytest.fail("a rerun inside the rerun"))
    with pytest.raises(KinspectError) as err:
        live.run_sizes({}, what="compile")
    assert "encountered; without hint 4096 it may compile: --hints 64,256 (traceback in " in str(err.value)


def test_a_recompile_dying_in_a_workload_step_is_that_steps_error(live, monkeypatch):
    monkeypatch.setattr(fault_probe, "locate", lambda model, hints: None)
    result = live.run_sizes({"S": 300}, step=3)
    assert result.error.startswith("while autotuning bmm (buf0) at hint 4096: RuntimeError: CUDA error: an illegal")
    live._compiled = lambda: (_ for _ in ()).throw(ValueError("not while autotuning"))
    assert live.run_sizes({"S": 301}, step=4).error.startswith("ValueError: not while autotuning (traceback in ")


def _short_q_at(hint: int):
    """bmm's q as Inductor's in-process benchmark built it at `hint`: stride[0] 128*s27 given the hint alone."""
    from kinspect.core.session.benchmark_tensors import Concrete, Layout, Misfit, Replaced
    from kinspect.inductor.hooks.benchmark_tensors import Operand, Seen

    view = Layout(("8", "s27", "128"), ("128*s27", "128", "1"))
    misfit = Misfit("arg1_1", hint, "in-process", view, Concrete((8, hint, 128), (hint, 128, 1), 0, 7 * hint + hint * 128),
                    Concrete((8, hint, 128), (128 * hint, 128, 1), 0, 8 * hint * 128),
                    (Replaced("stride[0]", "128*s27", hint, 128 * hint),))
    operands = (Operand(("8", "s27", "128"), view, "float32"),
                Operand(("8", "s27", "128"), Layout(("8", "128", "s27"), ("128*s27", "1", "128")), "float32"))
    return Seen(("arg1_1", "arg1_1"), 0, misfit, False, operands)


def test_the_misfit_the_synchronous_rerun_found_is_in_the_saved_session_and_gets_a_report(live, tmp_path, monkeypatch):
    """This process can die before it autotunes at the hint that faulted (CUDA reports late):
    the H200's stock bmm died here at hint 256 while the rerun found the short tensor at 4096.
    What the rerun found travels back whole, so the saved session shows it and a report is written."""
    from kinspect.core.quality.benchmark_tensors import KIND
    from kinspect.core.store import load

    monkeypatch.setattr(live.mf, "path", tmp_path / "attention.py")
    seen = _short_q_at(256)
    wire = fault_probe.seen_to_json(seen, "bmm")
    monkeypatch.setattr(fault_probe, "locate", lambda model, hints: fault_probe.Fault(
        256, "buf0", "bmm", "BLOCK_M=32", "CUDA error: an illegal memory access", "at hint 256, ...", wire))
    live._compiled = lambda: autotune_every_hint(ScoresNode(fails_at=4096))
    with pytest.raises(KinspectError) as err:
        live.run_sizes({}, what="compile")
    assert f"reproducer and upstream report in {tmp_path / 'attention.hint-repro'}" in str(err.value)
    assert fault_probe.seen_from_json(wire) == seen
    live.save(tmp_path / "died.session.json")
    (found,) = [f for f in load(tmp_path / "died.session.json").findings if f.kind == KIND]
    assert found.severity == "error" and found.message.startswith(
        "at hint 256, bmm's a (arg1_1) was autotuned on a tensor of shape (8, 256, 128), stride (256, 128, 1)")
    assert "stride[0] 128*s27: given 256, 32,768 at s27=256" in found.message
    (report,) = (tmp_path / "attention.hint-repro").glob("*hint256.md")
    assert "128*s27" in report.read_text()


def test_a_rerun_whose_misfit_does_not_read_back_still_names_the_fault(live, monkeypatch):
    monkeypatch.setattr(fault_probe, "locate", lambda model, hints: fault_probe.Fault(
        256, "buf0", "bmm", "BLOCK_M=32", "CUDA error: an illegal memory access", "at hint 256, ...", {"misfit": 3}))
    with pytest.raises(KinspectError) as err:
        live.run_sizes({}, what="compile")
    assert "the fault is at hint 256 while autotuning bmm (buf0), config BLOCK_M=32: at hint 256, ..." in str(err.value)
    assert not [g for g in live.capture.graphs if g.misfits]


def test_a_graph_keeps_the_autotuning_its_compile_died_in_and_its_line_names_it_and_the_option():
    """`kinspect run` of a Llama with its layers as regions died of a CUDA fault while Inductor
    autotuned the block's up projection at a hint, after another graph had made a site: the
    graph that died is named with the op and hint, and the option that tunes each hint on one
    problem (not `--compile-layers-once`, which was not the cause)."""
    from torch._inductor.virtualized import V

    from kinspect.inductor.hooks.capture import Autotuning, CompileCapture
    from kinspect.inductor.recording.translate import no_site_reason

    graph = SimpleNamespace(is_inference=True)
    with CompileCapture() as cap, V.set_graph_handler(graph):
        rec = cap._graph_for(graph)
        with pytest.raises(RuntimeError, match="illegal memory access"):
            autotune_every_hint(ScoresNode(fails_at=256))
    assert rec.died_at == Autotuning("buf0", "bmm", 256)
    rec.templates, rec.dynamic_inputs = 1, True
    assert no_site_reason(rec, [64, 256, 4096]) == (
        "Inductor raised before it wrote this graph's code, so no kernel was chosen: it raised "
        "while autotuning bmm (buf0) at hint 256 (at a hint, stock Inductor's sizes disagree where a GEMM's rows are "
        "a product of sizes); --one-size-per-symbol tunes each hint on one problem")
    rec.per_symbol = True  # already tuned on one problem per hint: no option to offer
    assert no_site_reason(rec, [64, 256, 4096]).endswith("it raised while autotuning bmm (buf0) at hint 256")
