"""Correctness fixes that came with the parser speed work, and the work bounds that keep it fast.

* hermes reads valid JSON whole: a ``</tool_call>`` inside a string argument
  is the argument's text, not the end of the call;
* a ```` ```json ```` fence between finished sentences is the reply's call
  (and is consumed), while a fence introduced by ``:`` stays a sample;
* streaming prose takes the fast path: no buffer scan per chunk;
* decoding at many positions of one long text stays linear.
"""

from __future__ import annotations

import json
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given
from hypothesis import strategies as st

import utp.parsers.streaming as streaming
import utp.parsers.streamscan as streamscan
from utp.parsers import get_family, parse_response
from utp.parsers.streaming import CallReady, ContentDelta, StreamParser, stream_parse
from utp.parsers.textscan import clear_cache, nth_forward
from utp.types import Tool, ToolCall

from .conftest import names_args

TOOLS = [Tool("get_weather"), Tool("write_file")]


def _spy(owner: object, name: str) -> Any:
    """Count calls to ``owner.name`` while it keeps working (a method gets its ``self``)."""
    original = getattr(owner, name)
    return patch.object(owner, name, autospec=True, side_effect=original) if isinstance(owner, type) else patch.object(owner, name, wraps=original)


# ---------------------------------------------------------------- hermes: closers inside strings


@pytest.mark.parametrize("inside", ["</tool_call>", "<tool_call>", "</tool_call> and <tool_call>{}</tool_call>"])
def test_hermes_closer_inside_a_string_argument_does_not_cut_the_call(inside: str) -> None:
    arguments = {"path": "notes.md", "content": f"Wrap calls in {inside} tags."}
    text = "Writing it.\n<tool_call>\n" + json.dumps({"name": "write_file", "arguments": arguments}) + "\n</tool_call>\nDone."
    parsed = parse_response(text, tools=TOOLS)
    assert names_args(parsed.tool_calls) == [("write_file", json.dumps(arguments, sort_keys=True))]
    assert parsed.tool_calls[0].format == "hermes"
    assert parsed.content == "Writing it.\nDone."


def test_hermes_closer_inside_a_string_when_the_closing_tag_is_missing() -> None:
    arguments = {"content": "ends with </tool_call> here"}
    text = "<tool_call>" + json.dumps({"name": "write_file", "arguments": arguments})
    assert names_args(parse_response(text).tool_calls) == [("write_file", json.dumps(arguments, sort_keys=True))]


def test_hermes_two_blocks_each_with_a_closer_in_a_string_stay_two_calls() -> None:
    block = '<tool_call>{"name": "write_file", "arguments": {"content": "x</tool_call>y"}}</tool_call>'
    parsed = parse_response(block + "\n" + block)
    assert [c.arguments["content"] for c in parsed.tool_calls] == ["x</tool_call>y", "x</tool_call>y"]
    assert parsed.content == ""


def test_hermes_closer_in_a_string_streams_like_one_shot() -> None:
    text = 'Ok.\n<tool_call>{"name": "write_file", "arguments": {"content": "a </tool_call> b ' + "z" * 80 + '"}}</tool_call>\nDone.'
    chunks = [text[i : i + 5] for i in range(0, len(text), 5)]
    events, result = stream_parse(chunks, tools=TOOLS)
    ready = [e.call for e in events if isinstance(e, CallReady)]
    assert names_args(ready) == names_args(result.tool_calls) == names_args(parse_response(text, tools=TOOLS).tool_calls)
    assert len(ready) == 1 and ready[0].arguments["content"].startswith("a </tool_call> b ")


# ---------------------------------------------------------------- fenced between sentences


@pytest.mark.parametrize(
    "body",
    ['{"name": "get_weather", "arguments": {"city": "Paris"}}', '[{"name": "get_weather", "arguments": {"city": "Paris"}}]'],
)
def test_fenced_call_between_sentences_is_consumed_as_fenced(body: str) -> None:
    text = f"Sure.\n```json\n{body}\n```\nDone."
    parsed = parse_response(text)
    assert names_args(parsed.tool_calls) == [("get_weather", json.dumps({"city": "Paris"}))]
    assert [c.format for c in parsed.tool_calls] == ["fenced"]
    assert parsed.content == "Sure.\nDone."
    assert "```" not in parsed.content


def test_fence_introduced_by_a_colon_is_still_a_sample() -> None:
    text = 'The API takes:\n```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```\nThen it returns the forecast.'
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == []
    assert parsed.content == text


@pytest.mark.parametrize("text", ["```json\n[]\n```", "```json\n[ ]\n```", "No tool is needed.\n```json\n[]\n```"])
def test_empty_fenced_call_list_is_consumed(text: str) -> None:
    parsed = parse_response(text)
    assert parsed.tool_calls == []
    assert "```" not in parsed.content


def test_fenced_call_between_sentences_streams_like_one_shot() -> None:
    text = 'Sure.\n```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```\nDone, the forecast follows shortly.'
    for size in (1, 3, 16):
        events, result = stream_parse([text[i : i + size] for i in range(0, len(text), size)])
        content = "".join(e.text for e in events if isinstance(e, ContentDelta))
        assert content == result.content == "Sure.\nDone, the forecast follows shortly."
        assert names_args([e.call for e in events if isinstance(e, CallReady)]) == names_args(result.tool_calls)


# ---------------------------------------------------------------- streaming fast path


def test_streaming_prose_never_rescans_the_buffer() -> None:
    """200 kB of prose (with trigger *characters*, no triggers) in 4-char chunks: no scan until close.

    Prose with ``{`` or ``[`` (one-character triggers) still goes through the scan:
    whether such a brace opens a call depends on text that has not arrived yet.
    """
    prose = "Look at the fix for A and B (set) `list` x<y, done >. " * 4000
    with _spy(StreamParser, "_advance") as scans:
        parser = StreamParser()
        out = []
        for i in range(0, len(prose), 4):
            out.extend(parser.feed(prose[i : i + 4]))
        out.extend(parser.close())
    assert "".join(e.text for e in out if isinstance(e, ContentDelta)) == prose.strip() + prose[len(prose.rstrip()) :]
    assert scans.call_count <= 1, f"{scans.call_count} buffer scans for {len(prose) // 4} prose chunks"


def test_streaming_fast_path_holds_a_split_trigger() -> None:
    text = 'Checking.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>\nDone here, nothing more to add.'
    events, result = stream_parse([text[i : i + 2] for i in range(0, len(text), 2)], tools=TOOLS)
    content = "".join(e.text for e in events if isinstance(e, ContentDelta))
    assert "<tool" not in content and content == result.content
    assert [e.call.name for e in events if isinstance(e, CallReady)] == ["get_weather"]


def test_a_streamed_call_is_read_a_few_times_not_once_per_chunk() -> None:
    """Token-sized chunks inside a call: the span is re-read when a closing character arrives
    and once more after the lookahead, not on every chunk (each read costs the span's length)."""
    calls = [ToolCall("get_weather", {"city": "Paris", "note": "a fairly long argument value, to span many chunks"})] * 2
    text = "Checking both.\n" + get_family("hermes").render(calls) + "\nThat is all I need for now, thank you."
    with _spy(streamscan, "try_extract") as reads:
        events, _ = stream_parse([text[i : i + 4] for i in range(0, len(text), 4)], tools=TOOLS)
    assert [e.call.name for e in events if isinstance(e, CallReady)] == ["get_weather", "get_weather"]
    assert reads.call_count <= 8, f"{reads.call_count} reads for two calls in {len(text) // 4} chunks"


def test_reasoning_streams_without_scanning_the_buffer() -> None:
    thought = "first this, then that; maybe [x] or {y}. " * 500
    with _spy(StreamParser, "_advance") as scans:
        events, result = stream_parse(["<think>"] + [thought[i : i + 4] for i in range(0, len(thought), 4)] + ["</think>Answer."])
    assert "".join(e.text for e in events if isinstance(e, streaming.ThinkingDelta)) == thought
    assert result.content == "Answer."
    assert scans.call_count <= 5, f"{scans.call_count} buffer scans for {len(thought) // 4} reasoning chunks"


def test_stream_text_property_sees_fast_path_chunks() -> None:
    parser = StreamParser()
    parser.feed("hello ")
    parser.feed("world")
    assert parser.text == "hello world"
    assert streaming.StreamParser is StreamParser


# ---------------------------------------------------------------- work bounds


@pytest.mark.parametrize("unit", ['<tools>{"a": "', '<tool_call>{"a": "', "<tools>{", '\n{"name": "f", '])
def test_repeated_openers_cost_linear_work(unit: str) -> None:
    """Doubling the input must not quadruple the JSON decoding work (counted, not timed)."""
    import utp.parsers.jsonrepair as jsonrepair

    def chars_scanned(text: str) -> int:
        total = 0
        original = jsonrepair.scan_json_value

        def counting(doc: str, pos: int) -> int:
            nonlocal total
            end = original(doc, pos)
            total += (len(doc) if end < 0 else end) - pos
            return end

        jsonrepair.scan_json_value = counting  # type: ignore[assignment]
        try:
            parse_response(text, tools=[Tool("f")])
        finally:
            jsonrepair.scan_json_value = original  # type: ignore[assignment]
        return total

    small, large = chars_scanned(unit * 2000 + "</tools>"), chars_scanned(unit * 4000 + "</tools>")
    assert large <= 3 * max(small, 1000), (small, large)


@given(st.text(alphabet="ab<>", max_size=60), st.sampled_from(["<a>", "ab", "<"]), st.integers(0, 60), st.integers(1, 9))
def test_nth_forward_is_the_nth_non_overlapping_find(text: str, needle: str, pos: int, n: int) -> None:
    clear_cache()
    expected, at = -1, pos
    for _ in range(n):
        at = text.find(needle, at)
        if at < 0:
            expected = -1
            break
        expected, at = at, at + len(needle)
    # asked twice, from a later position first, as the composite's left-to-right scan does not
    nth_forward(text, needle, min(pos + 3, len(text)), n)
    assert nth_forward(text, needle, pos, n) == expected
