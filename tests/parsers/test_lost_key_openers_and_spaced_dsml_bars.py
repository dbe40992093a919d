"""GLM pairs whose key lost its opening tag, and DSML's token with doubled ASCII bars spaced apart.

Sources (transcribed outside the repository, see docs/accuracy.md): TensorFold's server parser
tests (``<tool_call>read_file filePath</arg_key>…``, ``limit</arg_key>`` after a whole pair),
youqiAgent's DSML parser tests (``< | | DSML | | invoke``).
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.types import Tool

from .conftest import assert_every_cut_matches

READ = Tool(
    "read_file",
    parameters={"type": "object", "properties": {"filePath": {"type": "string"}, "path": {"type": "string"}, "limit": {"type": "integer"}}},
)
GLOB = Tool("glob", parameters={"type": "object", "properties": {"pattern": {"type": "string"}}})
TOOLS = [READ, GLOB]


def _calls(text: str) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=TOOLS).tool_calls]


@pytest.mark.parametrize(
    ("text", "expected", "repair"),
    [
        (
            "<tool_call>read_file filePath</arg_key><arg_value>/home/a/main.go</arg_value></tool_call>",
            ("read_file", {"filePath": "/home/a/main.go"}),
            "<arg_key> supplied before the key 'filePath'",
        ),
        (
            "<tool_call>read_file<arg_key>path</arg_key><arg_value>a</arg_value>\nlimit</arg_key><arg_value>3</arg_value></tool_call>",
            ("read_file", {"path": "a", "limit": 3}),
            "<arg_key> supplied before the key 'limit'",
        ),
    ],
)
def test_a_glm_key_without_its_opening_tag_is_read(text: str, expected: tuple, repair: str) -> None:
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [expected]
    assert repair in result.tool_calls[0].repairs
    assert result.content == ""
    assert_every_cut_matches(text, TOOLS, step=11)


@pytest.mark.parametrize(
    "text",
    [
        "<tool_call>other filePath</arg_key><arg_value>/a</arg_value></tool_call>",  # no tool of that name
        "<tool_call>read_file<arg_key>path</arg_key><arg_value>a</arg_value>\nsome words</arg_key></tool_call>",  # words, not a key
        "The pair is written key</arg_key><arg_value>v</arg_value> in GLM's format.",  # prose about it
    ],
)
def test_words_before_a_key_closer_are_no_key(text: str) -> None:
    result = parse_response(text, tools=TOOLS)
    assert all(set(c.arguments) <= {"path"} for c in result.tool_calls)
    assert [c.name for c in result.tool_calls] in ([], ["read_file"])


DSML_DOUBLED_SPACED = (
    '< | | DSML | | tool_calls>< | | DSML | | invoke name="glob">< | | DSML | | parameter name="pattern" string="true">*.py'
    "</ | | DSML | | parameter></ | | DSML | | invoke></ | | DSML | | tool_calls>done"
)


def test_dsml_with_doubled_ascii_bars_spaced_apart() -> None:
    result = parse_response(DSML_DOUBLED_SPACED, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("glob", {"pattern": "*.py"})]
    assert result.content == "done"
    assert_every_cut_matches(DSML_DOUBLED_SPACED, TOOLS, step=17)
