"""Names polluted by neighbouring markup, and GLM name lines damaged by stray or missing tags.

Each repair is made only where the written text leaves one reading: the one
offered tool between the tags, the stray closing tag dropped, a glued key split
off at the longest offered tool name it starts with. The same text naming no
offered tool stays as written (flagged unknown) or stays prose.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response

from .conftest import assert_stream_matches_under

TOOLS = [
    {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
    {"name": "tool_12"},
    {"name": "Web Search", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}},
    {"name": "run_shell", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}},
]

POSITIVE = {
    "closing tag glued to a JSON call's name": ('<tool_call>{"name": "get_weather</arg_value>", "arguments": {"city": "Oslo"}}</tool_call>', [("get_weather", {"city": "Oslo"})]),
    "channel words before the recipient": ('<tool_call>{"name": "assistant<|channel|>analysis to=functions.get_weather", "arguments": {}}</tool_call>', [("get_weather", {})]),
    "harmony recipient with a space": ('<|start|>assistant<|channel|>commentary to=Web Search <|constrain|>json<|message|>{"q": "x"}<|call|>', [("Web Search", {"q": "x"})]),
    "glm stray closer after the name": ("<tool_call>tool_12</arg_value></tool_call>", [("tool_12", {})]),
    "glm key glued to the name": ("<tool_call>run_shellcommand</arg_key><arg_value>ls -la</arg_value></tool_call>", [("run_shell", {"command": "ls -la"})]),
}

NEGATIVE = {
    "markup around a name no tool has": '<tool_call>{"name": "<b>delete</b>", "arguments": {}}</tool_call>',
    "two tools between the tags": '<tool_call>{"name": "get_weather</arg_value>tool_12", "arguments": {}}</tool_call>',
    "glued word no offered tool starts": "<tool_call>unknowncommand</arg_key><arg_value>ls</arg_value></tool_call>",
    "glm closer named in prose": "GLM closes a value with </arg_value> and a call with </tool_call>.",
}


def _known(parsed: object) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parsed.tool_calls if c.known]  # type: ignore[attr-defined]


@pytest.mark.parametrize("case", sorted(POSITIVE))
def test_polluted_name_resolves(case: str) -> None:
    text, want = POSITIVE[case]
    parsed = parse_response(text, tools=TOOLS)
    assert _known(parsed) == want
    assert all(c.known for c in parsed.tool_calls)


@pytest.mark.parametrize("case", sorted(NEGATIVE))
def test_no_offered_tool_no_repair(case: str) -> None:
    assert _known(parse_response(NEGATIVE[case], tools=TOOLS)) == []


def test_a_recipient_with_a_space_not_offered_is_its_first_word() -> None:
    text = POSITIVE["harmony recipient with a space"][0].replace("Web Search", "Image Maker")
    assert [c.name for c in parse_response(text, tools=TOOLS).tool_calls] == ["Image"]


def test_glm_repairs_are_named() -> None:
    for case in ("glm stray closer after the name", "glm key glued to the name"):
        parsed = parse_response(POSITIVE[case][0], tools=TOOLS)
        assert parsed.tool_calls[0].repairs
        assert any(d.kind.value == "repaired" for d in parsed.diagnostics)


@pytest.mark.parametrize("case", sorted({**POSITIVE, **NEGATIVE}))
@pytest.mark.parametrize("size", [1, 4, 32])
def test_stream_agrees_with_one_shot(case: str, size: int) -> None:
    text = POSITIVE[case][0] if case in POSITIVE else NEGATIVE[case]
    assert_stream_matches_under(text, TOOLS, size)
