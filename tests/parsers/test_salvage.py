"""One unreadable call in a list does not cost its readable siblings.

A Python-style list that is not valid Python as a whole is read item by item
(the broken call reported); a JSON list that closes is read element by
element. The same shapes that are not lists of calls stay prose.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response

from .conftest import assert_stream_matches_under

TOOLS = [
    {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
    {"name": "search", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}},
]

POSITIVE = {
    "pythonic list, one call not Python": ('[get_weather(city="Oslo"), search(q=@@bad)]', [("get_weather", {"city": "Oslo"})]),
    "pythonic list, commas inside strings": ('[search(q="a, b"), get_weather(city="Oslo" x)]', [("search", {"q": "a, b"})]),
    "json list, one call not JSON": ('[{"name": "search", "arguments": {"q": x}}, {"name": "get_weather", "arguments": {"city": "Oslo"}}]', [("get_weather", {"city": "Oslo"})]),
}

NEGATIVE = {
    "a list with an item that is no call": '[get_weather(city="Oslo"), not a call]',
    "brackets that do not balance": "See [get_weather(city=1), search(q=2) and (3]",
}


@pytest.mark.parametrize("case", sorted(POSITIVE))
def test_readable_siblings_are_kept_and_the_broken_one_reported(case: str) -> None:
    text, want = POSITIVE[case]
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == want
    assert any(d.kind.value == "unparseable" for d in parsed.diagnostics)


@pytest.mark.parametrize("case", sorted(NEGATIVE))
def test_not_a_list_of_calls(case: str) -> None:
    assert parse_response(NEGATIVE[case], tools=TOOLS).tool_calls == []


@pytest.mark.parametrize("case", sorted({**POSITIVE, **NEGATIVE}))
@pytest.mark.parametrize("size", [1, 7])
def test_stream_agrees_with_one_shot(case: str, size: int) -> None:
    text = POSITIVE[case][0] if case in POSITIVE else NEGATIVE[case]
    assert_stream_matches_under(text, TOOLS, size)


#: a call list whose object lost one closing brace before the list's closer
BRACE_LEFT_OUT = {
    "json list": '[{"name": "get_weather", "arguments": {"city": "Oslo"}]',
    "json list after prose": 'Calling it now: [{"name": "get_weather", "arguments": {"city": "Oslo"}]',
    "python-dict list": "[{'name': 'get_weather', 'arguments': {'city': 'Oslo'}]",
}


@pytest.mark.parametrize("case", sorted(BRACE_LEFT_OUT))
def test_a_brace_left_out_before_the_list_closer_is_supplied(case: str) -> None:
    parsed = parse_response(BRACE_LEFT_OUT[case], tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Oslo"})]
    assert "closed containers whose closers were left out" in parsed.tool_calls[0].repairs
    assert_stream_matches_under(BRACE_LEFT_OUT[case], TOOLS, 5)
