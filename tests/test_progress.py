"""Progress a user sees during a long compile or measurement: one line of its own on a
terminal, rewritten in place (graph, op, hint, configs timed of all, time so far), and
through a pipe or into a log only the lines that stay, a few per graph and per site, and a
passing one where a minute went by without a line."""

from __future__ import annotations

import io
from types import SimpleNamespace

import pytest

from kinspect.core import printing
from kinspect.core.printing import Passing


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    """No line open, and the last one just written, on a clock the test moves."""
    clock = Clock()
    monkeypatch.setattr(printing, "_open", False)
    monkeypatch.setattr(printing.time, "monotonic", clock)
    monkeypatch.setattr(printing, "_last_line", clock.now)
    return clock


def test_on_a_terminal_passing_lines_overwrite_one_another_and_a_lasting_line_ends_them(monkeypatch):
    err = Tty()
    monkeypatch.setattr("sys.stderr", err)
    printing.progress(Passing("autotuning mm (buf3) at hint 64: 3 of 20 configs"))
    printing.progress(Passing("autotuning mm (buf3) at hint 64: 4 of 20 configs"))
    printing.progress("compiled graph_0 (inference) in 41 s: 6 size-hint multi-kernels")
    shown = err.getvalue()
    assert shown.count("\r\x1b[K") == 3 and shown.endswith("\r\x1b[Kkinspect: compiled graph_0 (inference) in 41 s: "
                                                               "6 size-hint multi-kernels\n")
    assert shown.split("\r\x1b[K")[2] == "kinspect: autotuning mm (buf3) at hint 64: 4 of 20 configs"


def test_through_a_pipe_only_the_lasting_lines_are_written(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    for r in range(25):
        printing.progress(Passing(f"timing 3 variants: round {r + 1}/25"))
    printing.progress("measuring multi_kernel_0: every variant at its 12 keys (key 1 of 40 in all)")
    assert err.getvalue() == "kinspect: measuring multi_kernel_0: every variant at its 12 keys (key 1 of 40 in all)\n"


def test_through_a_pipe_a_compile_quiet_for_a_minute_says_what_it_is_doing(monkeypatch, clock):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    for n in range(1, 19):  # a convolution's 18 configs over 90 s, then the next one's
        clock.now += 5
        printing.progress(Passing(f"autotuning convolution (buf3) at hint 4096: {n} of 18 configs, "
                                  f"{5 * n} s into graph_0 (inference)"))
    printing.progress("compiled graph_0 (inference) in 95 s: 1 size-hint multi-kernel")
    clock.now += 30
    printing.progress(Passing("measuring multi_kernel_0 at B=4"))
    assert err.getvalue().splitlines() == [
        "kinspect: autotuning convolution (buf3) at hint 4096: 12 of 18 configs, 60 s into graph_0 (inference)",
        "kinspect: compiled graph_0 (inference) in 95 s: 1 size-hint multi-kernel",
    ]


def test_a_passing_line_is_escaped_and_kept_to_the_terminals_width(monkeypatch):
    err = Tty()
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setattr(printing, "_columns", lambda: 40)
    printing.progress(Passing("autotuning \x1b[31mred\x1b[0m " + "x" * 100))
    line = err.getvalue().removeprefix("\r\x1b[K")
    assert "\x1b[31m" not in line and len(line) == 39


torch = pytest.importorskip("torch")


class Config:
    """A stand-in template config: what `benchmark_choice` asks of one."""

    def __init__(self, time_ms: float) -> None:
        self.time_ms = time_ms

    def benchmark(self, *inputs, out) -> float:
        return self.time_ms


def test_an_autotunings_line_counts_the_configs_inductor_times(monkeypatch):
    """Inductor's own `AlgorithmSelectorCache.benchmark_choices` over three stand-in configs:
    the capture's line counts them as `benchmark_choice` times each."""
    from torch._inductor.select_algorithm import AlgorithmSelectorCache

    from kinspect.inductor.hooks import capture

    cap = capture.CompileCapture()
    said: list[str] = []
    cap.progress = said.append
    out = torch.empty(4)
    tensors = SimpleNamespace(unpack=lambda: ((torch.empty(4),), out))
    args = SimpleNamespace(get_benchmark_tensors=lambda extern: tensors, expected=None)
    choices = [Config(t) for t in (2.0, 1.0, 3.0)]
    with cap:
        capture._install()
        cap.autotuning = capture.Autotuning("buf3", "mm", 64)
        monkeypatch.setattr(cap, "current", lambda: None)
        timings = AlgorithmSelectorCache.benchmark_choices(choices, args)
    assert sorted(timings.values()) == [1.0, 2.0, 3.0]
    assert said == [f"autotuning mm (buf3) at hint 64: {n} of 3 configs" for n in range(4)]
    assert all(isinstance(s, Passing) for s in said)


def test_the_generic_variants_autotuning_names_the_example_sizes_not_a_hint(monkeypatch):
    """Inductor autotunes each GEMM at the example inputs' sizes before the hints: the line
    says so rather than `at hint None`."""
    from kinspect.inductor.hooks import capture

    cap = capture.CompileCapture()
    said: list[str] = []
    cap.progress = said.append
    monkeypatch.setattr(cap, "current", lambda: None)
    cap.autotuning = capture.Autotuning("buf2", "mm", None)
    cap._counted(8, 18)
    assert said == ["autotuning mm (buf2) at the example sizes: 8 of 18 configs"]
