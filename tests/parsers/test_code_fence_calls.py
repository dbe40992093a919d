"""Calls of offered tools written as Python in a code fence, and ``print(...)`` around a call.

Google's function-calling guides for Gemma (and Gemini's code-execution
habit) have the model write ```` ```tool_code\nprint(get_weather(city="Paris"))\n``` ````;
real outputs drift to a ``python`` label, to no label, and to the Gemini
SDK's ``default_api.`` namespace with positional arguments. A fence is a
call only when tools are offered and its body is nothing but calls of them:
a fence of other code is a sample and stays content.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp.parsers import get_parser, parse_response
from utp.types import DiagnosticKind, Tool

from .conftest import assert_every_cut_matches, streamed_at_cuts

WEATHER = Tool(
    "get_weather",
    parameters={"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]},
)
TOOLS = [WEATHER, Tool("search_web", parameters={"type": "object", "properties": {"query": {"type": "string"}}})]


def _calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


@pytest.mark.parametrize("label", ["python", "py", "Python", "python3", ""])
def test_a_fence_of_calls_of_offered_tools_is_a_call(label: str) -> None:
    text = f'I will look it up.\n```{label}\nget_weather(city="Paris", days=2)\n```'
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris", "days": 2})]
    assert parsed.content == "I will look it up."
    assert parsed.tool_calls[0].format == "pythonic"


def test_print_around_the_call_is_removed_and_recorded() -> None:
    [call] = parse_response('```tool_code\nprint(get_weather(city="Paris"))\n```', tools=TOOLS).tool_calls
    assert (call.name, call.arguments) == ("get_weather", {"city": "Paris"})
    assert any("print(...)" in note for note in call.repairs)


def test_gemini_namespace_and_positional_arguments_resolve_through_the_offered_tool() -> None:
    text = "```python\nprint(default_api.get_weather('北京', 3))\n```"
    parsed = parse_response(text, tools=TOOLS)
    [call] = parsed.tool_calls
    assert (call.name, call.arguments, call.known) == ("get_weather", {"city": "北京", "days": 3}, True)
    assert any(d.kind == DiagnosticKind.NAME_CORRECTED for d in parsed.diagnostics)


def test_several_calls_one_per_line_and_triple_quoted_strings() -> None:
    text = '```\nget_weather(city="Paris")\nsearch_web(query=\'\'\'two\nlines\'\'\')\n```'
    assert _calls(text) == [("get_weather", {"city": "Paris"}), ("search_web", {"query": "two\nlines"})]


def test_a_call_list_in_a_fence() -> None:
    assert _calls('```python\n[get_weather(city="Paris"), search_web(query="x")]\n```') == [
        ("get_weather", {"city": "Paris"}),
        ("search_web", {"query": "x"}),
    ]


def test_a_call_whose_result_is_kept_and_printed_is_that_call() -> None:
    """The ``tool_code`` habit (keep the result, print it) under a ``python`` label: real
    mistral:7b-instruct output in Harbor's parser tests. The fence used to stay code."""
    text = (
        "To find the last email, I'll use the search_emails function:\n\n"
        "```python\nresults = search_web(query='from:emma@example.com')\nprint(results)\n```"
    )
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("search_web", {"query": "from:emma@example.com"})]
    assert any("result assigned to 'results'" in note for note in parsed.tool_calls[0].repairs)
    assert parsed.content == "To find the last email, I'll use the search_emails function:"


def test_print_wrapped_call_in_a_bare_list() -> None:
    assert _calls('[print(get_weather(city="Oslo"))]') == [("get_weather", {"city": "Oslo"})]


@pytest.mark.parametrize(
    "text",
    [
        '```python\nresult = get_weather(city="Paris")\nprint(result["temp"])\n```',  # code using the result
        '```python\nresult = get_weather(city="Paris")\nif result:\n    print(result)\n```',
        '```python\nresult = other(city="Paris")\nprint(result)\n```',  # a name that is no tool
        '```python\nget_weather(city="Paris")\nother(1)\n```',  # a name that is no tool
        '```python\nget_weather(city=city)\n```',  # a variable: code, not a call
        '```python\nimport os\nget_weather(city="Paris")\n```',
        '```js\nget_weather(city="Paris")\n```',  # another language
        '```python\nget_weather(city="Paris")\n',  # never closed: a sample cut off
        '```python\nprint("hello")\n```',
        'Inline ```python get_weather(city="Paris")```',
    ],
)
def test_other_code_in_a_fence_stays_content(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == []
    assert parsed.content.strip() == text.strip()


def test_without_tools_a_python_fence_is_code() -> None:
    text = '```python\nget_weather(city="Paris")\n```'
    parsed = parse_response(text)
    assert parsed.tool_calls == [] and parsed.content == text
    # the fenced family still reads JSON in fences; the Python reading is not even tried
    assert "pythonic" not in [c.family.name for c in get_parser("auto").scanner.candidates["```"]]
    assert "pythonic" in [c.family.name for c in get_parser("auto", TOOLS).scanner.candidates["```"]]


STREAM_TEXTS = [
    'Checking.\n```python\nprint(default_api.get_weather(city="Paris"))\n```\nDone.',
    '```py\nget_weather(city="Paris")\nsearch_web(query="x")\n```',
    '```python\nx = get_weather(city="Paris")\n```\nand more',
    '```python\nresults = search_web(query="x")\nprint(results)\n```',
    '```\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n```',
]


@pytest.mark.parametrize("text", STREAM_TEXTS)
def test_streaming_any_single_and_double_cut_matches_one_shot(text: str) -> None:
    assert_every_cut_matches(text, TOOLS, step=7)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.text(alphabet=st.sampled_from(list('get_weather(city="P")\nprint[]`py,=\'x ')), max_size=60))
def test_any_fence_body_parses_without_error_and_streams_the_same(body: str) -> None:
    text = f"```python\n{body}\n```"
    parsed = parse_response(text, tools=TOOLS)
    assert not [d for d in parsed.diagnostics if "parser error" in d.reason]
    content, calls = streamed_at_cuts(text, tools=TOOLS, cuts=[len(text) // 3, len(text) // 2])
    assert (content, calls) == (parsed.content, [(c.name, c.arguments) for c in parsed.tool_calls])
