"""Python-style call lists inside call markers: in JSON tags, and with the closer left out.

Nemotron's ``<TOOLCALL>`` (and Jamba's ``<tool_calls>``) hold a JSON list, but
models prompted Python-style put ``[f(a=1)]`` there. LFM2's and Llama 4's
markers (``<|tool_call_start|>``, ``<|python_start|>``) are sometimes not
closed: the model ends the message (``<|eom|>``) or goes on writing after the
list. A whole list right after the marker is the call; what follows stays
content.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response

from .conftest import assert_every_cut_matches, assert_stream_matches_under

TOOLS = [
    {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
    {"name": "search", "parameters": {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}}},
]

READ = {
    "python list in Nemotron's tag": ('<TOOLCALL>[get_weather(city="Oslo"), search(q="fjords", n=2)]</TOOLCALL>', 2, ""),
    "python list in Jamba's tag": ('<tool_calls>[get_weather(city="Oslo")]</tool_calls>', 1, ""),
    "Llama 4 marker ended by the message's end token": ('<|python_start|>[get_weather(city="Oslo")]<|eom|>', 1, "<|eom|>"),
    "LFM2 marker, text after the list": ('<|tool_call_start|>[get_weather(city="Oslo")] Checking now.', 1, "Checking now."),
    "LFM2 marker, a closed one later": (
        '<|tool_call_start|>[get_weather(city="Oslo")] then <|tool_call_start|>[search(q="x", n=1)]<|tool_call_end|>',
        2,
        "then",
    ),
}


@pytest.mark.parametrize("case", sorted(READ))
def test_wrapped_python_lists_are_read(case: str) -> None:
    text, count, content = READ[case]
    parsed = parse_response(text, tools=TOOLS)
    assert len(parsed.tool_calls) == count and parsed.tool_calls[0].arguments == {"city": "Oslo"}
    assert parsed.content == content
    assert_stream_matches_under(text, TOOLS, 6)


def test_a_closer_left_out_is_said() -> None:
    call = parse_response(READ["LFM2 marker, text after the list"][0], tools=TOOLS).tool_calls[0]
    assert "<|tool_call_end|> missing after the call list" in call.repairs


def test_json_in_nemotron_tags_is_still_jambas() -> None:
    call = parse_response('<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Oslo"}}]</TOOLCALL>', tools=TOOLS).tool_calls[0]
    assert (call.name, call.arguments, call.format) == ("get_weather", {"city": "Oslo"}, "jamba")


@pytest.mark.parametrize(
    "text",
    [
        "<|tool_call_start|>[get_weather(city=",  # cut off inside the list
        "<|python_start|>see [the notes] for more",  # no call list opens the body
    ],
)
def test_no_whole_list_no_call(text: str) -> None:
    assert parse_response(text, tools=TOOLS).tool_calls == []


def test_streams_agree_at_every_cut() -> None:
    assert_every_cut_matches(READ["LFM2 marker, a closed one later"][0], TOOLS, 3)
