"""The shape a user types: both forms parse, and every mistake names its column."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kinspect.core.errors import KinspectError, ShapeError
from kinspect.core.dispatch.shapes import MAX_SIZE, FullKey, SymbolShape, as_key, check_size, format_key, parse_shape


@pytest.mark.parametrize(
    "text, values",
    [
        ("B=1000", {"B": 1000}),
        ("B=1000 S=77", {"B": 1000, "S": 77}),
        ("B=1000, S=77", {"B": 1000, "S": 77}),
        ("  B = 1000 ,S=77,  ", {"B": 1000, "S": 77}),
        ("s97=0 _x1=1", {"s97": 0, "_x1": 1}),
        ("B=1_000", {"B": 1000}),
        ("B=0001", {"B": 1}),
        (f"B={MAX_SIZE}", {"B": MAX_SIZE}),
    ],
)
def test_symbol_values_parse(text, values):
    assert parse_shape(text) == SymbolShape(values)


@pytest.mark.parametrize(
    "text, key",
    [
        ("(1000,1024),(4096,1024)", ((1000, 1024), (4096, 1024))),
        ("(1000, 1024), (4096, 1024)", ((1000, 1024), (4096, 1024))),
        ("((1000,1024),(4096,1024))", ((1000, 1024), (4096, 1024))),
        ("[1000, 1024], [4096, 1024]", ((1000, 1024), (4096, 1024))),
        ("[[1000,1024],[4096,1024]]", ((1000, 1024), (4096, 1024))),
        ("(4096,),(1000,1024),(4096,1024),(1000,4096)", ((4096,), (1000, 1024), (4096, 1024), (1000, 4096))),
        ("(1000, 1024)", ((1000, 1024),)),
        ("((4,),)", ((4,),)),
        ("(1,2),", ((1, 2),)),
        ("(),(3,)", ((), (3,))),
        ("( 0 , 1 )", ((0, 1),)),
    ],
)
def test_full_keys_parse(text, key):
    assert parse_shape(text) == FullKey(key)


@settings(max_examples=200, derandomize=True, database=None)
@given(st.lists(st.lists(st.integers(0, MAX_SIZE), max_size=4), min_size=1, max_size=5))
def test_a_printed_key_parses_back(tensors):
    key = tuple(tuple(t) for t in tensors)
    assert parse_shape(format_key(key)) == FullKey(key)
    assert parse_shape(str(key)) == FullKey(key)  # Python's own tuple repr too


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty shape: type symbol values like B=1000, or a key like (1000,1024),(4096,1024)"),
        ("   ", "empty shape"),
        ("B", "column 2: expected '=' after B, found end of input"),
        ("B=", "column 3: expected a size (non-negative integer), found end of input"),
        ("B=x", "column 3: expected a size (non-negative integer), found 'x'"),
        ("B=-1", "column 3: size must not be negative, got -1"),
        ("B=1.5", "column 3: size must be an integer, got '1.5'"),
        ("B=1e3", "column 3: size must be an integer, got '1e3'"),
        ("B=4611686018427387905", "column 3: size exceeds 2**62, got 4611686018427387905"),
        ("B=" + "9" * 5000, "column 3: size exceeds 2**62, got 999999999999999999999999..."),
        ("B=-" + "9" * 5000, "column 3: size must not be negative"),
        ("B=1 B=2", "column 5: symbol B given twice"),
        ("=3", "column 1: expected a symbol name, found '='"),
        ("3B=1", "column 1: expected a symbol name, found '3'"),
        ("B=1 (2)", "column 5: expected a symbol name, found '('"),
        ("(1,2", "column 5: expected ',' or ')', found end of input"),
        ("(1;2)", "column 3: expected ',' or ')', found ';'"),
        ("(1,,2)", "column 4: expected a size (non-negative integer), found ','"),
        ("(-1,2)", "column 2: size must not be negative, got -1"),
        ("(1, 2.0)", "column 5: size must be an integer, got '2.0'"),
        ("(1,2],(3,)", "column 5: expected ',' or ')', found ']'"),
        ("(1,2))", "column 6: expected end of input, found ')'"),
        ("((1,2)", "column 7: expected ')' closing the key, found end of input"),
        ("(1,2) x", "column 7: expected end of input, found 'x'"),
        ("(1,2),x", "column 7: expected '(' opening a tensor shape, found 'x'"),
        ("(4611686018427387905,)", "column 2: size exceeds 2**62"),
    ],
)
def test_bad_shapes_name_the_column_and_what_was_expected(text, message):
    with pytest.raises(ShapeError) as err:
        parse_shape(text)
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)
    assert isinstance(err.value, KinspectError)


def test_as_key_validates_nested_sizes_with_their_position():
    assert as_key([[1, 2], (3,)]) == ((1, 2), (3,))
    for value, message in [
        (5, "key must be a list of tensor shapes"),
        ([[1], 2], "key: tensor 1 must be a list of sizes"),
        ([[1, -1]], "size at tensor 0 dim 1 must not be negative, got -1"),
        ([[1.0]], "size at tensor 0 dim 0 must be an integer, got 1.0"),
        ([[True]], "size at tensor 0 dim 0 must be an integer, got True"),
        ([[2**62 + 1]], "size at tensor 0 dim 0 exceeds 2**62"),
    ]:
        with pytest.raises(ShapeError) as err:
            as_key(value)
        assert str(err.value).startswith(message)


def test_check_size_accepts_the_bounds():
    assert check_size(0) == 0 and check_size(MAX_SIZE) == MAX_SIZE


def test_format_key_reads_like_python_without_noise():
    assert format_key(((4096,), (1000, 1024))) == "((4096,), (1000, 1024))"
    assert format_key(((),)) == "(())"
