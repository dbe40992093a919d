"""Qwen-Agent's function-call prompt (``qwen_agent/llm/fncall_prompts/qwen_fncall_prompt.py``).

The prompt teaches ``✿FUNCTION✿: NAME`` / ``✿ARGS✿: INPUT`` lines and stops at
``✿RESULT✿`` / ``✿RETURN✿``; the cases follow that file's own reading of the
output (``postprocess_fncall_messages``): prose before the first marker is
content, several ``✿ARGS✿`` after one name are several calls, a name alone is a
call without arguments, a comment after the JSON object is not part of it.
"""

from __future__ import annotations

import pytest

from tests.parsers.conftest import assert_every_cut_matches
from utp.parsers import get_family, parse_response
from utp.types import DiagnosticKind, Tool, ToolCall

TOOLS = [
    Tool("get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}}),
    Tool("code_interpreter", parameters={"type": "object", "properties": {"code": {"type": "string"}}}),
]

PARALLEL = (
    "I'll check both.\n✿FUNCTION✿: get_weather\n✿ARGS✿: {\"city\": \"Paris\"}\n"
    "✿FUNCTION✿: get_weather\n✿ARGS✿: {\"city\": \"Lyon\"}"
)


def calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


def test_parallel_calls_after_prose() -> None:
    parsed = parse_response(PARALLEL, tools=TOOLS)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "qwen_agent"),
        ("get_weather", {"city": "Lyon"}, "qwen_agent"),
    ]
    assert parsed.content == "I'll check both."


def test_several_inputs_after_one_name_are_several_calls() -> None:
    text = '✿FUNCTION✿: get_weather\n✿ARGS✿: {"city": "Paris"}\n✿ARGS✿: {"city": "Lyon"}'
    assert calls(text) == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Lyon"})]


def test_a_name_alone_is_a_call_without_arguments() -> None:
    assert calls("✿FUNCTION✿: get_weather\nDone.") == [("get_weather", {})]


def test_a_code_block_goes_to_the_only_parameter() -> None:
    text = "✿FUNCTION✿: code_interpreter\n✿ARGS✿: ```py\nprint(1 + 1)\n```"
    assert calls(text) == [("code_interpreter", {"code": "```py\nprint(1 + 1)\n```"})]


def test_text_input_without_a_one_parameter_tool_is_reported() -> None:
    parsed = parse_response("✿FUNCTION✿: get_weather\n✿ARGS✿: Paris please", tools=[Tool("get_weather")])
    assert parsed.tool_calls == []
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.UNPARSEABLE]


def test_an_invented_result_and_answer_are_dropped_and_reported() -> None:
    text = PARALLEL + '\n✿RESULT✿: {"temp": 21}\n✿RETURN✿: It is 21 degrees in Paris.'
    parsed = parse_response(text, tools=TOOLS)
    assert len(parsed.tool_calls) == 2
    assert parsed.content == "I'll check both."
    assert any("✿RESULT✿" in d.reason for d in parsed.diagnostics)


@pytest.mark.parametrize("text", [
    "The prompt uses ✿FUNCTION✿ and ✿ARGS✿ markers.",
    "✿FUNCTION✿\n✿ARGS✿: {}",
    "✿RESULT✿: 42",
])
def test_markers_without_the_call_syntax_are_prose(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == []
    assert parsed.content == text


@pytest.mark.parametrize("text", ["✿FUNCTION✿: get_weather\n✿ARGS✿:", "✿FUNCTION✿: get_weather\n", "✿FUNCTION✿: get_weather\n✿AR"])
def test_output_cut_off_before_the_input_is_truncated(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == []
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.TRUNCATED]


def test_an_empty_input_before_the_next_call_is_no_arguments() -> None:
    text = '✿FUNCTION✿: get_weather\n✿ARGS✿:\n✿FUNCTION✿: get_weather\n✿ARGS✿: {"city": "Paris"}'
    assert calls(text) == [("get_weather", {}), ("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize("text", [PARALLEL, PARALLEL + "\n✿RESULT✿: 21\n✿RETURN✿: Warm.", "✿FUNCTION✿: code_interpreter\n✿ARGS✿: ```py\nx = 1\n```\nThen I print it."])
def test_streams_like_one_shot(text: str) -> None:
    assert_every_cut_matches(text, TOOLS, step=17)


def test_render_is_the_prompt_format() -> None:
    assert get_family("qwen_agent").render([ToolCall("f", {"a": 1})]) == '✿FUNCTION✿: f\n✿ARGS✿: {"a": 1}'


def test_an_input_broken_off_by_the_next_marker_is_reported_not_run() -> None:
    text = '✿FUNCTION✿: get_weather\n✿ARGS✿: {"city": "Par\n✿FUNCTION✿: get_weather\n✿ARGS✿: {"city": "Lyon"}'
    parsed = parse_response(text, tools=TOOLS)
    assert calls(text) == [("get_weather", {"city": "Lyon"})]
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.UNPARSEABLE]


@pytest.mark.parametrize(
    "text",
    [
        # Towel's test: the colons left out, the name glued to its marker and the input on the next line
        '✿FUNCTION✿run_command\n✿ARGS✿{"command": "ls"}\n',
        'I will list it.\n✿FUNCTION✿run_command\n✿ARGS✿{"command": "ls"}\n✿RESULT✿\n',
    ],
)
def test_markers_whose_colons_were_left_out(text: str) -> None:
    tools = [Tool("run_command", parameters={"type": "object", "properties": {"command": {"type": "string"}}})]
    parsed = parse_response(text, tools=tools)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("run_command", {"command": "ls"})]
    assert parsed.tool_calls[0].repairs[0] == "the colon after ✿FUNCTION✿ left out"
    assert_every_cut_matches(text, tools, step=3)


@pytest.mark.parametrize("text", ["The ✿FUNCTION✿ marker names the tool.", "✿FUNCTION✿run_command is the marker", "✿FUNCTION✿run command\n✿ARGS✿{}"])
def test_without_the_colon_only_the_glued_name_and_the_next_lines_input_make_a_call(text: str) -> None:
    assert parse_response(text).tool_calls == []


def test_a_name_alone_ending_the_output_calls_a_tool_that_takes_nothing() -> None:
    """palindrome-rl/AGENT8088's tests: ``✿FUNCTION✿: git_status`` and nothing after it."""
    status = Tool("git_status")
    text = "✿FUNCTION✿: git_status"
    assert [(c.name, c.arguments) for c in parse_response(text, tools=[status]).tool_calls] == [("git_status", {})]
    assert_every_cut_matches(text, [status], step=5)
    assert parse_response("✿FUNCTION✿: get_weather", tools=TOOLS).tool_calls == []  # it takes a city: cut off
