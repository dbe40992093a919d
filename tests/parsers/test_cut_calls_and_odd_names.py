"""Calls the output cut off, names that are no names, and the tool's name as a JSON key.

Checked against the behaviour of Ollama's own parsers (its qwen3, ministral,
glm and tools test tables), where that behaviour is one a parser that is not
told the model should share:

* a value the output cut off mid-way (inside a string, or right after ``{``
  or a comma) is half written: the call is reported TRUNCATED, not run; a
  value that only lost its closing brackets is read, with the repair named;
* in a cut-off list of calls, the calls written whole before the cut run;
* ``<tool_call>words with spaces</tool_call>`` is not a call to a tool named
  "words with spaces";
* a misspelling is corrected only when it keeps the name's first letter
  (``unknown_tool`` is not ``known_tool``);
* ``{"get_weather": {...}}`` as the whole answer, for an offered tool, is that call;
* one broken call in a list of calls does not cost the others (Ollama's Cohere
  parser reads them one by one), and a block's closer where an ``</invoke>``
  belongs ends the invoke (its MiniMax parser's tests);
* Glimmer's ``atem:``-prefixed invokes are Claude's XML (its Glimmer parser).
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.types import DiagnosticKind, Tool

from .conftest import assert_every_cut_matches

TOOLS = [
    Tool("get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}}),
    Tool("known_tool", parameters={"type": "object", "properties": {"a": {"type": "integer"}}}),
]


def calls_of(text: str, tools: list | None = TOOLS) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "get_weather", "arguments": {',
        '{"name": "get_weather", "arguments": {"city": "Paris",',
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Par</tool_call>',
        '[TOOL_CALLS]get_weather[ARGS]{"city": "Pa',
    ],
)
def test_a_value_cut_off_mid_way_is_reported_not_run(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == []
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.TRUNCATED]
    assert_every_cut_matches(text, TOOLS, step=7)


def test_a_value_that_only_lost_its_closing_brackets_is_read() -> None:
    [call] = parse_response('{"name": "get_weather", "arguments": {"city": "Paris"', tools=TOOLS).tool_calls
    assert call.arguments == {"city": "Paris"} and "closed truncated JSON" in call.repairs


@pytest.mark.parametrize(
    "text",
    [
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_wea',
        '[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "known_tool", "arguments": {"a": "x',
        '[{"name": "get_weather", "arguments": {"city": "Paris"}},',
    ],
)
def test_calls_written_whole_before_a_cut_run(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert "closed a value the text cut off mid-way" not in parsed.tool_calls[0].repairs


@pytest.mark.parametrize("tools", [TOOLS, None])
def test_words_in_a_tool_call_tag_are_not_a_tool_name(tools: list | None) -> None:
    text = '<tool_call>not valid json</tool_call>\n<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
    assert calls_of(text, tools) == [("get_weather", {"city": "Oslo"})]
    assert calls_of("<tool_call>get_weather</tool_call>") == [("get_weather", {})]  # a bare name still is
    assert calls_of("<tool_call>Current Search<arg_key>q</arg_key><arg_value>x</arg_value></tool_call>", None) == [("Current Search", {"q": "x"})]


def test_a_misspelling_keeps_the_first_letter() -> None:
    assert calls_of('[TOOL_CALLS]get_wether[ARGS]{"city": "Oslo"}') == [("get_weather", {"city": "Oslo"})]
    parsed = parse_response('[TOOL_CALLS]unknown_tool[ARGS]{"a": 1}', tools=TOOLS)
    assert [(c.name, c.known) for c in parsed.tool_calls] == [("unknown_tool", False)]


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        ('{"get_weather": {"city": "Paris"}}', [("get_weather", {"city": "Paris"})]),
        ('{"get_weather": "{\\"city\\": \\"Paris\\"}"}', [("get_weather", {"city": "Paris"})]),
        ('Checking:\n{"get_weather": {"city": "Paris"}}', [("get_weather", {"city": "Paris"})]),
        ('{"get_weather": {"city": "Paris"}, "note": 1}', []),  # another key: data
        ('{"get_weather": {"city": "Paris"}}\nThat is the input.', []),  # the answer goes on
        ('The data {"get_weather": {"city": "Paris"}} is shown.', []),
        ('{"forecast": {"city": "Paris"}}', []),  # not an offered tool
    ],
)
def test_the_tool_name_as_the_only_key_of_the_answer(text: str, calls: list) -> None:
    assert calls_of(text) == calls
    assert_every_cut_matches(text, TOOLS, step=5)


LONGCAT = (
    "Checking.\n<longcat_tool_call>get_weather<longcat_arg_key>city</longcat_arg_key><longcat_arg_value>Paris</longcat_arg_value>"
    "</longcat_tool_call><longcat_tool_call>known_tool<longcat_arg_key>a</longcat_arg_key><longcat_arg_value>3</longcat_arg_value></longcat_tool_call>"
)


def test_longcat_key_value_calls_typed_by_the_schema() -> None:
    parsed = parse_response(LONGCAT, tools=TOOLS)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "longcat"),
        ("known_tool", {"a": 3}, "longcat"),
    ]
    assert parsed.content == "Checking."
    assert_every_cut_matches(LONGCAT, TOOLS, step=17)


def test_longcat_json_body_and_prose_mentions() -> None:
    assert calls_of('<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</longcat_tool_call>') == [("get_weather", {"city": "Oslo"})]
    assert calls_of("<longcat_tool_call>get_time</longcat_tool_call>", None) == [("get_time", {})]
    assert calls_of("The <longcat_tool_call> tag opens a call.", None) == []
    truncated = parse_response("<longcat_tool_call>get_weather<longcat_arg_key>city</longcat_arg_key><longcat_arg_value>Par", tools=TOOLS)
    assert truncated.tool_calls == [] and [d.kind for d in truncated.diagnostics] == [DiagnosticKind.TRUNCATED]


@pytest.mark.parametrize(
    "text",
    [
        '<|START_ACTION|>[{"tool_name": "known_tool", "parameters": {"a": 15:30}}, {"tool_name": "get_weather", "parameters": {"city": "Oslo"}}]<|END_ACTION|>',
        '[TOOL_CALLS][{"name": "known_tool", "arguments": {"a": x y}}, {"name": "get_weather", "arguments": {"city": "Oslo"}}]',
    ],
)
def test_one_broken_call_in_a_list_does_not_cost_the_others(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Oslo"})]
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.UNPARSEABLE]
    assert "known_tool" in parsed.diagnostics[0].raw
    assert_every_cut_matches(text, TOOLS, step=13)


def test_a_block_closer_where_the_invoke_closer_belongs() -> None:
    text = '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Tokyo</parameter>\n</minimax:tool_call>'
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Tokyo"})]
    assert "missing </invoke>" in parsed.tool_calls[0].repairs and parsed.content == ""
    assert_every_cut_matches(text, TOOLS, step=11)


def test_longcat_reasoning_is_thinking() -> None:
    text = "<longcat_think>Oslo, so get_weather.</longcat_think>" + LONGCAT
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.thinking == "Oslo, so get_weather." and parsed.content == "Checking."
    assert [c.name for c in parsed.tool_calls] == ["get_weather", "known_tool"]
    assert_every_cut_matches(text, TOOLS, step=23)


GLIMMER = (
    ' to=get_weather<|message|><atem:function_calls>\n<atem:invoke name="get_weather">\n<atem:parameter name="city">SF</atem:parameter>\n'
    '</atem:invoke>\n</atem:function_calls><|eom|><|start|>assistant to=known_tool<|message|><atem:function_calls>\n<atem:invoke name="known_tool">\n'
    '<atem:parameter name="a">2</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|start|>assistant to=user<|message|>Done<|eot|>'
)


def test_glimmer_atem_invokes_in_harmony_style_messages() -> None:
    """Glimmer addresses each message ``to=`` a recipient; a tool's message body is Claude's XML with ``atem:`` tags."""
    parsed = parse_response(GLIMMER, tools=TOOLS)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [
        ("get_weather", {"city": "SF"}, "anthropic_xml"),
        ("known_tool", {"a": 2}, "anthropic_xml"),
    ]
    assert parsed.diagnostics == []  # "to=user" addresses the reader, not a tool
    assert_every_cut_matches(GLIMMER, TOOLS, step=29)
