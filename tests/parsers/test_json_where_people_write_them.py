"""JSON calls written where people write them, read when the offered tools settle it.

A call object in the middle of a sentence, a list of calls after prose, a
"plan" object holding a list of calls, a call object carrying an ``id``, calls
separated by ``; ``, and a list with one unreadable call among readable
ones. Each positive has a negative: the same shape naming no offered tool, in
inline code, or after other JSON, is not a call; and a stream agrees with the
one-shot parse.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response

from .conftest import assert_stream_matches_under

TOOLS = [
    {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
    {"name": "search", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}},
]
OSLO = '{"name": "get_weather", "arguments": {"city": "Oslo"}}'
FIND = '{"name": "search", "arguments": {"q": "x"}}'

POSITIVE = {
    "mid-sentence": (f"I will call {OSLO} now.", [("get_weather", {"city": "Oslo"})]),
    # GSimulator's test: Chinese writes no blanks between words, so the object is glued to the sentence
    "mid-sentence in Chinese": ('让我先看看{"tool": "search", "args": {"q": "x"}}再决定怎么做。', [("search", {"q": "x"})]),
    "list after prose": (f"Sure! [{OSLO}, {FIND}]", [("get_weather", {"city": "Oslo"}), ("search", {"q": "x"})]),
    "plan object": (f'{{"plan": [{OSLO}, {FIND}]}}', [("get_weather", {"city": "Oslo"}), ("search", {"q": "x"})]),
    "plan object after a lead-in": (f'Here is my plan:\n{{"steps": [{OSLO}]}}', [("get_weather", {"city": "Oslo"})]),
    "call object with an id": ('{"id": "call_1", "name": "get_weather", "arguments": {"city": "Oslo"}}', [("get_weather", {"city": "Oslo"})]),
    "semicolon-separated": (f"{OSLO}; {FIND}", [("get_weather", {"city": "Oslo"}), ("search", {"q": "x"})]),
    "flat: arguments beside the name": ('{"name": "get_weather", "city": "Oslo"}', [("get_weather", {"city": "Oslo"})]),
    "flat, on its own line after a thought": ('Thought: weather.\n{"tool_name": "search", "q": "x"}\n', [("search", {"q": "x"})]),
    "AutoGPT's reply: thoughts, then the command": ('{"thoughts": {"text": "t", "plan": "p"}, "command": {"name": "search", "args": {"q": "x"}}}', [("search", {"q": "x"})]),
    "an agent's action alone, naming an offered tool": ('{"action": "search"}', [("search", {})]),
    "call lists one after another": (f"[{OSLO}][{FIND}]", [("get_weather", {"city": "Oslo"}), ("search", {"q": "x"})]),
    # a schema-forced reply (qwen2.5-coder in a NetBeans plugin): what it says to the user beside the call
    "a message beside the name and its arguments": ('{"message": "", "tool_name": "search", "tool_arguments": {"q": "x"}}', [("search", {"q": "x"})]),
    "one unreadable call in a list": (f'[{OSLO}, {{"name": "search", "arguments": {{"q": "x"]}}]', [("get_weather", {"city": "Oslo"})]),
}

NEGATIVE = {
    "mid-sentence, a name not offered": 'The API returns {"name": "Oslo", "arguments": {"x": 1}} as data.',
    "mid-sentence in inline code": f"To call it, write `{OSLO}` in your reply.",
    "after other JSON on the line": '{"name": "jeff"}' + OSLO,
    "glued to a word of code": 'items{"tool": "search", "args": {"q": "x"}}',
    "flat, a key that is no parameter": '{"name": "get_weather", "population": 700000}',
    "flat, a name no tool has": '{"name": "Oslo", "city": "Oslo"}',
    "flat, a result the model made up": '<tool_response>\n{"name": "search", "q": "x"}\n</tool_response>',
    "flat, after an observation": 'Observation: {"name": "search", "q": "x"}',
    "flat, mid-sentence": 'The record {"name": "get_weather", "city": "Oslo"} is data.',
    "thoughts and an answer, no command": '{"thoughts": {"text": "I know it"}, "answer": "42"}',
    "a message beside a name, no arguments key": '{"message": "done", "name": "search"}',
    "a made-up result: a name and its content": '{"name": "search", "content": "3 results"}',
    # qwen2.5-coder-1.5b, recorded: the call and the result it made up for it in one object
    "a made-up result beside the call": '{"name": "search", "arguments": {"q": "x"}, "content": {"status": "done", "hits": 3}}',
    "an agent's action naming no offered tool": '{"action": "dance"}',
    "plan of data": '{"data": [{"name": "Oslo", "population": 700000}]}',
    "plan naming a tool not offered": '{"plan": [{"name": "delete_all", "arguments": {}}]}',
    "a sample after a lead-in, explained further": f"Example: {OSLO} is how a call looks.",
    "in parentheses on a line of its own (code, no sentence)": f"Checking.\n({OSLO})}}",
}


def _calls(parsed: object) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parsed.tool_calls if c.known]  # type: ignore[attr-defined]


@pytest.mark.parametrize("case", sorted(POSITIVE))
def test_shape_is_read(case: str) -> None:
    text, want = POSITIVE[case]
    assert _calls(parse_response(text, tools=TOOLS)) == want


@pytest.mark.parametrize("case", sorted(NEGATIVE))
def test_same_shape_that_is_not_a_call(case: str) -> None:
    assert _calls(parse_response(NEGATIVE[case], tools=TOOLS)) == []


def test_mid_sentence_needs_the_tools() -> None:
    """Without an offered tool naming it, JSON inside a sentence stays prose."""
    assert parse_response(POSITIVE["mid-sentence"][0]).tool_calls == []
    assert parse_response(POSITIVE["plan object"][0]).tool_calls == []


@pytest.mark.parametrize("case", sorted({**POSITIVE, **NEGATIVE}))
@pytest.mark.parametrize("size", [1, 3, 16])
def test_stream_agrees_with_one_shot(case: str, size: int) -> None:
    text = POSITIVE[case][0] if case in POSITIVE else NEGATIVE[case]
    assert_stream_matches_under(text, TOOLS, size)


def test_a_list_of_data_after_a_call_list_stays_content() -> None:
    data = '[{"name": "Oslo", "population": 700000}]'
    parsed = parse_response(f"[{OSLO}]{data}", tools=TOOLS)
    assert _calls(parsed) == [("get_weather", {"city": "Oslo"})] and parsed.content == data


def test_a_result_shaped_object_is_not_a_flat_call_even_for_a_tool_taking_content() -> None:
    """``{"name": "f", "content": ...}`` is how results are fed back (Hermes, UTP's own presets): a model
    writing one made up a result; reading it as ``write_file(content=...)`` would run it."""
    writer = [{"name": "write_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}]
    assert parse_response('{"name": "write_file", "content": {"status": "written"}}', tools=writer).tool_calls == []
    assert parse_response('<tool_response>\n{"name": "write_file", "path": "a.md"}\n</tool_response>', tools=writer).tool_calls == []
