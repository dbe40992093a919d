"""Call tags with more attributes than the name, and Gemma's ``call:`` with a blank after it.

Clients and models write ids and types into a call tag beside the tool's name
(``<tool_call id="call_00_1" name="f">{...}</tool_call>``); inside Gemma 4's
call tokens a blank after ``call:`` (``call: solve{...}``) still names the
call. Both read as the plain forms do; prose mentioning them stays prose.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response

from .conftest import assert_every_cut_matches, assert_stream_matches_under

TOOLS = [
    {"name": "history", "parameters": {"type": "object", "properties": {"chat": {"type": "string"}, "limit": {"type": "integer"}}}},
    {"name": "solve", "parameters": {"type": "object", "properties": {"equation": {"type": "string"}}}},
    {"name": "sort", "parameters": {"type": "object", "properties": {"order": {"type": "string"}}}},
]

ATTRIBUTED = {
    "id before the name": '<tool_call id="call_00_1" name="history">\n{"chat": "Team", "limit": 80}\n</tool_call>',
    "id and type after the name": "<tool_call name='history' id='c1' type='function'>{\"chat\": \"Team\", \"limit\": 80}</tool_call>",
    "MiniCPM-4's function tag with a type": '<function type="call" name="history">{"chat": "Team", "limit": 80}</function>',
}


@pytest.mark.parametrize("case", sorted(ATTRIBUTED))
def test_a_call_tag_with_other_attributes(case: str) -> None:
    parsed = parse_response(ATTRIBUTED[case], tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("history", {"chat": "Team", "limit": 80})]
    assert_stream_matches_under(ATTRIBUTED[case], TOOLS, 5)


@pytest.mark.parametrize(
    "text",
    [
        'Use <tool_call id="1"> tags to call.',  # no name attribute
        'The tag <tool_call id="x" title="history"> names nothing.',
    ],
)
def test_tags_without_a_name_stay_prose(text: str) -> None:
    assert parse_response(text, tools=TOOLS).tool_calls == []


GEMMA = '<|tool_call>call:sort{order:<|"|>desc<|"|>} call: solve{equation:<|"|>2*(x+5) = 13<|"|>}<tool_call|>after'


def test_gemma_call_with_a_blank_after_its_colon() -> None:
    parsed = parse_response(GEMMA, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("sort", {"order": "desc"}), ("solve", {"equation": "2*(x+5) = 13"})]
    assert parsed.content == "after"
    assert_every_cut_matches(GEMMA, TOOLS, 3)


def test_a_bare_call_colon_in_prose_stays_prose() -> None:
    text = "The next call: solve{it} is up to you, later."
    assert parse_response(text, tools=TOOLS).tool_calls == []
