"""An offered tool's name, then its arguments object; and arguments under a key the model chose.

The named_json family reads ``NAME {json}`` lines (bare at the answer's end, or
between a client's bracketed markers anywhere) and an arguments object that
ends the answer after a line naming the tool (the fenced family, that object
in a fence). The json family reads a call
object whose arguments sit under a key of the model's own
(``{"action": "Search", "action_variables": {...}}``). Each shape has
negatives: the same text as an example inside prose, with keys the tool does
not declare, or naming no offered tool. A stream agrees with the one-shot parse.
"""

from __future__ import annotations

import pytest

from tests.parsers.conftest import assert_every_cut_matches
from utp.parsers import parse_response
from utp.types import Tool

TOOLS = [
    Tool("create_plan", parameters={"type": "object", "properties": {"steps": {"type": "array"}}}),
    Tool("get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}),
    Tool("web_search", parameters={"type": "object", "properties": {"query": {"type": "string"}, "top_n": {"type": "integer"}}}),
    Tool("WebSearch.Search", parameters={"type": "object", "properties": {"input": {"type": "string"}, "count": {"type": "string"}}}),
    Tool("noop"),
]

POSITIVE = {
    "a name line as the answer": ('get_weather {"city": "Oslo"}', [("get_weather", {"city": "Oslo"}, "named_json")]),
    "after a sentence, a colon after the name": ('Let me check.\nget_weather: {"city": "Oslo", "days": 2}\n', [("get_weather", {"city": "Oslo", "days": 2}, "named_json")]),
    "two lines": ('get_weather {"city": "Oslo"}\n\nweb_search {"query": "fjords"}', [("get_weather", {"city": "Oslo"}, "named_json"), ("web_search", {"query": "fjords"}, "named_json")]),
    "pretty-printed object ending the answer": ('get_weather {\n  "city": "Oslo"\n}\n', [("get_weather", {"city": "Oslo"}, "named_json")]),
    "between a client's markers, prose around": (
        'Files first:\n[TOOL_REQUEST]\nget_weather {"city": "Oslo"}\n[TOOL_REQUEST_END]\nMore:\n[TOOL_REQUEST] web_search {"query": "x"} [TOOL_REQUEST_END]\nDone.',
        [("get_weather", {"city": "Oslo"}, "named_json"), ("web_search", {"query": "x"}, "named_json")],
    ),
    "after a label": ('Action: get_weather {"city": "Oslo"}', [("get_weather", {"city": "Oslo"}, "named_json")]),
    "a bold name": ('**get_weather** {"city": "Oslo"}', [("get_weather", {"city": "Oslo"}, "named_json")]),
    "bulleted lines": ('- get_weather {"city": "Oslo"}\n- web_search {"query": "x"}', [("get_weather", {"city": "Oslo"}, "named_json"), ("web_search", {"query": "x"}, "named_json")]),
    "a fenced object after a sentence naming the tool": ('I will use the get_weather tool.\n\n```json\n{"city": "Oslo"}\n```', [("get_weather", {"city": "Oslo"}, "fenced")]),
    "a tool without parameters, marked": ("[TOOL_REQUEST]\nnoop {}\n[TOOL_REQUEST_END]", [("noop", {}, "named_json")]),
    "the object after a sentence naming the tool (gpt-oss)": (
        'Need to do web_search for cookies. Use web_search function.\n\n{"query": "best cookie recipe", "top_n": 3}',
        [("web_search", {"query": "best cookie recipe", "top_n": 3}, "named_json")],
    ),
    "the object after 'I would use' (GLM's whole-answer rule leaves it)": ('I would use get_weather\n{"city": "Paris"}', [("get_weather", {"city": "Paris"}, "named_json")]),
    "arguments under a key of the model's own, after a marker": (
        '[ACTION]\n{\n  "action": "WebSearch.Search",\n  "action_variables": {"input": "fjords", "count": "1"}\n}',
        [("WebSearch.Search", {"input": "fjords", "count": "1"}, "json")],
    ),
    "arguments under a key of the model's own, marker on the line": (
        '[ACTION] {"action": "get_weather", "action_variables": {"city": "Oslo"}}',
        [("get_weather", {"city": "Oslo"}, "json")],
    ),
    # sessions-android's test: a tool of one parameter labelled with its name, the value alone
    "a one-parameter tool's value after its name": ('create_plan: ["read the rules", "write the answer"]', [("create_plan", {"steps": ["read the rules", "write the answer"]}, "named_json")]),
    # a Go agent's recovery test: the call after the sentence on its line, ending the answer
    "after a sentence on its own line": ('The code is already correct. get_weather{"city": "Oslo"}', [("get_weather", {"city": "Oslo"}, "named_json")]),
    "arguments under an arguments-like key, mid-sentence": (
        'I will call {"tool": "get_weather", "tool_params": {"city": "Oslo"}} now.',
        [("get_weather", {"city": "Oslo"}, "json")],
    ),
}

NEGATIVE = {
    "inside a sentence": 'Use get_weather {"city": "Oslo"} to look it up.',
    "prose after an unmarked line": 'get_weather {"city": "Oslo"}\nThat is the call I would make.',
    "text after the object on its line": 'get_weather {"city": "Oslo"} returns the forecast',
    "after a sentence on its line, prose after": 'It is correct. get_weather {"city": "Oslo"}\nThat is the call.',
    "after a sentence on its line, words after": 'It is correct. get_weather {"city": "Oslo"} and more.',
    "after code on its line": 'x = 1. get_weather {"city": "Oslo"}',
    "a value for a tool of two parameters": 'get_weather: "Oslo"',
    "a value of the wrong type": 'create_plan: "read the rules"',
    "a labelled value, prose after": 'create_plan: ["a"]\nThat is the plan.',
    "after a label, prose after": 'Example: get_weather {"city": "Oslo"}\nThat is how it looks.',
    "a fenced object after naming prose, prose after": 'I will use the get_weather tool.\n\n```json\n{"city": "Oslo"}\n```\nThen more.',
    "a key the tool does not declare": 'get_weather {"town": "Oslo"}',
    "an empty object for a tool with parameters": "get_weather {}",
    "not an offered tool": 'get_forecast {"city": "Oslo"}',
    "not valid JSON as written": "get_weather {city: Oslo}",
    "the object after prose naming no tool": 'The result is:\n{"city": "Oslo"}',
    "the object after naming prose, prose after it": 'Use get_weather.\n{"city": "Oslo"}\nThat is the call.',
    "the object after naming prose, on the same line": 'Use get_weather. {"city": "Oslo"}',
    "the object's keys fit no tool the line names": 'Use web_search.\n{"city": "Oslo"}',
    "an empty object after naming prose": "Call noop.\n{}",
    "a made-up result under a key": '{"name": "get_weather", "result": {"city": "Oslo"}}',
    "mid-sentence under a key not named as arguments": 'The record {"name": "get_weather", "details": {"city": "Oslo"}} is data.',
    "under a key, inner keys not parameters": '[ACTION] {"action": "get_weather", "action_variables": {"town": "Oslo"}}',
}


def _calls(text: str) -> list[tuple[str, dict, str]]:
    return [(c.name, c.arguments, c.format) for c in parse_response(text, tools=TOOLS).tool_calls if c.known]


@pytest.mark.parametrize("case", sorted(POSITIVE))
def test_shape_is_read(case: str) -> None:
    text, want = POSITIVE[case]
    assert _calls(text) == want


@pytest.mark.parametrize("case", sorted(NEGATIVE))
def test_same_shape_that_is_not_a_call(case: str) -> None:
    assert _calls(NEGATIVE[case]) == []


@pytest.mark.parametrize("case", sorted(POSITIVE))
def test_without_tools_nothing_is_read(case: str) -> None:
    """Every rule here rests on the offered tools: without them each text is prose."""
    assert parse_response(POSITIVE[case][0]).tool_calls == []


def test_markers_and_prose_stay_content() -> None:
    parsed = parse_response(POSITIVE["between a client's markers, prose around"][0], tools=TOOLS)
    assert "get_weather" not in parsed.content and "Files first:" in parsed.content and "Done." in parsed.content


@pytest.mark.parametrize("case", sorted({**POSITIVE, **NEGATIVE}))
def test_stream_agrees_with_one_shot(case: str) -> None:
    text = POSITIVE[case][0] if case in POSITIVE else NEGATIVE[case]
    assert_every_cut_matches(text, TOOLS, step=3)
