"""Symbolic sizes: what Inductor writes into a key at a hint, against the size's true value."""

from __future__ import annotations

import random

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic import mm_two_dims_site

from kinspect.core.errors import ShapeError
from kinspect.core.dispatch.operands import operand_names
from kinspect.core.dispatch.symbolic import MAX_DEPTH, ExprError, SizeExpr, TensorSpec, check_tree

s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)


# ---------------------------------------------------------------- key value against true value


def test_two_s0_at_hint_64_is_keyed_64_but_is_really_128():
    dim = SizeExpr(("mul", 2, "s0")).key_value(64), SizeExpr(("mul", 2, "s0")).true_value(64)
    assert dim == (64, 128)
    spec = TensorSpec("b", "input", (SizeExpr(4096), SizeExpr(("mul", 2, "s0"))))
    at = spec.at_hint(64)
    assert [(d.key_value, d.true_value, d.differs) for d in at] == [(4096, 4096, False), (64, 128, True)]
    assert spec.key_at_hint(64) == (4096, 64)
    assert spec.runtime_shape({"s0": 64}) == (4096, 128)


def test_a_plain_symbol_and_a_constant_are_what_their_key_says():
    assert SizeExpr("s0").key_value(256) == SizeExpr("s0").true_value(256) == 256
    assert SizeExpr(1024).key_value(256) == SizeExpr(1024).true_value(256) == 1024
    assert SizeExpr(1024).is_constant and not SizeExpr("s0").is_constant


def test_an_unmodelled_size_has_no_true_value_and_is_not_flagged():
    spec = TensorSpec("t", "input", (SizeExpr(("opaque", "sqrt(s0)")),))
    (dim,) = spec.at_hint(64)
    assert dim.key_value == 64 and dim.true_value is None and not dim.differs


def test_a_site_with_n_equal_2_s1_keys_the_hint_where_the_true_size_doubles():
    site = mm_two_dims_site(0, [64, 256], random.Random(0))
    assert site.variants[0].key == ((64, 4096), (4096, 64), (64, 64))
    b, out = site.tensors[1], site.tensors[2]
    assert [d.true_value for d in b.at_hint(64)] == [4096, 128]
    assert [d.differs for d in out.at_hint(64)] == [False, True]
    assert site.runtime_key({"s0": 64, "s1": 64}) == ((64, 4096), (4096, 128), (64, 128))


# ---------------------------------------------------------------- from sympy


class FloorDiv(sympy.Function):
    """Stands in for torch's FloorDiv: kinspect recognises Inductor's functions by name."""


class CeilDiv(sympy.Function):
    pass


class ModularIndexing(sympy.Function):
    pass


class PythonMod(sympy.Function):
    pass


class Unheard(sympy.Function):
    pass


@pytest.mark.parametrize(
    "expr, tree, text",
    [
        (2 * s0, ("mul", 2, "s0"), "2*s0"),
        (s0 + 1, ("add", 1, "s0"), "s0 + 1"),
        (s0 * s1, ("mul", "s0", "s1"), "s0*s1"),
        (s0**2, ("pow", "s0", 2), "s0**2"),
        (sympy.Max(s0, s1), ("max", "s0", "s1"), "Max(s0, s1)"),
        (sympy.Min(s0, 3), ("min", 3, "s0"), "Min(3, s0)"),
        (sympy.Mod(s0, 4), ("mod", "s0", 4), "Mod(s0, 4)"),
        (FloorDiv(s0, 2), ("floordiv", "s0", 2), "FloorDiv(s0, 2)"),
        (CeilDiv(s0, 64), ("ceildiv", "s0", 64), "CeilDiv(s0, 64)"),
        (ModularIndexing(s0, 2, 8), ("mod", ("floordiv", "s0", 2), 8), "Mod(FloorDiv(s0, 2), 8)"),
        (PythonMod(s0, s1), ("mod", "s0", "s1"), "Mod(s0, s1)"),
        (64 * FloorDiv(s0 + 63, 64), ("mul", 64, ("floordiv", ("add", 63, "s0"), 64)), "64*FloorDiv(s0 + 63, 64)"),
        (sympy.Integer(4096), 4096, "4096"),
        (7, 7, "7"),
    ],
)
def test_from_sympy_builds_the_tree_and_prints_it(expr, tree, text):
    size = SizeExpr.from_sympy(expr)
    assert size.tree == tree
    assert size.text == text
    assert SizeExpr.from_json(size.to_json()) == size


@pytest.mark.parametrize(
    "expr, text",
    [
        (Unheard(s0), "Unheard(s0)"),
        (s0 / 3, None),  # a Rational factor is not a size operation
        (sympy.Integer(2**70), str(2**70)),  # past 2**62 a constant cannot be stored as one
        (sympy.Symbol("__import__"), "__import__"),
        (sympy.Symbol("x" * 65), "x" * 65),
    ],
)
def test_what_kinspect_cannot_model_stays_opaque_text(expr, text):
    size = SizeExpr.from_sympy(expr)
    opaque = [size.tree] if size.tree[0] == "opaque" else [a for a in size.tree[1:] if isinstance(a, tuple)]
    assert opaque and all(o[0] == "opaque" for o in opaque)
    if text is not None:
        assert size.text == text
    with pytest.raises(ShapeError, match="cannot evaluate"):
        size.evaluate({"s0": 6})
    assert SizeExpr.from_json(size.to_json()) == size  # and it survives a save


def test_from_sympy_reads_torchs_own_size_functions():
    functions = pytest.importorskip("torch.utils._sympy.functions")
    cases = {
        functions.FloorDiv(s0, 2): ("floordiv", "s0", 2),
        functions.ModularIndexing(s0, 2, 8): ("mod", ("floordiv", "s0", 2), 8),
        functions.PythonMod(s0, s1): ("mod", "s0", "s1"),
        functions.CleanDiv(s0, s1): ("floordiv", "s0", "s1"),
    }
    for expr, tree in cases.items():
        assert SizeExpr.from_sympy(expr).tree == tree, expr
    assert SizeExpr.from_sympy(functions.CeilDiv(s0, 64)).evaluate({"s0": 65}) == 2


# ---------------------------------------------------------------- evaluation


@pytest.mark.parametrize(
    "tree, value",
    [
        (("add", "s0", 1, "s1"), 108),
        (("mul", 2, "s0"), 200),
        (("pow", "s1", 2), 49),
        (("floordiv", "s0", "s1"), 14),
        (("ceildiv", "s0", "s1"), 15),
        (("mod", "s0", "s1"), 2),
        (("max", "s0", "s1", 300), 300),
        (("min", "s0", "s1"), 7),
        (("mul", 64, ("floordiv", ("add", 63, "s0"), 64)), 128),
    ],
)
def test_evaluate(tree, value):
    assert SizeExpr(check_tree(list_form(tree))).evaluate({"s0": 100, "s1": 7}) == value


@pytest.mark.parametrize(
    "tree, message",
    [
        (("add", "s0", "s2"), "needs a value for s2"),
        (("floordiv", "s0", 0), "division by zero in size expression"),
        (("mod", "s0", ("add", "s1", -7)), "division by zero in size expression"),
        (("pow", "s0", 63), "unsupported exponent 63 in size expression"),
        (("pow", "s0", -1), "unsupported exponent -1 in size expression"),
        (("mul", 2**62, 2**62, 2**62), f"size {2**186} exceeds 2**62"),
        (("mul", 2**31, ("add", "s0", 2**31)), "size 2147483648*s0 + 4611686018427387904 exceeds 2**62 at s0=100"),
        (("opaque", "sqrt(s0)"), "cannot evaluate 'sqrt(s0)': kinspect does not model it"),
    ],
)
def test_evaluation_errors_say_what_is_wrong(tree, message):
    with pytest.raises(ShapeError) as err:
        SizeExpr(tree).evaluate({"s0": 100, "s1": 7})
    assert str(err.value) == message


def list_form(tree):
    return [tree[0], *(list_form(a) if isinstance(a, tuple) else a for a in tree[1:])] if isinstance(tree, tuple) else tree


def _reference(tree, env):
    """The same expression evaluated by sympy, independently of kinspect's walker."""
    if isinstance(tree, int):
        return sympy.Integer(tree)
    if isinstance(tree, str):
        return sympy.Integer(env[tree])
    op, *args = tree
    a = [_reference(x, env) for x in args]
    return {
        "add": lambda: sympy.Add(*a), "mul": lambda: sympy.Mul(*a), "max": lambda: sympy.Max(*a),
        "min": lambda: sympy.Min(*a), "mod": lambda: sympy.Mod(*a), "floordiv": lambda: sympy.floor(a[0] / a[1]),
        "ceildiv": lambda: sympy.ceiling(a[0] / a[1]),
    }[op]()


LEAF = st.one_of(st.integers(1, 1000), st.sampled_from(["s0", "s1", "s2"]))
TREE = st.recursive(
    LEAF,
    lambda inner: st.one_of(
        st.tuples(st.sampled_from(["add", "mul", "max", "min"]), inner, inner).map(tuple),
        st.tuples(st.sampled_from(["floordiv", "ceildiv", "mod"]), inner, st.integers(1, 64)),
    ),
    max_leaves=8,
)


@settings(max_examples=300, derandomize=True, database=None)
@given(TREE, st.fixed_dictionaries({"s0": st.integers(1, 10**6), "s1": st.integers(0, 4096), "s2": st.integers(1, 64)}))
def test_evaluation_agrees_with_sympy(tree, env):
    size = SizeExpr.from_json(list_form(tree))
    assert size.evaluate(env) == int(_reference(size.tree, env))
    assert SizeExpr.from_json(size.to_json()) == size


# ---------------------------------------------------------------- stored trees


def test_a_stored_tree_round_trips_as_json():
    tree = ["mul", 64, ["floordiv", ["add", 63, "s0"], 64]]
    size = SizeExpr.from_json(tree)
    assert size.to_json() == tree
    assert size.symbols == {"s0"}


def _nested(depth: int):
    tree = "s0"
    for _ in range(depth):
        tree = ["add", tree, 1]
    return tree


@pytest.mark.parametrize(
    "node, message",
    [
        (["__import__", "os"], "unknown expression operation '__import__'"),
        (["eval", "s0"], "unknown expression operation 'eval'"),
        ("__import__('os').system('x')", "not a symbol name"),
        ("__import__", "not a symbol name: '__import__'"),
        ("__class__", "not a symbol name"),
        ("s 0", "not a symbol name"),
        ("x" * 65, "not a symbol name"),
        (True, "expression leaf must be an integer or a symbol name, got a boolean"),
        (1.5, "expression node must be an int, a symbol name or [op, ...], got float"),
        ({"op": "add"}, "got dict"),
        ([], "got list"),
        ([1, 2], "got list"),
        (["add", "s0"], "operation add takes 2+ arguments, got 1"),
        (["pow", "s0", 2, 3], "operation pow takes 2 arguments, got 3"),
        (["opaque", 5], "opaque expression must hold its text"),
        (["opaque", "x" * 2001], "at most 2000 characters"),
        (["opaque", "\x1b[31mred"], "opaque expression text holds a control character"),
        (["opaque", "\x9b31mred"], "control character"),
        (2**62 + 1, "expression constant exceeds 2**62"),
        (_nested(MAX_DEPTH + 1), f"expression nested deeper than {MAX_DEPTH}"),
    ],
)
def test_stored_trees_outside_the_format_are_refused(node, message):
    with pytest.raises(ExprError) as err:
        SizeExpr.from_json(node)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_trees_up_to_the_depth_limit_are_accepted():
    assert SizeExpr.from_json(_nested(MAX_DEPTH)).evaluate({"s0": 1}) == MAX_DEPTH + 1


@given(st.sampled_from(["mul", "add"]),
       st.lists(st.sampled_from(["s0", "s1", "s33", "s50", "s100", "B"]), min_size=1, max_size=3, unique=True),
       st.one_of(st.none(), st.integers(min_value=-3, max_value=70)))
def test_plain_text_of_flat_sizes_is_sympys(op, syms, num):
    import sympy

    args = [*syms] + ([] if num is None else [num])
    if len(args) < 2:
        args.append(2)
    e = SizeExpr((op, *args))
    assert e.text == sympy.sstr(e.to_sympy())


def test_opening_the_gpt2_sample_and_its_findings_imports_no_sympy():
    """Its keys hold B*S: the findings' text prints them without sympy (0.25 s at open)."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys; from kinspect.core.store import load; "
            "s = load(sys.argv[1]); assert any(f.kind == 'key-not-true-size' for f in s.findings); "
            "print('sympy' in sys.modules)")
    path = Path(__file__).resolve().parent.parent / "samples" / "gpt2.session.json"
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_sizes_read_by_the_users_names():
    """The inspector shows `B*S` where Inductor wrote `s33*s50`, and leaves other symbols be."""
    assert SizeExpr(("mul", "s33", "s50")).text_with({"s33": "B", "s50": "S"}) == "B*S"
    assert SizeExpr(("add", "s33", "s7", 1)).text_with({"s33": "B"}) == "B + s7 + 1"
    assert SizeExpr(4096).text_with({"s33": "B"}) == "4096"


def test_tensors_are_named_by_their_part_in_the_op():
    def spec(name: str, role: str) -> TensorSpec:
        return TensorSpec(name, role, (SizeExpr("s0"),))

    addmm = [spec("arg1_1", "input"), spec("arg3_1", "input"), spec("arg0_1", "input"), spec("buf0", "output")]
    assert operand_names("addmm", addmm) == ["bias", "x", "weight", "out"]
    assert operand_names("mm", addmm[1:]) == ["a", "b", "out"]
    assert operand_names("baddbmm", addmm) == ["bias", "a", "b", "out"]
    # an op kinspect does not know, or inputs the op does not take: Inductor's names
    assert operand_names("convolution", addmm) == ["arg1_1", "arg3_1", "arg0_1", "buf0"]
    assert operand_names("mm", addmm) == ["arg1_1", "arg3_1", "arg0_1", "buf0"]


@pytest.mark.parametrize("tree, shown", [
    (("max", *[f"s{i}" for i in range(63)]), "Max(s0, s1, s2, s3, s4"),  # 3.5 s in sympy
    (("min", *[("add", f"s{i}", 1) for i in range(8)]), "Min(s0 + 1, s1 + 1, s2 + 1"),
    (("mod", ("mul", *[f"s{i}" for i in range(12)]), 7), "Mod(s0*s1*s2*s3"),
])
def test_sizes_sympy_is_slow_on_are_written_as_they_are_never_given_to_it(monkeypatch, tree, shown):
    from kinspect.core.dispatch import symbolic

    monkeypatch.setattr(symbolic, "_sympy", lambda: pytest.fail("sympy was asked to print it"))
    symbolic._text.cache_clear()
    assert SizeExpr(tree).text.startswith(shown)
    assert SizeExpr(tree).text_with({"s0": "B"}).startswith(shown.replace("s0", "B", 1))


def test_small_max_and_min_are_still_sympys():
    assert SizeExpr(("max", 1, "s0")).text == "Max(1, s0)"
    assert SizeExpr(("mod", ("add", "s0", 1), 8)).text == str(sympy.Mod(sympy.Symbol("s0", integer=True, nonnegative=True) + 1, 8))
