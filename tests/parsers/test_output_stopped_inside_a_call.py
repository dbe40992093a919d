"""Calls the output stopped inside: one rule for every family that writes values whole.

A model that stops right after a whole value usually meant to (its stop token
stood where the closer belongs), so the call is read as written and the repair
names the missing closer, as a JSON call missing its last braces already was.
A value cut in half is never run. When the server says the output hit its
length limit (``done_reason: "length"``), the rest of the arguments were never
written, so a call the output stopped inside is reported TRUNCATED instead,
in one-shot parsing and in a stream alike.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.parsers.streaming import CallReady, stream_parse
from utp.types import DiagnosticKind, Tool

from .conftest import assert_every_cut_matches

WEATHER = Tool(
    "get_weather",
    parameters={"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
)
TOOLS = [WEATHER]
D = "｜DSML｜"

#: family -> (a call stopped right after its first whole value, the same call stopped inside the second value)
CUT = {
    "qwen3_coder": (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n<parameter=days>\n2",
    ),
    "qwen3_coder bare": (
        "<function=get_weather>\n<parameter=city>\nOslo\n</parameter>",
        "<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n<parameter=days>\n",
    ),
    "anthropic_xml": (
        '<function_calls>\n<invoke name="get_weather">\n<parameter name="city">Oslo</parameter>\n',
        '<function_calls>\n<invoke name="get_weather">\n<parameter name="city">Oslo</parameter>\n<parameter name="days">2',
    ),
    "minimax": (
        '<minimax:tool_call><invoke name="get_weather"><parameter name="city">Oslo</parameter>',
        '<minimax:tool_call><invoke name="get_weather"><parameter name="city">Oslo</parameter><parameter name="da',
    ),
    "deepseek_dsml": (
        f'<{D}function_calls>\n<{D}invoke name="get_weather">\n<{D}parameter name="city" string="true">Oslo</{D}parameter>\n',
        f'<{D}function_calls>\n<{D}invoke name="get_weather">\n<{D}parameter name="city" string="true">Oslo</{D}parameter>\n<{D}parameter name="days" string="false">2',
    ),
    "minicpm4": (
        '<function name="get_weather"><param name="city">Oslo</param>\n',
        '<function name="get_weather"><param name="city">Oslo</param><param name="days">2',
    ),
    "glm": (
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Oslo</arg_value>\n",
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Oslo</arg_value>\n<arg_key>days</arg_key>\n<arg_value>2",
    ),
    "hermes json": (
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"',
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "days": ',
    ),
    "hermes json cut inside a key": (
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"',
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "da',
    ),
    "json envelope cut inside a key": (
        '{"response": "checking", "actions": [{"tool": "get_weather", "arguments": {"city": "Oslo"',
        '{"response": "checking", "actions": [{"tool": "get_weather", "arguments": {"ci',
    ),
    "kimi_k2": (
        '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Oslo"',
        '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Oslo", "days": ',
    ),
    "glm elements": (
        "<tool_call>get_weather<city>Oslo</city>\n",
        "<tool_call>get_weather<city>Oslo</city><days>2",
    ),
}
WHOLE = [pytest.param(whole, id=family) for family, (whole, _) in CUT.items()]
HALF = [pytest.param(half, id=family) for family, (_, half) in CUT.items()]


@pytest.mark.parametrize("text", WHOLE)
def test_a_call_stopped_after_a_whole_value_is_read_with_the_cut_named(text: str) -> None:
    parsed = parse_response("Checking.\n" + text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Oslo"})]
    (call,) = parsed.tool_calls
    assert any(r.startswith("output ended before") or r == "closed truncated JSON" for r in call.repairs), call.repairs
    assert parsed.content == "Checking."
    assert DiagnosticKind.REPAIRED in [d.kind for d in parsed.diagnostics]


@pytest.mark.parametrize("text", HALF)
def test_a_call_stopped_inside_a_value_is_reported_not_run(text: str) -> None:
    parsed = parse_response("Checking.\n" + text, tools=TOOLS)
    assert parsed.tool_calls == []
    assert DiagnosticKind.TRUNCATED in [d.kind for d in parsed.diagnostics]
    assert parsed.content == "Checking."


def _ollama(text: str, reason: str) -> dict:
    return {"message": {"role": "assistant", "content": text}, "done": True, "done_reason": reason}


@pytest.mark.parametrize("text", WHOLE)
def test_at_the_length_limit_a_call_the_output_stopped_inside_is_not_run(text: str) -> None:
    stopped = parse_response(_ollama(text, "stop"), tools=TOOLS)
    limited = parse_response(_ollama(text, "length"), tools=TOOLS)
    assert len(stopped.tool_calls) == 1
    assert limited.tool_calls == []
    assert [d.kind for d in limited.diagnostics] == [DiagnosticKind.TRUNCATED]
    assert "length limit" in limited.diagnostics[0].reason


def test_at_the_length_limit_calls_written_whole_still_run() -> None:
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Ber'
    parsed = parse_response(_ollama(text, "length"), tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Oslo"})]
    whole = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
    assert len(parse_response(_ollama(whole, "length"), tools=TOOLS).tool_calls) == 1
    # a closer repaired inside the text is not where the output stopped
    inside = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}</tool_call> and then some words'
    assert len(parse_response(_ollama(inside, "length"), tools=TOOLS).tool_calls) == 1


@pytest.mark.parametrize("reason", ["stop", "length"])
@pytest.mark.parametrize("text", WHOLE)
def test_a_stream_applies_the_length_limit_as_one_shot_does(text: str, reason: str) -> None:
    chunks = [{"message": {"role": "assistant", "content": text[i : i + 3]}, "done": False} for i in range(0, len(text), 3)]
    chunks.append({"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": reason})
    events, result = stream_parse(chunks, tools=TOOLS)
    announced = [(e.call.name, e.call.arguments) for e in events if isinstance(e, CallReady)]
    assert announced == [(c.name, c.arguments) for c in result.tool_calls]
    assert len(announced) == (1 if reason == "stop" else 0)


@pytest.mark.parametrize("text", WHOLE + HALF)
def test_streaming_a_cut_call_matches_one_shot_at_every_cut(text: str) -> None:
    assert_every_cut_matches("Checking.\n" + text, TOOLS, step=17)


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "get_weather", "arguments": {"city": "Oslo""}}',
        '{"name": "get_weather", "arguments": {"city": "Oslo", "}}',
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}"}</tool_call>',
    ],
)
def test_a_stray_quote_before_the_closers_is_not_a_cut(text: str) -> None:
    """A quote that never closes with only closers after it was written whole: the call runs."""
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Oslo"})]
