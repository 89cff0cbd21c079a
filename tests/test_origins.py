"""Sites named by the user's code: module path, class and line, from the FX metadata of a
real Inductor compile on the CPU (the IR buffers a CPU compile lowers GEMMs to carry the
same `origins` as a Triton template does on a GPU)."""

from __future__ import annotations

import inspect

import pytest

from kinspect.inductor.hooks.origins import module_path, origin_of, user_frame

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from kinspect.inductor.hooks.capture import CompileCapture  # noqa: E402
from kinspect.inductor.recording.pipeline import fresh_entry  # noqa: E402


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(16, 32)
        self.proj = nn.Linear(32, 16)

    def forward(self, x):
        h = self.fc(x)  # no pointwise op: the compile builds no C++ kernel, only extern GEMMs
        return self.proj(h)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.h = nn.ModuleList([Block(), Block()])

    def forward(self, x):
        for block in self.h:
            x = block(x)
        return x


def _gemm_buffers():
    torch._dynamo.reset()
    x = torch.randn(37, 16)
    torch._dynamo.mark_dynamic(x, 0)
    with CompileCapture() as cap, torch.no_grad(), torch._inductor.config.patch(force_disable_caches=True):
        torch.compile(fresh_entry(Net().eval()))(x)
    graph = cap.graphs[0].obj
    return [b for b in graph.buffers
            if any("addmm" in str(getattr(o, "target", "")) for o in getattr(b, "origins", ()))]


def test_each_gemm_is_named_by_its_module_path_class_and_line():
    origins = [origin_of(b) for b in _gemm_buffers()]
    assert [o.module for o in origins] == ["h.0.fc", "h.0.proj", "h.1.fc", "h.1.proj"]
    assert {o.module_class for o in origins} == {"Linear"}
    lines, start = inspect.getsourcelines(Block.forward)
    fc_line = start + next(i for i, t in enumerate(lines) if "self.fc(x)" in t)
    first = origins[0]
    assert first.file == __file__ and first.line == fc_line
    assert "self.fc(x)" in first.code


@pytest.mark.parametrize("source, path", [
    ("L['self'].h[0].attn.c_attn", "h.0.attn.c_attn"),
    ("L['model'].0", "0"),
    ("L['self']._modules['h']._modules['3'].mlp", "h.3.mlp"),
    ("L['model']", ""),
    ("G['net'].encoder['layer'][2]", "encoder.layer.2"),
])
def test_dynamo_sources_become_module_paths(source, path):
    assert module_path(source) == path


def test_the_innermost_frame_outside_torch_and_kinspect_is_the_users():
    trace = (
        '  File "/home/u/model.py", line 40, in forward\n    x = self.block(x)\n'
        '  File "/home/u/blocks.py", line 12, in forward\n    return self.fc(x)\n'
        '  File "/usr/lib/python3/site-packages/torch/nn/modules/linear.py", line 125, in forward\n'
        '    return F.linear(input, self.weight, self.bias)\n'
    )
    assert user_frame(trace) == ("/home/u/blocks.py", 12, "return self.fc(x)")
    # A venv under a folder named torch: only torch's own package is skipped, not transformers.
    lib = "/opt/torch/.venv/lib/python3.12/site-packages"
    trace += (f'  File "{lib}/transformers/pytorch_utils.py", line 118, in forward\n'
              '    x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)\n'
              f'  File "{lib}/torch/nn/modules/module.py", line 1773, in _call_impl\n    return forward_call(*args)\n')
    assert user_frame(trace)[:2] == (f"{lib}/transformers/pytorch_utils.py", 118)
    # ... and when that frame is the GEMM module's own forward, the line that called the module.
    calling = (f'  File "{lib}/transformers/models/gpt2/modeling_gpt2.py", line 312, in forward\n'
               '    query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)\n')
    traced = calling + trace.split("\n", 4)[4]
    assert user_frame(traced, f"{lib}/transformers/pytorch_utils.py") == (
        f"{lib}/transformers/models/gpt2/modeling_gpt2.py", 312,
        "query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)")
    assert user_frame("no frames here") is None
