"""Kimi K3's XTML channels: calls in the ``tools`` channel, the reply in ``response``.

The grammar and the vectors are SGLang's (``kimik3_detector.py``, ``kimik3_format.py`` and
``test/registered/function_call/test_kimik3_detector.py``)::

    <|open|>tools<|sep|><|open|>call tool="NAME" index="1"<|sep|>
      <|open|>argument key="K" type="string"<|sep|>raw text<|close|>argument<|sep|>
    <|close|>call<|sep|><|close|>tools<|sep|>
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp.parsers import parse_response
from utp.parsers.base import ParseContext, registered_families
from utp.parsers.families import kimi_k3
from utp.types import DiagnosticKind, Tool

from .conftest import assert_stream_matches
from .test_heads_deepseek_kimi_granite_jamba_internlm import _same_scans

FAMILY = registered_families()["kimi_k3"]
TOOLS_OPEN, TOOLS_CLOSE, CALL_CLOSE, ARG_CLOSE = kimi_k3.TOOLS_OPEN, kimi_k3.TOOLS_CLOSE, kimi_k3.CALL_CLOSE, kimi_k3.ARG_CLOSE


def _call(name: str, *args: tuple[str, str, str], index: int = 1) -> str:
    body = "".join(f'<|open|>argument key="{k}" type="{t}"<|sep|>{v}{ARG_CLOSE}' for k, t, v in args)
    return f'<|open|>call tool="{name}" index="{index}"<|sep|>{body}{CALL_CLOSE}'


def _calls(text: str, **kw: object) -> list[tuple]:
    return [(c.name, c.arguments) for c in parse_response(text, **kw).tool_calls]


def test_reply_then_a_call_with_typed_arguments() -> None:
    text = (
        "<|open|>response<|sep|>Let me run it.<|close|>response<|sep|>"
        + TOOLS_OPEN + _call("python", ("code", "string", "print(1)"), ("opts", "object", '{"a": 1}')) + TOOLS_CLOSE
    )
    parsed = parse_response(text)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [("python", {"code": "print(1)", "opts": {"a": 1}}, "kimi_k3")]
    assert parsed.content == "Let me run it."
    assert_stream_matches(text)


def test_parallel_calls_and_an_unclosed_section() -> None:
    both = TOOLS_OPEN + _call("python", ("code", "string", "a")) + _call("python", ("code", "string", "b"), index=2) + TOOLS_CLOSE
    assert _calls(both) == [("python", {"code": "a"}), ("python", {"code": "b"})]
    unclosed = TOOLS_OPEN + _call("python", ("code", "string", "x"))
    assert _calls(unclosed) == [("python", {"code": "x"})]
    assert_stream_matches(both)
    assert_stream_matches(unclosed)


def test_non_string_types_are_json_and_bad_json_stays_text() -> None:
    text = TOOLS_OPEN + _call("python", ("n", "number", "42"), ("flag", "boolean", "true"), ("bad", "object", "{not json")) + TOOLS_CLOSE
    assert _calls(text) == [("python", {"n": 42, "flag": True, "bad": "{not json"})]


def test_a_string_value_is_raw_text_and_attributes_are_unescaped() -> None:
    text = TOOLS_OPEN + '<|open|>call tool="say &quot;hi&quot;" index="1"<|sep|><|open|>argument key="text" type="string"<|sep|> 42 {x} <|close|>argument<|sep|>' + CALL_CLOSE
    assert _calls(text) == [('say "hi"', {"text": " 42 {x} "})]


def test_an_untyped_argument_is_typed_by_the_schema() -> None:
    tool = Tool("f", parameters={"type": "object", "properties": {"n": {"type": "integer"}}})
    text = TOOLS_OPEN + '<|open|>call tool="f"<|sep|><|open|>argument key="n"<|sep|>7<|close|>argument<|sep|>' + CALL_CLOSE
    assert _calls(text, tools=[tool]) == [("f", {"n": 7})]


def test_think_channel_is_reasoning_and_a_call_inside_it_is_not_run() -> None:
    text = "<|open|>think<|sep|>maybe " + TOOLS_OPEN + _call("rm", ("p", "string", "/")) + "<|close|>think<|sep|>Done."
    parsed = parse_response(text)
    assert parsed.tool_calls == [] and parsed.content == "Done."
    assert parsed.thinking.startswith("maybe")


def test_output_cut_inside_a_call_keeps_the_complete_ones_and_reports_the_cut() -> None:
    text = TOOLS_OPEN + _call("a", ("x", "string", "1")) + '<|open|>call tool="b"<|sep|><|open|>argument key="y" type="string"<|sep|>unfini'
    parsed = parse_response(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("a", {"x": "1"})]
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.TRUNCATED]
    assert parsed.content == ""


def test_arguments_as_one_json_block() -> None:
    block = '<|open|>json type="object"<|sep|>{"path": "a <|close|>json<|sep|> b", "depth": 2}<|close|>json<|sep|>'
    text = TOOLS_OPEN + '<|open|>call tool="scan" index="1"<|sep|>' + block + CALL_CLOSE + TOOLS_CLOSE
    assert _calls(text) == [("scan", {"path": "a <|close|>json<|sep|> b", "depth": 2})]
    assert_stream_matches(text)
    for broken, reason in [("{path: 1}", "unreadable JSON"), ('["a"]', "not an object"), ('{"a": 1}', "not closed")]:
        closer = "" if reason == "not closed" else "<|close|>json<|sep|>"
        parsed = parse_response(TOOLS_OPEN + '<|open|>call tool="scan"<|sep|><|open|>json type="object"<|sep|>' + broken + closer + CALL_CLOSE + TOOLS_CLOSE)
        assert parsed.tool_calls == [] and reason in parsed.diagnostics[0].reason


@pytest.mark.parametrize(
    ("body", "repaired"),
    [
        # the argument's closer left out: the call's closer ends the value
        ('<|open|>argument key="cmd" type="string"<|sep|>ls -l' + CALL_CLOSE + TOOLS_CLOSE, "<|close|>argument<|sep|> supplied"),
        # the call's closer left out: the section's closer (or the response's, the message's) ends the call
        ('<|open|>argument key="cmd" type="string"<|sep|>ls -l' + ARG_CLOSE + TOOLS_CLOSE, "<|close|>call<|sep|> supplied"),
        ('<|open|>argument key="cmd" type="string"<|sep|>ls -l' + ARG_CLOSE + "<|close|>response<|sep|><|close|>message<|sep|>", "<|close|>call<|sep|> supplied"),
        # both left out: the message closing ends the value and the call
        ('<|open|>argument key="cmd" type="string"<|sep|>ls -l' + "<|close|>message<|sep|>", "<|close|>argument<|sep|> supplied"),
    ],
)
def test_a_closing_marker_left_out_is_supplied_where_the_next_marker_decides(body: str, repaired: str) -> None:
    text = "<|open|>response<|sep|>Listing.<|close|>response<|sep|>" + TOOLS_OPEN + '<|open|>call tool="sh" index="1"<|sep|>' + body
    parsed = parse_response(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("sh", {"cmd": "ls -l"})]
    assert parsed.content == "Listing."
    assert any(repaired in r for r in parsed.tool_calls[0].repairs)
    assert_stream_matches(text)


def test_the_next_call_ends_one_left_open() -> None:
    first = '<|open|>call tool="a" index="1"<|sep|><|open|>argument key="x" type="number"<|sep|>1' + ARG_CLOSE
    text = TOOLS_OPEN + first + _call("b", ("y", "string", "2"), index=2) + TOOLS_CLOSE
    assert _calls(text) == [("a", {"x": 1}), ("b", {"y": "2"})]
    assert_stream_matches(text)


def test_a_value_quoting_a_closing_marker_keeps_it() -> None:
    quoted = "grep -n '<|close|>argument<|sep|>' and '<|close|>call<|sep|>' parser.py"
    text = TOOLS_OPEN + _call("sh", ("cmd", "string", quoted)) + TOOLS_CLOSE
    assert _calls(text) == [("sh", {"cmd": quoted})]
    assert_stream_matches(text)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_json_numbers_stay_text(constant: str) -> None:
    text = TOOLS_OPEN + _call("f", ("n", "number", constant)) + TOOLS_CLOSE
    assert _calls(text) == [("f", {"n": constant})]


def test_a_call_without_a_tool_attribute_is_reported() -> None:
    parsed = parse_response(TOOLS_OPEN + '<|open|>call index="1"<|sep|>' + CALL_CLOSE + TOOLS_CLOSE)
    assert parsed.tool_calls == []
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.UNPARSEABLE]


@pytest.mark.parametrize("text", ["Use <|open|>callback here.", "<|open|>call x=1 then", "The <|open|>tools marker opens a channel."])
def test_near_misses_stay_content(text: str) -> None:
    parsed = parse_response(text)
    assert parsed.tool_calls == [] and parsed.content == text and parsed.diagnostics == []
    assert_stream_matches(text)


# ------------------------------------------------------------------------ heads and streams

_BODY = [
    TOOLS_OPEN, TOOLS_CLOSE, "<|open|>call", " ", "\n", 'tool="f"', ' index="1"', "<|sep|>", '<|open|>argument key="a" type="string"<|sep|>',
    "v", ARG_CLOSE, CALL_CLOSE, "<|open|>response<|sep|>", "<|close|>response<|sep|>", "<|close|>message<|sep|>", "x=1", '"', "tool", "=",
    "<|open|>think<|sep|>", "<|close|>think<|sep|>", "<|open|>", "<|close|>",
]


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trigger=st.sampled_from(sorted(FAMILY.trigger_heads)), body=st.lists(st.sampled_from(_BODY), max_size=7))
def test_extract_declines_wherever_the_head_fails(trigger: str, body: list[str]) -> None:
    text = trigger + "".join(body)
    if re.match(FAMILY.trigger_heads[trigger], text[len(trigger) :]):
        return
    for ctx in (ParseContext(), ParseContext([Tool("f")])):
        assert FAMILY.extract(text, 0, trigger, ctx) is None, text


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(st.sampled_from([*_BODY, "ok "]), min_size=1, max_size=10))
def test_filtered_scan_equals_literal_scan(parts: list[str]) -> None:
    _same_scans("".join(parts))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(st.sampled_from([*_BODY, "ok "]), min_size=1, max_size=10))
def test_streaming_matches_one_shot(parts: list[str]) -> None:
    text = "".join(parts)
    if "<|close|>think<|sep|>" in text and "<|open|>think<|sep|>" not in text.split("<|close|>think<|sep|>")[0]:
        return  # pre-filled reasoning: the stream's documented difference in content
    assert_stream_matches(text)
