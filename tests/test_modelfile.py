"""Loading the model.py a user writes: what kinspect reads from it, and every mistake in
it reported in one line that names the file and says what to fix."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kinspect.core.errors import KinspectError
from kinspect.inductor.launch.modelfile import DynamicDim, ModelFileError, load_model_file

torch = pytest.importorskip("torch")

MODELS = Path(__file__).resolve().parent / "fixtures" / "models"


def write(tmp_path: Path, text: str, name: str = "model.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def load_error(path: Path) -> str:
    with pytest.raises(ModelFileError) as info:
        load_model_file(path)
    return one_line(info.value)


def one_line(err: Exception) -> str:
    message = str(err)
    assert isinstance(err, KinspectError)
    assert "\n" not in message and message
    return message


# ---------------------------------------------------------------- files that load


def test_a_module_with_a_builder_workload_and_hints():
    mf = load_model_file(MODELS / "linear.py")
    assert isinstance(mf.model, torch.nn.Linear) and mf.model_name == "model"
    assert mf.names == ("B",) and mf.examples == {"B": 1000}
    assert mf.workload == [{"B": b} for b in (1, 64, 100, 1000, 8192)]
    assert mf.hints == [64, 256, 4096]
    assert mf.input_names == ("input",)  # nn.Linear.forward(input)
    (x,) = mf.build({"B": 3})
    assert x.shape == (3, 1024)
    assert mf.dynamic_dims() == [DynamicDim(0, 0, ("B",))]


def test_a_function_model_with_a_tuple_builder_and_a_workload_of_bare_sizes():
    mf = load_model_file(MODELS / "function.py")
    assert mf.model_name == "model" and mf.input_names == ("x", "w")
    assert mf.workload == [{"B": 1}, {"B": 64}, {"B": 1000}]
    assert mf.hints is None  # the command's default hints apply
    assert [t.shape for t in mf.build({"B": 5})] == [(5, 64), (64, 32)]
    assert mf.dynamic_dims() == [DynamicDim(0, 0, ("B",))]


def test_a_size_moves_a_different_dim_of_each_input():
    """q (8, S, 128) and k (8, 128, S): S is dim 1 of q and dim 2 of k."""
    mf = load_model_file(MODELS / "attention.py")
    assert mf.workload == [] and mf.examples == {"S": 77}
    assert mf.dynamic_dims() == [DynamicDim(0, 1, ("S",)), DynamicDim(1, 2, ("S",))]


def test_two_sizes_and_a_workload_that_leaves_one_at_its_default():
    mf = load_model_file(MODELS / "gemm_2d.py")
    assert mf.model_name == "forward" and mf.names == ("M", "N")
    assert mf.workload == [{"M": 64}, {"M": 100, "N": 3000}]
    assert [t.shape for t in mf.build(mf.workload[0])] == [(64, 256), (256, 768)]
    assert mf.dynamic_dims() == [DynamicDim(0, 0, ("M",)), DynamicDim(1, 1, ("N",))]


def test_a_dim_that_moves_with_two_sizes_names_both(tmp_path):
    path = write(tmp_path, """
        import torch
        def model(x):
            return x.sum()
        def inputs(B=4, S=6):
            return torch.randn(B * S, 16), torch.randn(B, 3)
    """)
    assert load_model_file(path).dynamic_dims() == [DynamicDim(0, 0, ("B", "S")), DynamicDim(1, 0, ("B",))]


def test_a_dim_that_is_a_size_divided_still_counts_and_probing_keeps_divisibility(tmp_path):
    """Heads split the model width: H = D // 8, and D must stay divisible by 8."""
    path = write(tmp_path, """
        import torch
        def model(x):
            return x
        def inputs(D=512):
            assert D % 8 == 0, "D must be a multiple of the 8 heads"
            return torch.randn(2, 8, D // 8)
    """)
    assert load_model_file(path).dynamic_dims() == [DynamicDim(0, 2, ("D",))]


def test_a_builder_without_parameters_is_a_static_model():
    mf = load_model_file(MODELS / "static.py")
    assert mf.names == () and mf.examples == {} and mf.workload == []
    assert [t.shape for t in mf.build({})] == [(32, 64)]
    assert mf.dynamic_dims() == []


def test_a_size_without_default_takes_the_first_workload_value(tmp_path):
    path = write(tmp_path, """
        import torch
        model = torch.nn.Identity()
        def inputs(B):
            return torch.randn(B, 8)
        workload = [{"B": 300}, {"B": 5}]
    """)
    assert load_model_file(path).examples == {"B": 300}


def test_loading_does_not_run_the_main_block(tmp_path):
    """Loading must not run the `__main__` block, so the file stays a plain script."""
    path = write(tmp_path, """
        import torch
        model = torch.nn.Identity()
        def inputs(B=10):
            return torch.randn(B, 8)
        if __name__ == "__main__":
            raise SystemExit("ran as a script")
    """)
    assert load_model_file(path).names == ("B",)


# ---------------------------------------------------------------- mistakes, one line each


def test_a_syntax_error_names_the_line():
    assert load_error(MODELS / "broken.py") == "broken.py:7: syntax error: expected ':'"


def test_a_missing_file():
    assert load_error(MODELS / "nope.py").endswith("nope.py: no such file")


def test_a_failed_import_names_the_module(tmp_path):
    path = write(tmp_path, """
        import torch
        import kinspect_no_such_package
    """)
    assert load_error(path) == "model.py: import failed: No module named 'kinspect_no_such_package'"


def test_an_exception_while_loading_names_the_line_and_keeps_one_line(tmp_path):
    path = write(tmp_path, """
        import torch

        def helper():
            raise ValueError("width must be positive\\nsee the docs")

        model = helper()
    """)
    assert load_error(path) == "model.py:5: ValueError while loading: width must be positive"


def test_a_file_that_exits_while_loading_says_to_guard_it(tmp_path):
    """argparse at top level sees kinspect's own arguments and exits."""
    path = write(tmp_path, """
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--batch", type=int, default=8)
        args = parser.parse_args(["--no-such-flag"])
    """)
    message = load_error(path)
    assert message.startswith("model.py:5: exited while loading")
    assert 'if __name__ == "__main__":' in message


@pytest.mark.parametrize("text, fix", [
    ("import torch\ndef inputs(B=10):\n    return torch.randn(B, 8)\n", "define the model as `model = MyModule()`"),
    ("import torch\nmodel = torch.nn.Identity()\n", "define an input builder as `def inputs(B=1000)"),
    ("x = 1\n", "define the model as"),
])
def test_nothing_to_inspect_says_what_to_define(tmp_path, text, fix):
    message = load_error(write(tmp_path, text))
    assert message.startswith("model.py: nothing to inspect: ") and fix in message


def test_a_model_that_is_not_callable(tmp_path):
    path = write(tmp_path, "import torch\nmodel = 3\ndef inputs(B=10):\n    return torch.randn(B, 8)\n")
    assert load_error(path) == "model.py: `model` is not callable; assign an nn.Module or a function"


def test_a_builder_that_is_not_a_function(tmp_path):
    path = write(tmp_path, "import torch\nmodel = torch.nn.Identity()\ninputs = torch.randn(4, 8)\n")
    message = load_error(path)
    assert message.startswith("model.py: `inputs` is not a function")
    assert "def inputs(B=1000)" in message


@pytest.mark.parametrize("signature", ["*sizes", "B=10, **more"])
def test_a_builder_must_name_its_sizes(tmp_path, signature):
    path = write(tmp_path, f"import torch\nmodel = torch.nn.Identity()\ndef inputs({signature}):\n    return torch.randn(4, 8)\n")
    assert load_error(path) == (
        "model.py: inputs() must name its sizes, e.g. def inputs(B=1000); *args/**kwargs are not allowed")


@pytest.mark.parametrize("default", ["1", "0", "-5", "1000.0", "True", "'1000'"])
def test_a_default_must_be_an_integer_of_at_least_2(tmp_path, default):
    path = write(tmp_path, f"import torch\nmodel = torch.nn.Identity()\ndef inputs(B={default}):\n    return torch.randn(4, 8)\n")
    assert load_error(path) == (
        "model.py: default of B must be an integer >= 2 (sizes 0 and 1 are specialised by the compiler)")


def test_a_size_without_default_or_workload(tmp_path):
    path = write(tmp_path, "import torch\nmodel = torch.nn.Identity()\ndef inputs(B, S=4):\n    return torch.randn(B, S)\n")
    assert load_error(path) == "model.py: give B a default in inputs(), e.g. def inputs(B=1000)"


def test_a_size_without_default_missing_from_the_first_workload_step(tmp_path):
    path = write(tmp_path, """
        import torch
        model = torch.nn.Identity()
        def inputs(B, S=4):
            return torch.randn(B, S)
        workload = [{"S": 8}, {"B": 2, "S": 8}]
    """)
    assert load_error(path) == "model.py: give B a default in inputs(), e.g. def inputs(B=1000)"


def test_a_name_no_input_dim_depends_on(tmp_path):
    path = write(tmp_path, """
        import torch
        model = torch.nn.Identity()
        def inputs(B=100, H=8):
            return torch.randn(B, 64)
    """)
    mf = load_model_file(path)
    with pytest.raises(ModelFileError) as info:
        mf.dynamic_dims()
    assert one_line(info.value) == "model.py: no input dim depends on H; use it in inputs() or remove the parameter"


@pytest.mark.parametrize("body, message", [
    ("return torch.randn(B, 64).view(B, 7, -1)",
     "model.py: inputs(B=100) failed: RuntimeError: shape '[100, 7, -1]' is invalid for input of size 6400"),
    ("raise ValueError('B must be even\\nhint: try 64')", "model.py: inputs(B=100) failed: ValueError: B must be even"),
])
def test_a_builder_that_raises_names_the_sizes_in_one_line(tmp_path, body, message):
    path = write(tmp_path, f"import torch\nmodel = torch.nn.Identity()\ndef inputs(B=10):\n    {body}\n")
    mf = load_model_file(path)
    with pytest.raises(ModelFileError) as info:
        mf.build({"B": 100})
    assert one_line(info.value) == message


@pytest.mark.parametrize("text", ["return 3", "return (1, 'x')", "return None"])
def test_a_builder_must_return_tensors(tmp_path, text):
    mf = load_model_file(write(tmp_path, f"import torch\nmodel = torch.nn.Identity()\ndef inputs(B=10):\n    {text}\n"))
    with pytest.raises(ModelFileError) as info:
        mf.build({})
    assert one_line(info.value) == "model.py: inputs() must return a tensor or a tuple of tensors"


@pytest.mark.parametrize("workload, message", [
    ("[{'B': 64}, {'C': 3}]", "model.py: workload[1] names 'C', which inputs() does not take"),
    ("{'B': 64}", "model.py: workload must be a list, e.g. [{'B': 64}, {'B': 1000}]"),
    ("[{'B': -1}]", "model.py: workload[0]['B'] must be a non-negative integer"),
    ("[{'B': 6.5}]", "model.py: workload[0]['B'] must be a non-negative integer"),
    ("['B=64']", "model.py: workload[0] must be a dict of sizes like {'B': 1000}"),
])
def test_a_bad_workload(tmp_path, workload, message):
    path = write(tmp_path, f"import torch\nmodel = torch.nn.Identity()\ndef inputs(B=10, S=4):\n    return torch.randn(B, S)\nworkload = {workload}\n")
    assert load_error(path) == message


def test_bare_sizes_need_a_single_name(tmp_path):
    path = write(tmp_path, "import torch\nmodel = torch.nn.Identity()\ndef inputs(M=10, N=4):\n    return torch.randn(M, N)\nworkload = [64]\n")
    assert load_error(path) == "model.py: workload[0] must be a dict of sizes like {'M': 1000}"


def test_a_workload_for_a_static_model(tmp_path):
    path = write(tmp_path, "import torch\nmodel = torch.nn.Identity()\ndef inputs():\n    return torch.randn(4, 4)\nworkload = [64]\n")
    assert load_error(path) == "model.py: workload[0] must be a dict of sizes, and inputs() takes none"


@pytest.mark.parametrize("hints", ["[]", "[64, 0]", "[64, 256.0]", "'64,256'", "[True]", "64"])
def test_bad_hints(tmp_path, hints):
    path = write(tmp_path, f"import torch\nmodel = torch.nn.Identity()\ndef inputs(B=10):\n    return torch.randn(B, 4)\nhints = {hints}\n")
    assert load_error(path) == "model.py: hints must be a list of positive integers, e.g. [64, 256, 4096]"


# ---------------------------------------------------------------- through the command line


def test_record_of_a_broken_file_is_one_error_line_here_and_on_a_gpu(kinspect_process):
    result = kinspect_process("record", MODELS / "broken.py")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == ["kinspect: error: broken.py:7: syntax error: expected ':'"]


def test_a_broken_model_file_is_one_error_line_from_the_command(kinspect_process):
    """`explain MODEL.py` loads the file before it needs a GPU, so the loader's message
    reaches the user on any machine."""
    result = kinspect_process("explain", MODELS / "broken.py")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines() == ["kinspect: error: broken.py:7: syntax error: expected ':'"]
