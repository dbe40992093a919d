"""Pythonic lists with one unreadable call, Llama 4's ``<|python_start|>`` wrapper, MiniMax-M1 lines.

Vectors marked "fixture" are the test inputs of vLLM's own parsers (cited by
path in vllm-project/vllm); the others follow each format's definition.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.types import DiagnosticKind, Tool

from .test_fixture_formats_a import assert_stream_matches, calls

TOOLS = [Tool("get_weather"), Tool("register_user"), Tool("do_something_cool"), Tool("valid_tool"), Tool("another_valid_tool")]
LA = ("get_weather", {"city": "LA", "metric": "C"})


def unparseable(text: str) -> list[str]:
    return [d.reason for d in parse_response(text).diagnostics if d.kind is DiagnosticKind.UNPARSEABLE]


# ---------------------------------------------------------------- (1) one bad call keeps its siblings

# fixture: tests/tool_parsers/test_llama4_pythonic_tool_parser.py (test_bad_sibling_call_does_not_drop_good_calls,
# test_non_finite_argument_rejected); tests/tool_parsers/test_olmo3_tool_parser.py (bad sibling)
BAD_SIBLINGS = [
    ("<|python_start|>[bad(x=b'z'), get_weather(city='LA', metric='C')]<|python_end|>", [LA], "bad"),
    ("<|python_start|>[calc(x=1e999), get_weather(city='LA', metric='C')]<|python_end|>", [LA], "calc"),
    ("[bad(x=b'z'), get_weather(city='LA', metric='C')]", [LA], "bad"),
    ("[get_weather(city='LA', metric='C'), calc(x=-1e999), c(z=1j)]", [LA], "calc"),
    (
        "<function_calls>bad(x=b'z')\nget_weather(city='San Francisco', metric='celsius')</function_calls>",
        [("get_weather", {"city": "San Francisco", "metric": "celsius"})],
        "bad",
    ),
    ("<|tool_call_start|>[bad(x=b'z'), get_weather(city='LA', metric='C')]<|tool_call_end|>", [LA], "bad"),
]


@pytest.mark.parametrize("text,expected,bad", BAD_SIBLINGS)
@pytest.mark.parametrize("with_tools", [False, True])
def test_bad_sibling_is_reported_and_the_rest_kept(text: str, expected: list, bad: str, with_tools: bool) -> None:
    kw = {"tools": TOOLS} if with_tools else {}
    parsed = parse_response(text, **kw)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == expected
    assert parsed.content == ""
    reasons = [d.reason for d in parsed.diagnostics if d.kind is DiagnosticKind.UNPARSEABLE]
    assert any(repr(bad) in r and "not run" in r for r in reasons), reasons
    assert_stream_matches(text)


def test_non_finite_number_is_never_an_argument() -> None:
    # the fast reader and the ast reader agree: 1e999 is no JSON number
    for text in ("[calc(x=1e999)]", "<|python_start|>[calc(x=1e999)]<|python_end|>"):
        assert calls(text) == []
    assert unparseable("<|python_start|>[calc(x=1e999)]<|python_end|>")


def test_salvage_needs_a_well_formed_call_list() -> None:
    # fixture: mismatched brackets -> no calls (test_llama4_pythonic_tool_parser.py, test_olmo3_tool_parser.py);
    # a closer that closes nothing right before the list's own is dropped (recorded), as small models write it
    # in BFCL runs: the call is read. Brackets that cannot be matched stay unreadable.
    assert calls("<|python_start|>[foo(x=1])]<|python_end|>") == [("foo", {"x": 1})]
    assert calls("<|python_start|>[foo(x=[1)]<|python_end|>") == []
    assert unparseable("<|python_start|>[foo(x=[1)]<|python_end|>")
    # a non-call item, or code naming variables in a bare list, stays prose
    assert calls("[print(1), x]") == []
    assert parse_response("[f(x), g(1)]").content == "[f(x), g(1)]"
    assert parse_response("[f(x), g(1)]").tool_calls == []


# ---------------------------------------------------------------- (2) Llama 4 <|python_start|>

# fixture: tests/tool_parsers/test_llama4_pythonic_tool_parser.py; the wrapper is Llama 4's code-block
# tokens, which vLLM's llama4_pythonic parser strips before reading the list (also without <|python_end|>)
LLAMA4 = [
    ("<|python_start|>[get_weather(city='LA', metric='C')]<|python_end|>", [LA], ""),
    ("<|python_start|>[get_weather(city='LA', metric='C'), register_user(name='Doe', age=9)]", [LA, ("register_user", {"name": "Doe", "age": 9})], ""),
    ("<|python_start|>[get_weather(city='LA',metric='C'),register_user(name='Doe', age=9)]", [LA, ("register_user", {"name": "Doe", "age": 9})], ""),
    (
        "<|python_start|>[get_weather(city='LA', metric='C'), get_weather(), do_something_cool(steps=[])]<|python_end|>",
        [LA, ("get_weather", {}), ("do_something_cool", {"steps": []})],
        "",
    ),
    # fixture: sgl-project/sglang test/registered/function_call/test_function_call_parser.py (mid-text)
    (
        "User wants to get the weather in Mars. <|python_start|>[get_weather(location='Mars', unit='celsius')]<|python_end|> In this way we will get the weather in Mars.",
        [("get_weather", {"location": "Mars", "unit": "celsius"})],
        None,
    ),
    # a single call without brackets, as the LFM2 wrapper allows
    ("<|python_start|>get_weather(city='LA', metric='C')<|python_end|>", [LA], ""),
]


@pytest.mark.parametrize("text,expected,content", LLAMA4)
def test_llama4_python_start_wrapper(text: str, expected: list, content: str | None) -> None:
    for kw in ({}, {"tools": TOOLS}):
        parsed = parse_response(text, **kw)
        assert [(c.name, c.arguments) for c in parsed.tool_calls] == expected
        if content is not None:
            assert parsed.content == content
        assert "python_start" not in parsed.content and "python_end" not in parsed.content
    assert_stream_matches(text)


@pytest.mark.parametrize(
    "text",
    [
        "Llama 4 marks code with <|python_start|> and <|python_end|>.",
        "<|python_start|>x = 1\nprint(x)<|python_end|>",
        "<|python_start|>{\"a\": 1}<|python_end|>",
        "The token <|python_start|> opens a block.",
    ],
)
def test_llama4_wrapper_without_a_call_stays_content(text: str) -> None:
    parsed = parse_response(text)
    assert parsed.tool_calls == []
    assert_stream_matches(text)


# ---------------------------------------------------------------- (3) MiniMax-M1: one JSON object per line

# fixture: tests/tool_parsers/test_minimax_tool_parser.py ("skip invalid line"); definition: vLLM's
# minimax_tool_parser reads the <tool_calls> block line by line and skips a line it cannot decode
MINIMAX_SKIP = (
    '<tool_calls>\n{"name": "valid_tool", "arguments": {"city": "Seattle"}}\n{invalid json here}\n'
    '{"name": "another_valid_tool", "arguments": {"param": "value"}}\n</tool_calls>'
)


def test_minimax_bad_line_is_skipped_and_reported() -> None:
    parsed = parse_response(MINIMAX_SKIP)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [
        ("valid_tool", {"city": "Seattle"}),
        ("another_valid_tool", {"param": "value"}),
    ]
    assert parsed.content == ""
    bad = [d for d in parsed.diagnostics if d.kind is DiagnosticKind.UNPARSEABLE]
    assert len(bad) == 1 and bad[0].raw == "{invalid json here}"
    assert_stream_matches(MINIMAX_SKIP)
    assert_stream_matches(MINIMAX_SKIP + " and after")


def test_minimax_several_bad_lines_and_non_call_lines() -> None:
    text = (
        '<tool_calls>\n{bad one}\n{"name": "a", "arguments": {}}\n{"not": "a call"}\n[1, 2]\n'
        '{"name": "b", "arguments": {"x": 1}}\n</tool_calls> done'
    )
    parsed = parse_response(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("a", {}), ("b", {"x": 1})]
    assert parsed.content == "done"
    assert len([d for d in parsed.diagnostics if d.kind is DiagnosticKind.UNPARSEABLE]) == 3
    assert_stream_matches(text)


def test_minimax_never_lifts_a_call_out_of_a_broken_call() -> None:
    # the inner object is an argument of the broken outer call: it must not run
    text = (
        '<tool_calls>\n{"name": "schedule", "arguments": {"jobs": [\n'
        '{"name": "rm", "arguments": {"path": "/"}}\n], oops}}\n</tool_calls> after'
    )
    parsed = parse_response(text)
    assert parsed.tool_calls == []
    assert parsed.content == "after"
    assert unparseable(text)
    assert_stream_matches(text)


def test_minimax_bad_last_line_and_unclosed_block() -> None:
    text = '<tool_calls>\n{"name": "a", "arguments": {}}\n{broken}\n</tool_calls>'
    assert calls(text) == [("a", {})]
    assert unparseable(text)
    unclosed = '<tool_calls>\n{broken}\n{"name": "a", "arguments": {"k": 2}}'
    assert calls(unclosed) == [("a", {"k": 2})]
    assert_stream_matches(text)
    assert_stream_matches(unclosed)


# fixture: tests/tool_parsers/test_minimax_tool_parser.py (the well-formed cases stay as they were)
@pytest.mark.parametrize(
    "text,expected",
    [
        ('<tool_calls>\n{"name": "get_current_weather", "arguments": {"city": "Dallas"}}\n{"name": "get_current_weather", "arguments": {"city": "Orlando"}}\n</tool_calls>',
         [("get_current_weather", {"city": "Dallas"}), ("get_current_weather", {"city": "Orlando"})]),
        ('<tool_calls>\n{"name": "get_current_weather", "arguments": {"city": "Boston", "state": "MA"}}',
         [("get_current_weather", {"city": "Boston", "state": "MA"})]),
        ('<tool_calls>[{"name": "f", "arguments": {"a": 1}}]</tool_calls>', [("f", {"a": 1})]),
    ],
)
def test_minimax_and_jamba_well_formed(text: str, expected: list) -> None:
    assert calls(text) == expected
    assert_stream_matches(text)
