"""Harmony headers bent by gpt-oss and the models trained on its traces (NanoTeams' network logs).

Each shape was read as no call: the recipient spaced or quoted after ``to=``,
the channel where the role belongs, the tool as the role with no recipient,
the tool where the constraint belongs, and ``<|call|>`` written before the
call instead of after it (its outer brace sometimes left out before the end
token). Each is read for an offered tool only, and recorded.
"""

from __future__ import annotations

import pytest

from tests.parsers.conftest import assert_every_cut_matches
from utp.parsers import parse_response
from utp.types import DiagnosticKind, Tool

READ = Tool("read_file", parameters={"type": "object", "properties": {"path": {"type": "string"}}})
WRITE = Tool("write_file", parameters={"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}})
TOOLS = [READ, WRITE]


@pytest.mark.parametrize(
    ("text", "repair"),
    [
        ('<|channel|>commentary to= "read_file" <|constrain|>json<|message|>{"path":"a"}<|call|>', "the recipient spaced or quoted after to="),
        ("<|channel|>commentary to= 'read_file' <|message|>{\"path\":\"a\"}", "the recipient spaced or quoted after to="),
        ('<|start|>commentary to=read_file <|constrain|>json<|message|>{"path":"a"}', "the channel written where the role belongs"),
        ('<|start|>functions.read_file<|message|>{"path":"a"}<|end|>', "the tool written where the role belongs, no recipient"),
        ('<|channel|>final <|constrain|>read_file<|message|>{"path":"a"}', "the tool written where the constraint belongs"),
        ('<|call|>read_file {"path":"a"}<|end|>', "<|call|> written before the call instead of after it"),
        ('<|call|>{"name":"read_file","arguments":{"path":"a"}}<|end|>', "<|call|> written before the call instead of after it"),
        # the outer brace left out before the end token
        ('<|call|>{"name":"read_file","arguments":{"path":"a"}<|end|>', "<|call|> written before the call instead of after it"),
    ],
)
def test_a_bent_header_is_read_for_an_offered_tool(text: str, repair: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("read_file", {"path": "a"})]
    assert repair in parsed.tool_calls[0].repairs
    assert parsed.content == ""
    assert_every_cut_matches(text, TOOLS, step=5)


def test_calls_written_after_their_call_tokens_one_after_another() -> None:
    text = '<|call|>commentary { "content": "junk" }<|end|><|call|>read_file {"path":"a"}<|end|><|call|>{"name":"write_file","arguments":{"path":"b","content":"c"}<|end|>'
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("read_file", {"path": "a"}), ("write_file", {"path": "b", "content": "c"})]
    assert parsed.content == 'commentary { "content": "junk" }'
    assert_every_cut_matches(text, TOOLS, step=7)


@pytest.mark.parametrize(
    "text",
    [
        '<|start|>functions.read_file to=assistant<|channel|>commentary<|message|>{"path":"a"}<|end|>',  # a tool's reply
        '<|start|>functions.nope<|message|>{"path":"a"}<|end|>',  # no such tool
        '<|channel|>final <|constrain|>json<|message|>{"path":"a"}',  # the answer, written as JSON
        '<|call|>nope {"path":"a"}<|end|>',  # no such tool
        '<|call|>read_file {"path":"a"} and more<|end|>',  # text after the object
    ],
)
def test_headers_that_name_no_offered_tool_make_no_call(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [c for c in parsed.tool_calls if c.known] == []
    assert DiagnosticKind.REPAIRED not in [d.kind for d in parsed.diagnostics]
