"""Calls kept beside an unreadable sibling; Kimi ids and fences; GLM padding; XML-escaped values."""

from __future__ import annotations

import pytest

from tests.parsers.conftest import assert_every_cut_matches
from utp.parsers import parse_response
from utp.types import DiagnosticKind, Tool

TOOLS = [
    Tool("example_tool", parameters={"type": "object", "properties": {"arg1": {"type": "string"}}}),
    Tool("grep", parameters={"type": "object", "properties": {"pattern": {"type": "string"}}}),
    Tool("read_file", parameters={"type": "object", "properties": {"path": {"type": "string"}}}),
    Tool("search", parameters={"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}}),
]
GOOD = '{"name": "example_tool", "arguments": {"arg1": "v"}}'
NOT_A_CALL = '{"name": "third_tool", "options": {"key": "value"}}'


def calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


@pytest.mark.parametrize(
    "text",
    [
        f"[TOOL_CALLS][{GOOD},{NOT_A_CALL}]",
        f"functools[{GOOD}, {NOT_A_CALL}]",
        f"<tool_call>[{NOT_A_CALL}, {GOOD}]</tool_call>",
        f'<tool_call>[{GOOD}, "oops"]</tool_call>',
        # a `tool_calls` key is the marker, written in JSON (an OpenAI message, an agent's envelope)
        f'{{"tool_calls": [{GOOD}, {NOT_A_CALL}]}}',
        f'{{"role": "assistant", "tool_calls": [{{"function": {GOOD}}}, {{"junk": true}}]}}',
    ],
)
def test_a_marked_call_list_keeps_its_calls_beside_an_item_that_is_not_one(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("example_tool", {"arg1": "v"})]
    skipped = [d for d in parsed.diagnostics if d.kind is DiagnosticKind.UNPARSEABLE]
    assert len(skipped) == 1 and "is not a call in the call list (skipped" in skipped[0].reason
    assert_every_cut_matches(text, TOOLS, step=11)


def test_a_bare_list_mixing_a_call_and_data_stays_data() -> None:
    """No marker says these are calls: a list with a non-call item is an answer's data."""
    text = f'[{GOOD}, {{"name": "Alice", "age": 31}}]'
    assert calls(text) == []
    assert calls(text, tools=None) == []


def test_a_marked_list_with_no_call_at_all_is_not_read() -> None:
    assert calls('<tool_call>[{"foo": 1}, {"foo": 2}]</tool_call>') == []
    assert calls('{"tool_calls": [{"foo": 1}, 2]}') == []


KIMI = "<|tool_calls_section_begin|>{}<|tool_calls_section_end|>"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # a client's own call ids after the colon
        ('<|tool_call_begin|>functions.grep:call_123<|tool_call_argument_begin|>{"pattern": "test"}<|tool_call_end|>', [("grep", {"pattern": "test"})]),
        # arguments fenced as Markdown, on one line or several
        ('<|tool_call_begin|>functions.grep:0<|tool_call_argument_begin|>```json {"pattern":"x"}```<|tool_call_end|>', [("grep", {"pattern": "x"})]),
        ('<|tool_call_begin|>functions.grep:0<|tool_call_argument_begin|>```\n{"pattern":"x"}\n```<|tool_call_end|>', [("grep", {"pattern": "x"})]),
        # a call token with neither arguments nor end before the next call: the next one is read
        (
            '<|tool_call_begin|>malformed_without_args<|tool_call_begin|>functions.read_file:0<|tool_call_argument_begin|>{"path":"a.ts"}<|tool_call_end|>',
            [("read_file", {"path": "a.ts"})],
        ),
    ],
)
def test_kimi_sections_read_client_ids_fenced_arguments_and_skip_an_empty_call(body: str, expected: list) -> None:
    text = KIMI.format(body)
    assert calls(text) == expected
    assert_every_cut_matches(text, TOOLS, step=13)


def test_kimi_fenced_arguments_are_a_recorded_repair_and_a_stray_fence_inside_is_not_unwrapped() -> None:
    text = KIMI.format('<|tool_call_begin|>functions.grep:0<|tool_call_argument_begin|>```json {"pattern":"```"}```<|tool_call_end|>')
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == []  # a fence inside the fence: not one fenced value, so not guessed at
    fenced = parse_response(KIMI.format('<|tool_call_begin|>functions.grep:0<|tool_call_argument_begin|>```json {"pattern":"x"}```<|tool_call_end|>'), tools=TOOLS)
    assert fenced.tool_calls[0].repairs == ["arguments inside a Markdown fence"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("  Beijing  ", "Beijing"),
        ("\n\tcelsius\r\n", "celsius"),
        ("  42  ", 42),  # typed after the padding goes
        ("def f():\n    return 1\n", "def f():\n    return 1\n"),  # several lines: code keeps its whitespace
    ],
)
def test_glm_one_line_values_lose_their_padding(value: str, expected: object) -> None:
    tools = [Tool("f", parameters={"type": "object", "properties": {"a": {"type": "integer" if isinstance(expected, int) else "string"}}})]
    text = f"<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>{value}</arg_value>\n</tool_call>"
    assert calls(text, tools) == [("f", {"a": expected})]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("&lt;script&gt; &amp; &quot;test&quot;", '<script> & "test"'),
        ("price &lt; 100 &amp;&amp; rating &#62; 4", "price < 100 && rating > 4"),
        # a raw markup character or a bare ampersand: text that mentions entities, kept as written
        ("<b>Tom &amp; Jerry</b>", "<b>Tom &amp; Jerry</b>"),
        ("a=1&b=2 &amp; more", "a=1&b=2 &amp; more"),
        ("no entities here", "no entities here"),
    ],
)
def test_xml_parameters_escaped_throughout_are_unescaped(value: str, expected: str) -> None:
    text = f'<function_calls>\n<invoke name="search">\n<parameter name="query">{value}</parameter>\n</invoke>\n</function_calls>'
    assert calls(text) == [("search", {"query": expected})]
    assert_every_cut_matches(text, TOOLS, step=17)


def test_qwen3_coder_values_keep_entities_as_its_reference_parser_does() -> None:
    text = "<tool_call>\n<function=search>\n<parameter=query>\nTom &amp; Jerry\n</parameter>\n</function>\n</tool_call>"
    assert calls(text) == [("search", {"query": "Tom &amp; Jerry"})]


def test_a_run_of_empty_kimi_call_tokens_is_skipped_and_reported_once() -> None:
    """A flood of call tokens before one real call: one report for the run, not one per token (linear)."""
    text = KIMI.format("<|tool_call_begin|>x" * 5000 + '<|tool_call_begin|>functions.grep:0<|tool_call_argument_begin|>{"pattern":"x"}<|tool_call_end|>')
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("grep", {"pattern": "x"})]
    assert len([d for d in parsed.diagnostics if d.kind is DiagnosticKind.UNPARSEABLE]) == 1
