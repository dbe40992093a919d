"""A bracketed tool header with its argument lines, and a call restated in another notation kept once.

Sources (transcribed outside the repository, see docs/accuracy.md): hdds-team/aircp's fallback-parser
tests (``[TOOL: name]`` then ``key: value`` lines, the protocol its Ollama/devstral agents use),
gnfy/selfmind's legacy ``[TOOL:name:{json}]`` calls, BlueKing AIDev's ``[tool:read_file]{json}``
repair; BFCL result files where a Hermes model shows its call in a fence, then makes it in
``<tool_call>``.
"""

from __future__ import annotations

import pytest

from utp.parsers import get_family, parse_response
from utp.parsers.streaming import stream_parse
from utp.types import DiagnosticKind, Tool, ToolCall

from .conftest import assert_every_cut_matches

HISTORY = Tool("aircp_history", parameters={"type": "object", "properties": {"room": {"type": "string"}, "limit": {"type": "integer"}}})
SEND = Tool("aircp_send", parameters={"type": "object", "properties": {"room": {"type": "string"}, "message": {"type": "string"}}})
LIST = Tool("file_list", parameters={"type": "object", "properties": {"path": {"type": "string"}}})
TOOLS = [HISTORY, SEND, LIST]


def _calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Let me check the chat history.\n[TOOL: aircp_history]\nroom: #general\nlimit: 10\n", [("aircp_history", {"room": "#general", "limit": 10})]),
        ("[TOOL: file_list]\npath = /projects/agents\n", [("file_list", {"path": "/projects/agents"})]),
        ('[TOOL: aircp_send]\nroom: "#general"\nmessage: "Hello: colons inside"\n', [("aircp_send", {"room": "#general", "message": "Hello: colons inside"})]),
        ("[tool: aircp_send]\nmessage: 'test'", [("aircp_send", {"message": "test"})]),
        ("[TOOL:aircp_history]\nroom: #general", [("aircp_history", {"room": "#general"})]),
        ("Let me check.\n[TOOL: aircp_history]\nThat's all.", [("aircp_history", {})]),  # no argument lines
        ("[TOOL: aircp_history]\nlimit: not_a_number\n", [("aircp_history", {"limit": "not_a_number"})]),  # for validation to refuse
        (
            "I'll read the history, then reply.\n\n[TOOL: aircp_history]\nroom: #general\nlimit: 5\n\nNow the reply.\n\n"
            "[TOOL: aircp_send]\nroom: #general\nmessage: Hello from fallback mode!\n",
            [("aircp_history", {"room": "#general", "limit": 5}), ("aircp_send", {"room": "#general", "message": "Hello from fallback mode!"})],
        ),
        ("[TOOL: aircp_send]\nmessage: hi\nNote: this line is prose", [("aircp_send", {"message": "hi"})]),  # not a parameter: ended
        ('[tool:file_list]{"path": "/app"}', [("file_list", {"path": "/app"})]),
        ('[TOOL: file_list]\n{"path": "/app"}', [("file_list", {"path": "/app"})]),
    ],
)
def test_a_header_then_its_argument_lines(text: str, expected: list[tuple[str, dict]]) -> None:
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == expected
    assert {c.format for c in result.tool_calls} == {"tool_header"}
    assert "[TOOL" not in result.content.upper()
    assert_every_cut_matches(text, TOOLS, step=7)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('Before [TOOL:terminal:{"command":"pwd","timeout":20}] After', ("terminal", {"command": "pwd", "timeout": 20})),
        ('Before [TOOL:run_command:{"cmd":"printf ok","paths":["a]b","c"]}] After', ("run_command", {"cmd": "printf ok", "paths": ["a]b", "c"]})),
    ],
)
def test_the_inline_form_may_stand_in_a_sentence(text: str, expected: tuple[str, dict]) -> None:
    result = parse_response(text)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [expected]
    assert result.content == "Before\n\nAfter" or result.content.split() == ["Before", "After"]
    assert_every_cut_matches(text, None, step=7)


@pytest.mark.parametrize(
    "text",
    [
        "The [TOOL: aircp_send] header is how you call a tool.",  # named in a sentence
        "[TOOL: aircp_send] is the header you write",  # words after it on its line
        "TOOL: aircp_send without brackets",
        "The [BRACKET] thing is not a tool call.",
        '[TOOL:terminal:{"command":"echo hi"}',  # the bracket left open
        "I'll use aircp_send to answer.",
    ],
)
def test_prose_about_the_header_is_no_call(text: str) -> None:
    assert _calls(text) == []
    assert _calls(text, None) == []


def test_a_header_naming_no_offered_tool_is_read_and_flagged() -> None:
    result = parse_response("[TOOL: shell_exec]\ncommand: rm -rf /\n\n[TOOL: aircp_send]\nmessage: ok\n", tools=TOOLS)
    assert [(c.name, c.known) for c in result.tool_calls] == [("shell_exec", False), ("aircp_send", True)]
    assert any(d.kind is DiagnosticKind.UNKNOWN_TOOL for d in result.diagnostics)


def test_rendered_calls_read_back() -> None:
    calls = [ToolCall("aircp_send", {"room": "#general", "message": "two\nlines"}), ToolCall("aircp_history", {"limit": 3})]
    text = get_family("tool_header").render(calls)
    assert text.startswith("[TOOL: aircp_send]\nroom: ")
    assert _calls(text) == [(c.name, c.arguments) for c in calls]


GRAMMY = Tool(
    "get_grammy_award_winner",
    parameters={"type": "object", "properties": {"award_name": {"type": "string"}, "year": {"type": "integer"}}},
)
SHOWN_THEN_MADE = (
    "To find the winner I will make a function call:\n\n```\n"
    '{"arguments": {"award_name": "Best Album", "year": 2017}, "name": "get_grammy_award_winner"}\n```\n\n'
    "Please wait while I make the call...\n\n<tool_call>\n"
    '{"arguments": {"award_name": "Best Album", "year": 2017}, "name": "get_grammy_award_winner"}\n</tool_call>'
)


def test_a_call_shown_then_made_in_another_notation_runs_once() -> None:
    result = parse_response(SHOWN_THEN_MADE, tools=[GRAMMY])
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("get_grammy_award_winner", {"award_name": "Best Album", "year": 2017})]
    assert [d.kind for d in result.diagnostics] == [DiagnosticKind.DUPLICATE]
    assert "hermes after fenced" in result.diagnostics[0].reason
    assert_every_cut_matches(SHOWN_THEN_MADE, [GRAMMY], step=23)


def test_one_call_per_notation_it_was_told_of_is_one_call() -> None:
    text = '<tool_call><function=web_search><parameter=query>news</parameter></function></tool_call><tool_call>{"name": "web_search", "arguments": {"query": "news"}}</tool_call>'
    assert _calls(text, None) == [("web_search", {"query": "news"})]
    events, streamed = stream_parse([text[i : i + 9] for i in range(0, len(text), 9)])
    assert [(c.name, c.arguments) for c in streamed.tool_calls] == [("web_search", {"query": "news"})]
    assert sum(type(e).__name__ == "CallReady" for e in events) == 1


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>\n{"name": "a", "arguments": {"x": 1}}\n</tool_call>\n<tool_call>\n{"name": "a", "arguments": {"x": 1}}\n</tool_call>',
        '{"name":"grep","arguments":{"pattern":"x"}}\n{"name":"grep","arguments":{"pattern":"x"}}',
    ],
)
def test_the_same_call_twice_in_one_notation_is_two_calls(text: str) -> None:
    """Models repeat a call on purpose in the notation they use (evaluations count both)."""
    calls = _calls(text, None)
    assert len(calls) == 2 and calls[0] == calls[1]


# --- a protocol's label in capitals ending a line after other text ----------------------------------

DELEGATE = Tool("delegate_task", parameters={"type": "object", "properties": {"target_agent": {"type": "string"}}})


def test_a_protocol_label_after_a_result_on_its_line_marks_the_call() -> None:
    """nos-coding/holmium's agents: ``TOOL_RESULT: {…} TOOL_CALL: {…}`` on one line."""
    text = 'TOOL_RESULT: {"success": true} TOOL_CALL: {"tool": "delegate_task", "params": {"target_agent": "reddit"}}'
    assert _calls(text, [DELEGATE]) == [("delegate_task", {"target_agent": "reddit"})]
    assert_every_cut_matches(text, [DELEGATE], step=11)


@pytest.mark.parametrize(
    "text",
    [
        'TOOL_RESULT: {"success": true} TOOL_CALL: {"tool": "other_task", "params": {}}',  # no offered tool named
        'The setting MAX_RETRIES: {"tool": "delegate_task"} is data',  # text after the object
        "I would use TOOL_CALL: but I have no arguments.",
    ],
)
def test_a_protocol_label_marks_only_an_offered_tools_call_ending_its_line(text: str) -> None:
    assert _calls(text, [DELEGATE]) == []


def test_a_protocol_label_in_a_code_comment_is_code() -> None:
    text = 'Here is a code block:\n```python\n# TOOL_CALL: {"tool": "delegate_task", "params": {}}\nprint("hi")\n```\nDone.'
    assert _calls(text, [DELEGATE]) == []
