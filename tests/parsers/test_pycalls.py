"""The ast-free reader of simple pythonic calls gives exactly the ast reader's answer, or none."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from utp.parsers.pycalls import read_simple_calls
from utp.parsers.pyliteral import LiteralError, _calls_from_tree, parse_expression, parse_calls
from utp.parsers.typedvalues import json_or_text


def ast_answer(source: str, one_per_line: bool) -> Any:
    try:
        calls = _calls_from_tree(parse_expression(source, "exec" if one_per_line else "eval"))
    except (LiteralError, RecursionError):
        return "error"
    return [(c.name, c.keywords, c.positional, c.repairs) for c in calls]


def fast_answer(source: str, one_per_line: bool) -> Any:
    calls = read_simple_calls(source, one_per_line)
    return None if calls is None else [(c.name, c.keywords, c.positional, c.repairs) for c in calls]


def same_values(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (1 is not 1.0 nor True here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same_values(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_values(a[k], b[k]) for k in a)
    if isinstance(a, float) and a != a:
        return b != b
    return bool(a == b)


PIECES = [
    "f", "get_weather", "a.b", "print", "print(", "True", "False", "None", "true", "null", "if", "class", "__debug__", "match", "ﬁ", "é",
    "0", "007", "1_0", "1j", "0x1F", "1.", ".5", "1e5", "-", "+", "1.2.3", "12",
    '"x"', "'y'", 'r"x"', 'b"x"', 'f"{x}"', '"a\\n"', '"\\x00"', '"""t"""', '"a" "b"', "'it''s'",
    "(", ")", "[", "]", "{", "}", ",", "=", "==", ":", ".", ";", " ", "  ", "\t", "\n", "\n  ", "#c", "\\\n", "*", "**",
]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=24).map("".join), st.booleans())
def test_token_soup_never_disagrees_with_ast(source: str, one_per_line: bool) -> None:
    fast = fast_answer(source, one_per_line)
    if fast is not None:
        assert same_values(fast, ast_answer(source, one_per_line)), source


NAMES = st.sampled_from(["f", "get_weather", "search.web", "null", "match", "_x", "print"])
KEYS = st.sampled_from(["a", "city", "null", "true", "match", "_", "class", "True", "__debug__"])
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8)


def values(depth: int = 2) -> st.SearchStrategy[str]:
    scalars = st.one_of(
        TEXT.map(lambda t: '"' + t.replace('"', "") + '"'),
        TEXT.map(lambda t: "'" + t.replace("'", "") + "'"),
        st.integers(-(10**20), 10**20).map(str),
        st.floats(allow_nan=False).map(repr),
        st.sampled_from(["True", "False", "None", "true", "false", "null", "- 3", "+2.5", "-True", "inf", "1e999"]),
    )
    if depth == 0:
        return scalars
    inner = values(depth - 1)
    return st.one_of(
        scalars,
        st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.lists(st.tuples(TEXT.map(lambda t: '"' + t.replace('"', "") + '"'), inner), max_size=3).map(
            lambda kv: "{" + ", ".join(f"{k}: {v}" for k, v in kv) + "}"
        ),
    )


@st.composite
def calls(draw: st.DrawFn) -> str:
    args = draw(st.lists(st.tuples(st.none() | KEYS, values()), max_size=4))
    sep = draw(st.sampled_from([", ", ",", ",\n  ", " , "]))
    trailing = draw(st.sampled_from(["", ","]))
    rendered = sep.join(v if k is None else f"{k}={v}" for k, v in args)
    return f"{draw(NAMES)}({rendered}{trailing if args else ''})"


@st.composite
def sources(draw: st.DrawFn) -> str:
    items = draw(st.lists(calls(), min_size=1, max_size=3))
    shape = draw(st.sampled_from(["list", "single", "lines", "semicolons"]))
    text = {"list": "[" + ", ".join(items) + "]", "single": items[0], "lines": "\n".join(items), "semicolons": "; ".join(items)}[shape]
    if draw(st.booleans()):  # one mutation: a piece inserted anywhere
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(PIECES)) + text[at:]
    return text


@settings(max_examples=500, deadline=None)
@given(sources(), st.booleans())
def test_rendered_calls_agree_with_ast(source: str, one_per_line: bool) -> None:
    fast = fast_answer(source, one_per_line)
    if fast is not None:
        assert same_values(fast, ast_answer(source, one_per_line)), source


@pytest.mark.parametrize(
    "source",
    [
        '[get_weather(city="Paris", days=3)]',
        "[get_weather(location='San Francisco, CA', unit=\"celsius\"), get_time(timezone='UTC')]",
        "book_flight(origin='NYC', direct=True, price=-12.5, seats=2, note=None, ratio=.5)",
        "[f()]",
        "[]",
    ],
)
def test_the_common_shapes_take_the_fast_road(source: str) -> None:
    assert fast_answer(source, False) is not None
    assert same_values(fast_answer(source, False), ast_answer(source, False))
    assert parse_calls(source)[1] == []


@pytest.mark.parametrize("source", ['[f(a="x\\ny")]', '[f(a={"k": [1]})]', "[f(1)]", "[f(a=(1, 2))]", "[f(a={1, 2})]", "[f(a={k=1})]", "[f(**{})]", "[f(a=1, a=2)]"])
def test_anything_else_is_left_to_ast(source: str) -> None:
    assert read_simple_calls(source) is None


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("San Francisco", "San Francisco"),
        (" true ", True),
        ("null", None),
        ("nothing", "nothing"),
        ("-3", -3),
        ('{"a": [1, 2]}', {"a": [1, 2]}),
        ("{'a': 1}", {"a": 1}),
        ("[1, 2", "[1, 2"),
        ("12 Main St", "12 Main St"),
    ],
)
def test_untyped_raw_values_are_the_json_they_spell_else_text(raw: str, value: object) -> None:
    assert json_or_text(raw) == value and type(json_or_text(raw)) is type(value)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False)))
def test_untyped_numbers_read_as_json_reads_them(number: int | float) -> None:
    text = json.dumps(number)
    assert json_or_text(text) == json.loads(text) and type(json_or_text(text)) is type(json.loads(text))


@pytest.mark.parametrize(("text", "family"), [("[f(p='a\\s+')]", "pythonic"), ("<|python_tag|>f.call(p='a\\s+')", "llama")])
def test_an_escape_python_does_not_know_reads_the_same_when_warnings_are_errors(text: str, family: str) -> None:
    """``'\\s'`` warns in Python (a SyntaxWarning from 3.12); under ``-W error`` that must not lose the call."""
    import warnings

    from utp.parsers import parse_response

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parsed = parse_response(text, tools=[{"name": "f", "parameters": {}}])
    assert [(c.name, c.arguments, c.format, c.repairs) for c in parsed.tool_calls] == [("f", {"p": "a\\s+"}, family, [])]
