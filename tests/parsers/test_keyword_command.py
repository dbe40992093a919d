"""Command-style answers: an offered tool's name, then ``key=value`` words for its declared parameters."""

from __future__ import annotations

import pytest

from tests.parsers.conftest import assert_every_cut_matches, assert_stream_matches_under
from utp.parsers import parse_response
from utp.types import Tool

TOOLS = [
    Tool("web_fetch", parameters={"type": "object", "properties": {"url": {"type": "string"}, "limit": {"type": "integer"}}}),
    Tool("read_file", parameters={"type": "object", "properties": {"file": {"type": "string"}}}),
    Tool("execute_code", parameters={"type": "object", "properties": {"code": {"type": "string"}}}),
    Tool("ping"),
]


def calls(text: str) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=TOOLS).tool_calls]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('web_fetch url="https://www.iana.org/help/example-domains"', [("web_fetch", {"url": "https://www.iana.org/help/example-domains"})]),
        # Windows paths keep their backslashes; only \" is an escape
        ('read_file file="c:\\Users\\y\\Desktop\\package.json"', [("read_file", {"file": "c:\\Users\\y\\Desktop\\package.json"})]),
        ('execute_code code="print(\\"hi\\")"', [("execute_code", {"code": 'print("hi")'})]),
        ("execute_code code='import os; os.getcwd()'", [("execute_code", {"code": "import os; os.getcwd()"})]),
        # typed by the schema, quoted or bare
        ('web_fetch url=https://x.org limit="3"', [("web_fetch", {"url": "https://x.org", "limit": 3})]),
        # after a lead-in, and several lines
        ("Tool call: web_fetch url=https://x.org limit=5", [("web_fetch", {"url": "https://x.org", "limit": 5})]),
        ('web_fetch url="https://a.org"\n\nread_file file=notes.txt\n', [("web_fetch", {"url": "https://a.org"}), ("read_file", {"file": "notes.txt"})]),
        # the lines that end the answer after a sentence, as Python-style call lines are read
        ("Sure, I'll fetch it.\n\nweb_fetch url=https://x.org limit=5", [("web_fetch", {"url": "https://x.org", "limit": 5})]),
        ('I need the file first.\nread_file file="a.txt"\nweb_fetch url=https://x.org', [("read_file", {"file": "a.txt"}), ("web_fetch", {"url": "https://x.org"})]),
    ],
)
def test_a_whole_answer_of_command_lines_is_read(text: str, expected: list) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [(n, a, "keyword_command") for n, a in expected]
    assert_every_cut_matches(text, TOOLS, step=7)


@pytest.mark.parametrize(
    "text",
    [
        'You can run web_fetch url="https://x.org" to see it.',  # a sentence
        'web_fetch url="https://x.org" to see it',  # words that are no key=value
        'web_fetch url="https://x.org"\n\nThat fetches the page.',  # prose after the line
        "web_fetch https://x.org",  # positional words: a shell command, not this syntax
        'web_fetch uri="https://x.org"',  # a key the tool does not declare
        'web_fetch url="a" url="b"',  # a key written twice
        "web_fetch url=",  # no value
        "ping host=a",  # a tool that declares no parameters: nothing to check the keys against
        "web_fetch url='it is\nnot closed'",  # single quotes stay on their line (an apostrophe)
        'search url="https://x.org"',  # not an offered tool
        'I\'ll fetch it.\nweb_fetch url="https://x.org"\nThat fetches the page.',  # prose after the line
        'import requests\nweb_fetch url="https://x.org"',  # after a line of code, not a sentence
        'Usage (see the docs)\nweb_fetch url="https://x.org"',  # after a line that is no sentence
    ],
)
def test_what_is_not_a_whole_command_answer_is_prose(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == []
    assert parsed.content == text
    assert_every_cut_matches(text, TOOLS, step=5)


def test_without_tools_nothing_is_a_command_line() -> None:
    assert parse_response('web_fetch url="https://x.org"').tool_calls == []


def test_a_stream_releases_an_answer_that_only_starts_with_a_tool_name() -> None:
    """ "web_fetch results ..." is settled as prose at its first word, not held to the end."""
    from utp.parsers.streaming import ContentDelta, StreamParser

    parser = StreamParser(tools=TOOLS)
    shown = "".join(e.text for e in parser.feed("web_fetch results are cached for an hour, so ") if isinstance(e, ContentDelta))
    assert shown.startswith("web_fetch results")


# --- a call tag whose body is a command line, its arguments written as attributes ------------------

ATTRIBUTE_TOOLS = [
    {"name": name, "parameters": {"type": "object", "properties": {"command": {"type": "string"}, "path": {"type": "string"}}}}
    for name in ("shell", "exec", "file_read")
]


@pytest.mark.parametrize(
    ("text", "call", "content"),
    [
        ('<tool_call>shell command="date" /></tool_call>', ("shell", {"command": "date"}), ""),
        # real (an OpenClaw report): the tool named again as an attribute, the tag never closed
        ('好的。<tool_call>exec tool="exec" command="ls -la /root/.openclaw/workspace/" />', ("exec", {"command": "ls -la /root/.openclaw/workspace/"}), "好的。"),
        # another model's closer after it (zeroclaw's tests)
        ('<tool_call>file_read path=".env" /></invoke>', ("file_read", {"path": ".env"}), ""),
        ('Reading.\n<tool_call>file_read path="a b.txt"</tool_call>\nDone.', ("file_read", {"path": "a b.txt"}), "Reading.\nDone."),
    ],
)
def test_a_call_tag_holding_a_command_line_with_attributes(text: str, call: tuple, content: str) -> None:
    """Such a body was left as prose."""
    parsed = parse_response(text, tools=ATTRIBUTE_TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [call]
    assert parsed.tool_calls[0].repairs == ["arguments written as attributes"]
    assert parsed.content == content
    assert_stream_matches_under(text, ATTRIBUTE_TOOLS, 3)


@pytest.mark.parametrize(
    "text",
    [
        'Let me check.<tool_call>file_read path="./README.md"<tool_call>file_read path="./package.json"<tool_call>exec command="ls"',
        '<tool_call>file_read path="./README.md"\n<tool_call>file_read path="./package.json"</tool_call>\n<tool_call>exec command="ls" />',
    ],
)
def test_a_call_tag_written_again_ends_the_attribute_call_left_open_before_it(text: str) -> None:
    """The next call's tag was read as part of the first call's last value, and the call before it was lost."""
    parsed = parse_response(text, tools=ATTRIBUTE_TOOLS)
    expected = [("file_read", {"path": "./README.md"}), ("file_read", {"path": "./package.json"}), ("exec", {"command": "ls"})]
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == expected
    assert parsed.tool_calls[0].repairs == ["arguments written as attributes", "missing </tool_call> before the next call"]
    assert parsed.content in ("Let me check.", "")
    assert_stream_matches_under(text, ATTRIBUTE_TOOLS, 3)
    assert_every_cut_matches(text, ATTRIBUTE_TOOLS, step=7)


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>nope command="date" /></tool_call>',  # no such tool
        '<tool_call>shell cmd="date" /></tool_call>',  # no such parameter
        "<tool_call>shell is the tool to use</tool_call>",  # words, not attributes
        '<tool_call>shell command="date"\nand more</tool_call>',  # more than a line
    ],
)
def test_other_bodies_of_that_shape_are_not_calls(text: str) -> None:
    assert parse_response(text, tools=ATTRIBUTE_TOOLS).tool_calls == []


def test_without_tools_an_attribute_body_is_not_a_call() -> None:
    assert parse_response('<tool_call>shell command="date" /></tool_call>').tool_calls == []
