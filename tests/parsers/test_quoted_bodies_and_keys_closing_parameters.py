"""A call tag whose body is the call's JSON serialised once more, and a parameter closed by its key's tag.

Sources (transcribed outside the repository, see docs/accuracy.md): Parad0x-Labs/vool's tool-call
recovery tests (``<tool_call>"{\\"name\\": …}"</tool_call>``), the PyPI package codii's parser tests
(``<tool name="write_file">…<parameter name="content">…</content></tool>``).
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.parsers.jsonrepairnames import DOUBLE_ENCODED
from utp.types import DiagnosticKind, Tool

from .conftest import assert_every_cut_matches

LIVE_VALUE = Tool("web.live_value", parameters={"type": "object", "properties": {"query": {"type": "string"}}})
TOOLS = [LIVE_VALUE]
ENCODED = '<tool_call>"{\\"name\\": \\"web.live_value\\", \\"arguments\\": {\\"query\\": \\"gold\\"}}"</tool_call>'


@pytest.mark.parametrize("text", [ENCODED, f"Checking the price.\n{ENCODED}", ENCODED.replace('"{', '" {').replace('}}"', '}} "')])
def test_a_call_written_as_a_json_string_is_decoded_once(text: str) -> None:
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("web.live_value", {"query": "gold"})]
    assert result.tool_calls[0].repairs == [DOUBLE_ENCODED]
    assert "<tool_call>" not in result.content
    assert_every_cut_matches(text, TOOLS, step=9)


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>"hello"</tool_call>',  # a string that holds no JSON
        '<tool_call>"{not json}"</tool_call>',  # JSON-looking text that is not JSON
        '<tool_call>"{\\"city\\": \\"Paris\\"}"</tool_call>',  # JSON, but no call in it
        '<tool_call>"{\\"name\\": \\"web.live_value\\"" and more</tool_call>',  # more than one string
        '<tool>"{\\"name\\": \\"web.live_value\\", \\"arguments\\": {}}"</tool>',  # a weak tag: prompts quote it
        'The tag takes JSON, e.g. `<tool_call>"{\\"name\\": \\"f\\"}"</tool_call>` is wrong.',
    ],
)
def test_other_quoted_bodies_are_no_call(text: str) -> None:
    result = parse_response(text, tools=TOOLS)
    assert result.tool_calls == []
    assert all(d.kind is not DiagnosticKind.REPAIRED for d in result.diagnostics)


def test_a_quoted_body_cut_off_waits_and_is_no_call() -> None:
    text = ENCODED[: -len("</tool_call>")]
    assert parse_response(text, tools=TOOLS).tool_calls == []
    assert_every_cut_matches(text, TOOLS, step=9)


WRITE = Tool("write_file", parameters={"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}})
OWN_CLOSER = '<tool name="write_file"><parameter name="path">foo.py</parameter><parameter name="content">\ndef foo():\n    pass\n</content></tool>'


def test_a_parameter_closed_by_its_keys_tag_ends_there() -> None:
    result = parse_response(OWN_CLOSER, tools=[WRITE])
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("write_file", {"path": "foo.py", "content": "def foo():\n    pass"})]
    assert result.tool_calls[0].repairs == ["</parameter> written as </content> after parameter 'content'"]
    assert_every_cut_matches(OWN_CLOSER, [WRITE], step=13)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the value's own text names its key's tag, and </parameter> closes it: the text is the value's
        (
            '<tool name="write_file"><parameter name="content">a </content> b</parameter></tool>',
            {"content": "a </content> b"},
        ),
        # the value's text holds a parameter tag: the first </parameter> still ends it
        (
            '<tool name="write_file"><parameter name="content">x <parameter name="path"> y</parameter></tool>',
            {"content": 'x <parameter name="path"> y'},
        ),
    ],
)
def test_the_template_closer_outranks_the_keys_own(text: str, expected: dict) -> None:
    assert [c.arguments for c in parse_response(text, tools=[WRITE]).tool_calls] == [expected]


def test_another_keys_closer_does_not_end_a_parameter() -> None:
    text = '<tool name="write_file"><parameter name="content">def foo(): pass</path></tool>'
    assert parse_response(text, tools=[WRITE]).tool_calls == []
