"""Python-style calls Python refuses, read as the model meant them (``utp.parsers.pylenient``).

LFM2 and Llama-3.2-style models leave quotes unescaped inside strings
(``'it's here'``, code holding ``"..."``), write Windows paths with single
backslashes, and now and then a bare word for a string. Behind a call marker
or an offered tool's name such a list is read, with a repair recorded; code
and prose stay what they are, and valid Python reads exactly as before.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from utp.parsers import parse_response
from utp.parsers.pylenient import BARE_KEY, BARE_TEXT, BARE_WORD, COLON_KEYWORD, UNESCAPED_STRING, read_lenient_calls
from utp.parsers.pyliteral import RawCall, parse_calls
from utp.parsers.families.pythonic import python_literal

from .conftest import assert_every_cut_matches, assert_stream_matches_under

TOOLS = [
    {"name": "save", "parameters": {"type": "object", "properties": {"lines": {"type": "array"}, "obj": {"type": "object"}}}},
    {"name": "execute", "parameters": {"type": "object", "properties": {"code": {"type": "string"}}}},
    {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "encoding": {"type": "string"}}}},
    {"name": "configure", "parameters": {"type": "object", "properties": {"count": {"type": "integer"}, "mode": {"type": "string"}}}},
    {"name": "send_email", "parameters": {"type": "object", "properties": {"to": {"type": "string"}, "subject": {"type": "string"}, "body": {"type": "string"}}}},
]

CODE = 'import os\n\ndef main():\n    d = {"k": "v"}\n    print(f"{d["k"]} done")\n'

READ = {
    "apostrophes in a list of strings": (
        "<|tool_call_start|>[save(lines=['it's a fine day', 'My name's Jan', 'That's Johns' car.'])]<|tool_call_end|>",
        ("save", {"lines": ["it's a fine day", "My name's Jan", "That's Johns' car."]}),
        UNESCAPED_STRING,
    ),
    "apostrophes in a dict": (
        "[save(obj={'name': 'it's here', 'note': 'Hello, it's me'})]",
        ("save", {"obj": {"name": "it's here", "note": "Hello, it's me"}}),
        UNESCAPED_STRING,
    ),
    "code with its own double quotes": (
        f'<|tool_call_start|>[execute(code="{CODE}")]<|tool_call_end|>',
        ("execute", {"code": CODE}),
        UNESCAPED_STRING,
    ),
    "a Windows path": (
        '[read_file(path="C:\\Users\\test\\file.txt", encoding="utf-8")]',
        ("read_file", {"path": "C:\\Users\\test\\file.txt", "encoding": "utf-8"}),
        UNESCAPED_STRING,
    ),
    "a bare word for a string": (
        "<|tool_call_start|>[configure(count=5, mode=fast)]<|tool_call_end|>",
        ("configure", {"count": 5, "mode": "fast"}),
        BARE_WORD,
    ),
    "unquoted text for strings (Gemma 3 under BFCL's prompt)": (
        "[send_email(to=john.doe@example.com, subject=Weekly sync, body=Let's meet at 10 AM tomorrow)]",
        ("send_email", {"to": "john.doe@example.com", "subject": "Weekly sync", "body": "Let's meet at 10 AM tomorrow"}),
        BARE_TEXT,
    ),
    "an unquoted path": (
        "[read_file(path=~/data/scan-01.nii, encoding=utf-8)]",
        ("read_file", {"path": "~/data/scan-01.nii", "encoding": "utf-8"}),
        BARE_TEXT,
    ),
    "unquoted tokens that open as numbers do (ToolACE-8B in a tau-bench run)": (
        "[send_email(to=Johnr, subject=12345r, body=2024-01-05)]",
        ("send_email", {"to": "Johnr", "subject": "12345r", "body": "2024-01-05"}),
        BARE_TEXT,
    ),
    "a version, unquoted": (
        "[configure(count=3, mode=1.2.3)]",
        ("configure", {"count": 3, "mode": "1.2.3"}),
        BARE_TEXT,
    ),
}


@pytest.mark.parametrize("case", sorted(READ))
def test_calls_python_refuses_are_read_as_meant(case: str) -> None:
    text, (name, arguments), repair = READ[case]
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [(name, arguments)]
    assert repair in parsed.tool_calls[0].repairs
    assert_stream_matches_under(text, TOOLS, 7)


def test_a_marked_block_is_read_without_tools_too() -> None:
    assert [c.name for c in parse_response(READ["a bare word for a string"][0]).tool_calls] == ["configure"]


def test_streams_agree_at_every_cut() -> None:
    assert_every_cut_matches("Saving.\n" + READ["apostrophes in a list of strings"][0] + "\nDone.", TOOLS, 5)


STAYS = {
    "code naming variables": "[save(lines), execute(code)]",
    "a bare word as a positional value": "[execute(fast)]",
    "an operator": "[configure(count=5 + 2)]",
    "an operator after a number, unspaced": "[configure(count=5+2)]",
    "a number out of range": "[configure(count=1e999)]",
    "an expression for a string": "[execute(code=a * b)]",
    "a call for a value": "[execute(code=run(1))]",
    "unquoted text for a name nobody offered": "[remove(path=~/data/a.nii)]",
    "a name nobody offered": "[remove(path='it's gone')]",
    "a string that never closes": "[save(lines=['it's)]",
    "prose in brackets": "See [save(lines='a's) and more] later.",
}


@pytest.mark.parametrize("case", sorted(STAYS))
def test_code_and_prose_stay_unread(case: str) -> None:
    assert parse_response(STAYS[case], tools=TOOLS).tool_calls == []


@pytest.mark.parametrize(
    "source",
    ["[f(a=1)", "[f(a='x'; b=2)]", "[f(a=[1, 2)]", "f(a=1) g(b=2)", "[f(a={'k' 'v'})]", "[f(" * 200 + "a=1" + ")" * 200 + "]"],
)
def test_what_the_reader_cannot_read_is_none(source: str) -> None:
    assert read_lenient_calls(source) is None


values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet="abcxyz_", min_size=1, max_size=5), inner, max_size=3),
    max_leaves=8,
)
keywords = st.dictionaries(st.sampled_from(["a", "city", "path", "n_items", "mode"]), values, max_size=4)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["f", "get_weather", "ns.tool"]), keywords), min_size=1, max_size=3))
def test_valid_python_reads_as_the_strict_reader_reads_it(calls: list[tuple[str, dict]]) -> None:
    source = "[" + ", ".join(f"{name}({', '.join(f'{k}={python_literal(v)}' for k, v in args.items())})" for name, args in calls) + "]"
    strict, _ = parse_calls(source)
    lenient = read_lenient_calls(source)
    assert lenient is not None
    assert [(c.name, c.keywords) for c in lenient[0]] == [(c.name, c.keywords) for c in strict]


# -- keyword arguments written ``name: value`` (Swift's and TypeScript's way), as small local models
#    write them: tool-calling-benchmark's recorded replies of LFM2.5-1.2B and smollm3 on Ollama

WEATHER = [
    {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}},
    {"name": "search_files", "parameters": {"type": "object", "properties": {"pattern": {"type": "string"}}}},
]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("<tool_call>get_weather(city: Antwerp)</tool_call>", [("get_weather", {"city": "Antwerp"})]),
        ('<tool_call>get_weather(city: "London", days: 3)</tool_call>', [("get_weather", {"city": "London", "days": 3})]),
        ('search_files(pattern: "train to Bruges")\n', [("search_files", {"pattern": "train to Bruges"})]),
        ('[get_weather(city: "Paris"), search_files(pattern: "*.py")]', [("get_weather", {"city": "Paris"}), ("search_files", {"pattern": "*.py"})]),
        ('I\'ll check.\nget_weather(city: "Rome")', [("get_weather", {"city": "Rome"})]),
    ],
)
def test_keyword_arguments_written_with_a_colon_are_read(text: str, expected: list) -> None:
    parsed = parse_response(text, tools=WEATHER)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == expected
    assert all(COLON_KEYWORD in c.repairs for c in parsed.tool_calls)
    assert_every_cut_matches(text, WEATHER, 6)


@pytest.mark.parametrize(
    "text",
    [
        "get_weather(city: str)",  # a signature: the annotation is no value
        "get_weather(city: str, days: int) -> dict",
        "def get_weather(city: str):\n    pass",
        'Call get_weather(city: "Paris") to get the weather.',  # a sentence
        "get_weather(city: Paris)",  # without a marker a bare word stays code, as with "="
        'print(f"{x: >10}")',
    ],
)
def test_a_colon_inside_parentheses_is_no_call_elsewhere(text: str) -> None:
    assert parse_response(text, tools=WEATHER).tool_calls == []
    assert_stream_matches_under(text, WEATHER, 3)


def test_the_lenient_reader_refuses_a_type_where_a_colon_keywords_value_belongs() -> None:
    assert read_lenient_calls("get_weather(city: str)") is None
    assert read_lenient_calls('get_weather(city: "str")') == ([RawCall("get_weather", keywords={"city": "str"})], [COLON_KEYWORD])


def test_a_javascript_object_argument_is_read_in_a_whole_answer() -> None:
    """qwen2.5-coder-0.5b's recorded BFCL reply (simple_python_4, prompt-hermes): keys written bare."""
    tools = [{"name": "solve_quadratic_equation", "parameters": {"type": "object", "properties": {k: {"type": "integer"} for k in "abc"}}}]
    parsed = parse_response("solve_quadratic_equation({a: 2, b: 6, c: 5})", tools=tools)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("solve_quadratic_equation", {"a": 2, "b": 6, "c": 5})]
    assert BARE_KEY in parsed.tool_calls[0].repairs
    assert parse_response("solve_quadratic_equation({a: x, b: 6, c: 5})", tools=tools).tool_calls == []  # a bare value stays code
