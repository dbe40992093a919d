"""CWM's "Cursor-style" tool tags: ``<tool: function>\\nNAME ARGS\\n</tool>``.

The vectors are vLLM's (``tests/tool_parsers/test_cwm_tool_parser.py``); the reading rules its
``cwm`` tool parser's: the label is informational, the body's first word is the tool, the rest
is a JSON object or else the ``command`` argument.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp.parsers import parse_response
from utp.parsers.base import ParseContext, registered_families
from utp.types import Tool

from .conftest import assert_stream_matches
from .test_heads_deepseek_kimi_granite_jamba_internlm import _same_scans

FAMILY = registered_families()["cwm"]


def _calls(text: str, **kw: object) -> list[tuple]:
    return [(c.name, c.arguments) for c in parse_response(text, **kw).tool_calls]


def test_vllm_vector_after_reasoning() -> None:
    text = '<think>Let me search.</think>\n<tool: function>\nterminal find . -name "*.py" | xargs grep -n "def bulk_create"\n</tool>\n'
    parsed = parse_response(text)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [
        ("terminal", {"command": 'find . -name "*.py" | xargs grep -n "def bulk_create"'}, "cwm")
    ]
    assert parsed.content == "" and parsed.thinking == "Let me search."
    assert_stream_matches(text)


def test_vllm_vector_two_blocks_after_prose() -> None:
    text = "preamble\n<tool: function>\nterminal echo hi\n</tool>\n<tool: function>\nterminal echo bye\n</tool>\n"
    parsed = parse_response(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("terminal", {"command": "echo hi"}), ("terminal", {"command": "echo bye"})]
    assert parsed.content == "preamble"
    assert_stream_matches(text)


def test_a_json_object_is_the_arguments() -> None:
    assert _calls('<tool: function>\nread_file {"path": "a.py", "lines": [1, 2]}\n</tool>') == [("read_file", {"path": "a.py", "lines": [1, 2]})]


def test_command_text_goes_to_an_offered_tools_only_string_parameter() -> None:
    tool = Tool("bash", parameters={"type": "object", "properties": {"cmd": {"type": "string"}}})
    [call] = parse_response("<tool: function>\nbash ls -la\n</tool>", tools=[tool]).tool_calls
    assert call.arguments == {"cmd": "ls -la"} and call.repairs


@pytest.mark.parametrize("text", ["Use <tool: x> tags for that.", "<tool: function>\nterminal ls (never closed)", "a <tool:> b </tool>"])
def test_unclosed_or_unlabelled_tags_stay_content(text: str) -> None:
    parsed = parse_response(text)
    assert parsed.tool_calls == [] and parsed.content == text.strip()
    assert_stream_matches(text)


_BODY = ["<tool: function>", "<tool:", " function", ">", "\n", "terminal", " ls -la", '{"a": 1}', "</tool>", "</tool", " ", "x", "<think>t</think>"]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.lists(st.sampled_from(_BODY), max_size=7))
def test_extract_declines_wherever_the_head_fails(body: list[str]) -> None:
    text = "<tool:" + "".join(body)
    if re.match(FAMILY.trigger_heads["<tool:"], text[len("<tool:") :]):
        return
    assert FAMILY.extract(text, 0, "<tool:", ParseContext()) is None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(st.sampled_from([*_BODY, "ok "]), min_size=1, max_size=10))
def test_scans_and_streams_agree(parts: list[str]) -> None:
    text = "".join(parts)
    _same_scans(text)
    assert_stream_matches(text)
