"""Streaming gives the same calls and content as one-shot parsing, however the text is cut."""

from __future__ import annotations

import json
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp.parsers import family_names, get_family, parse_response
from utp.parsers.streaming import CallReady, ContentDelta, DiagnosticEvent, StreamParser, ThinkingDelta, stream_parse
from utp.types import ToolCall

from .conftest import load_annotated

TOOLS = [{"name": "get_weather"}, {"name": "get_time"}]


def run_chunks(chunks: list, **kw: object) -> tuple[str, list[tuple[str, dict]], list]:
    events, result = stream_parse(chunks, **kw)
    content = "".join(e.text for e in events if isinstance(e, ContentDelta))
    calls = [(e.call.name, e.call.arguments) for e in events if isinstance(e, CallReady)]
    return content, calls, events


def one_shot(text: str, **kw: object) -> tuple[str, list[tuple[str, dict]]]:
    parsed = parse_response(text, **kw)
    return parsed.content, [(c.name, c.arguments) for c in parsed.tool_calls]


def cut(text: str, points: list[int]) -> list[str]:
    bounds = sorted({p for p in points if 0 < p < len(text)})
    return [text[a:b] for a, b in zip([0, *bounds], [*bounds, len(text)])]


def test_prose_streams_immediately() -> None:
    parser = StreamParser()
    assert [e.text for e in parser.feed("Hello ") if isinstance(e, ContentDelta)] == ["Hello"]
    assert [e.text for e in parser.feed("world.") if isinstance(e, ContentDelta)] == [" world."]


def test_a_possible_trigger_prefix_is_held_then_released() -> None:
    parser = StreamParser()
    first = parser.feed("abc[TOO")
    assert "".join(e.text for e in first if isinstance(e, ContentDelta)) == "abc"
    rest = parser.feed("L not a tag") + parser.close()
    assert "".join(e.text for e in first + rest if isinstance(e, ContentDelta)) == "abc[TOOL not a tag"


def test_call_is_ready_before_the_stream_ends() -> None:
    parser = StreamParser()
    events = []
    for piece in ["Sure. <tool", "_call>{\"name\": \"get_weather\", ", '"arguments": {"city": "Paris"}}</tool_call>', " Then I will summarise the weather for you in a moment."]:
        events += parser.feed(piece)
    ready = [e for e in events if isinstance(e, CallReady)]
    assert [(e.call.name, e.call.arguments) for e in ready] == [("get_weather", {"city": "Paris"})]
    parser.close()
    assert parser.result().tool_calls[0].name == "get_weather"


@pytest.mark.parametrize("size", [1, 4, 16])
@pytest.mark.parametrize("family", ["hermes", "qwen3_coder", "anthropic_xml", "glm"])
def test_a_closed_call_is_ready_in_the_chunk_that_completes_its_closing_tag(family: str, size: int) -> None:
    """Nothing after the closing tag can change the call, so the stream does not wait for more text."""
    head = "Sure. " + get_family(family).render([ToolCall("get_weather", {"city": "Paris"})])
    parser = StreamParser(tools=TOOLS)
    ready_at = None
    for start in range(0, len(head), size):
        if any(isinstance(e, CallReady) for e in parser.feed(head[start : start + size])):
            ready_at = min(start + size, len(head))
            break
    assert ready_at == len(head)


def test_a_call_without_its_closing_tag_waits_for_the_lookahead() -> None:
    """``{...}`` with no closer yet: an optional ``</tool_call>`` may still come, so it is not announced."""
    parser = StreamParser(tools=TOOLS)
    events = parser.feed('<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}')
    assert not any(isinstance(e, CallReady) for e in events)
    events = parser.feed("\n</tool_call>")
    assert [e.call.name for e in events if isinstance(e, CallReady)] == ["get_weather"]


def _reads_and_calls(chunks: list[str]) -> tuple[int, list[ToolCall]]:
    import utp.parsers.streamscan as streamscan

    with patch.object(streamscan, "try_extract", wraps=streamscan.try_extract) as reads:
        events, _ = stream_parse(chunks, tools=TOOLS)
    return reads.call_count, [e.call for e in events if isinstance(e, CallReady)]


def test_a_closer_arriving_after_a_found_call_completes_it_without_a_second_read() -> None:
    """The JSON closed first, its ``</tool_call>`` a line later: one read per call, same calls as one-shot."""
    text = get_family("hermes").render([ToolCall("get_weather", {"city": "Paris"}), ToolCall("get_time", {})])
    reads, calls = _reads_and_calls(text.splitlines(keepends=True))
    expected = parse_response(text, tools=TOOLS).tool_calls
    assert reads == 2
    assert [(c.name, c.arguments, c.raw, c.repairs) for c in calls] == [(c.name, c.arguments, c.raw, c.repairs) for c in expected]


def test_text_other_than_the_closer_after_a_found_call_is_read_again() -> None:
    """A second call object before the closer changes the block's reading: no shortcut there."""
    text = '<tool_call>\n{"name": "get_weather", "arguments": {}}\n{"name": "get_time", "arguments": {}}\n</tool_call>'
    reads, calls = _reads_and_calls(text.splitlines(keepends=True))
    assert reads > 1
    assert [c.name for c in calls] == ["get_weather", "get_time"]


def test_repaired_json_waits_for_a_full_read_when_its_closer_comes() -> None:
    """A truncation repair depends on where the text ends, so a closer after it is not taken on trust."""
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}\n</tool_call> ok'
    content, calls, _ = run_chunks([text[:60], text[60:70], text[70:]], tools=TOOLS)
    assert (content, calls) == one_shot(text, tools=TOOLS)


def test_reasoning_streams_as_thinking() -> None:
    content, calls, events = run_chunks(["<thi", "nk>weighing ", "options</th", "ink>Answer: 4"])
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "weighing options"
    assert content == "Answer: 4" and calls == []


def test_ollama_ndjson_chunks() -> None:
    chunks = [
        {"message": {"role": "assistant", "content": "", "thinking": "need weather"}, "done": False},
        {"message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]}, "done": False},
        {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"},
    ]
    content, calls, events = run_chunks(chunks, tools=TOOLS)
    assert calls == [("get_weather", {"city": "Paris"})]
    assert any(isinstance(e, ThinkingDelta) for e in events)


def test_openai_chunks_assemble_argument_fragments_by_index() -> None:
    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [
        chunk({"role": "assistant", "content": "<tool_call>"}),
        chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "c2", "type": "function", "function": {"name": "get_time", "arguments": '{"tz"'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city": "Pa'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'ris"}'}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": ': "UTC"}'}}]}),
        chunk({}, "tool_calls"),
    ]
    parser = StreamParser(tools=TOOLS)
    events = [e for c in chunks for e in parser.feed(c)] + parser.close()
    calls = [(e.call.name, e.call.arguments, e.call.id) for e in events if isinstance(e, CallReady)]
    assert calls == [("get_weather", {"city": "Paris"}, "c1"), ("get_time", {"tz": "UTC"}, "c2")]
    result = parser.result()
    assert [c.name for c in result.tool_calls] == ["get_weather", "get_time"]
    assert result.finish_reason == "tool_calls"


def test_unknown_names_are_flagged_as_they_stream() -> None:
    _, _, events = run_chunks(['<tool_call>{"name": "get_wether", "arguments": {}}</tool_call>'], tools=TOOLS)
    ready = [e.call for e in events if isinstance(e, CallReady)]
    assert [(c.name, c.known) for c in ready] == [("get_weather", True)]
    assert any(isinstance(e, DiagnosticEvent) for e in events)


def test_feed_after_close_is_an_error() -> None:
    parser = StreamParser()
    parser.close()
    with pytest.raises(RuntimeError):
        parser.feed("x")


def _corpus_texts() -> list[str]:
    try:
        records = load_annotated()
    except pytest.skip.Exception:
        return []
    return [r["raw"] for r in records if r.get("raw_type") not in ("stream_chunks", "response_json")]


_CALLS = [
    [ToolCall("get_weather", {"city": "Paris", "n": [1, {"a": "}]\"x"}]})],
    [ToolCall("get_weather", {"city": "Oslo"}), ToolCall("get_time", {})],
]
RENDERED = [get_family(name).render(calls) for name in family_names(include_opt_in=False) for calls in _CALLS]
PROSE = ["", "Sure, checking.", "Let me look.\n", "Here you go:\n", "Done.", " ", "\n\nThanks!", "It's [not] a {call}."]


@pytest.mark.parametrize("text", _corpus_texts() + RENDERED)
def test_every_single_character_cut_matches_one_shot(text: str) -> None:
    content, calls, _ = run_chunks(list(text))
    assert (content, calls) == one_shot(text)


@given(
    st.lists(st.sampled_from(RENDERED) | st.sampled_from(PROSE), min_size=1, max_size=4).map("".join),
    st.lists(st.integers(min_value=1, max_value=400), max_size=12),
)
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_chunking_of_renders_and_prose_matches_one_shot(text: str, points: list[int]) -> None:
    content, calls, _ = run_chunks(cut(text, points))
    assert (content, calls) == one_shot(text)


@given(st.sampled_from(_corpus_texts() or ["x"]), st.lists(st.integers(min_value=1, max_value=300), max_size=10))
@settings(max_examples=150, deadline=None)
def test_any_chunking_of_corpus_records_matches_one_shot(text: str, points: list[int]) -> None:
    content, calls, _ = run_chunks(cut(text, points), tools=TOOLS)
    assert (content, calls) == one_shot(text, tools=TOOLS)


def test_streaming_a_long_response_is_linear_in_work() -> None:
    """Feeding a 200 kB answer one character at a time must not rescan the buffer per chunk."""
    import utp.parsers.streamscan as streamscan

    text = '<tool_call>{"name": "f", "arguments": {"data": "' + "x" * 200_000 + '"}}</tool_call> done'
    with patch.object(streamscan, "try_extract", wraps=streamscan.try_extract) as reads:
        parser = StreamParser()
        for i in range(0, len(text), 7):
            parser.feed(text[i : i + 7])
        events = parser.close()
    assert any(isinstance(e, CallReady) for e in events) or parser.result().tool_calls
    assert reads.call_count < 200, f"{reads.call_count} extraction attempts for one call span"


class _CountingPattern:
    """A compiled pattern that adds up how many characters its searches stepped over
    (to the end of the match found, or to the end of the range when none was)."""

    def __init__(self, pattern, tally: list[int]) -> None:
        self.pattern, self.tally = pattern, tally

    def search(self, text: str, pos: int = 0, endpos: int | None = None):
        end = len(text) if endpos is None else min(endpos, len(text))
        found = self.pattern.search(text, pos, end)
        self.tally[0] += (end if found is None else found.end()) - pos
        return found

    def finditer(self, text: str, pos: int = 0, endpos: int | None = None):
        end = len(text) if endpos is None else min(endpos, len(text))
        self.tally[0] += end - pos
        return self.pattern.finditer(text, pos, end)


@pytest.mark.parametrize("unit", ["[", "{", "<tool_call>", "(", "[f("])
def test_one_large_chunk_of_openers_is_searched_in_linear_work(unit: str) -> None:
    """Each opener starts a span; asking whether a closing character follows it searched to the
    end of the text every time (``stream_parse(["[" * 40000])``: 7.8 s against 8 ms one-shot)."""
    import utp.parsers.streaming as streaming
    import utp.parsers.streamscan as streamscan

    text = unit * (40_000 // len(unit))
    tally = [0]
    counting = _CountingPattern(streaming.CLOSING, tally)
    with patch.object(streaming, "CLOSING", counting), patch.object(streamscan, "CLOSING", counting):
        parser = StreamParser()
        parser._pattern, parser._starts = _CountingPattern(parser._pattern, tally), _CountingPattern(parser._starts, tally)
        events = parser.feed(text) + parser.close()
    assert "".join(e.text for e in events if isinstance(e, ContentDelta)) == parse_response(text).content
    assert tally[0] <= 8 * len(text), f"{tally[0]} characters searched for a text of {len(text)}"


def _stream_cpu_time(text: str) -> float:
    import time

    lines = text.splitlines(keepends=True)
    best = float("inf")
    for _ in range(3):  # the fastest of a few runs: other load on a shared machine only adds time
        start = time.process_time()
        parser = StreamParser(tools=[{"name": "f"}])
        for line in lines:
            parser.feed(line)
        parser.close()
        best = min(best, time.process_time() - start)
    return best


def test_streaming_many_calls_is_linear_in_work() -> None:
    """A response of many calls: no step may copy or rescan everything before it (was 13x for 4x calls)."""
    unit = "Checking.\n" + get_family("hermes").render([ToolCall("f", {"a": 1})]) + "\n"
    _stream_cpu_time(unit * 10)  # warm the caches
    small, large = _stream_cpu_time(unit * 400), _stream_cpu_time(unit * 1600)
    if large / small >= 12:  # one re-measure: the machine is shared
        small, large = _stream_cpu_time(unit * 400), _stream_cpu_time(unit * 1600)
    assert large / small < 12, f"{small * 1e3:.1f} ms -> {large * 1e3:.1f} ms for 4x the calls"


def test_a_native_call_repeated_in_content_is_kept_once_however_many_calls_came() -> None:
    events, _ = stream_parse(
        [
            {"message": {"content": "", "tool_calls": [{"function": {"name": "get_time", "arguments": {}}}]}},
            {"message": {"content": '<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>'}},
            {"message": {"content": '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>'}},
        ],
        tools=TOOLS,
    )
    assert [e.call.name for e in events if isinstance(e, CallReady)] == ["get_time", "get_weather"]
    assert any(isinstance(e, DiagnosticEvent) and "appears both" in e.diagnostic.reason for e in events)


def test_json_lines_ndjson_bytes_are_accepted() -> None:
    parser = StreamParser()
    events = parser.feed(json.dumps({"message": {"content": "hi"}}).encode()) + parser.close()
    assert "".join(e.text for e in events if isinstance(e, ContentDelta)) == json.dumps({"message": {"content": "hi"}})


@pytest.mark.parametrize("text", [
    'Action:{"action": "get_weather", "action_input": {}}',
    'Here is the call: {"name": "f", "arguments": {"a": 1}}',
])
def test_a_call_after_a_same_line_lead_in_streams_like_one_shot(text: str) -> None:
    """``Lead-in: {...}`` is a call when it ends the response; a stream cut inside the object
    once settled it as inline prose (hypothesis found ``Action:{"action"`` | ``: ...``)."""
    from tests.parsers.conftest import assert_every_cut_matches

    assert parse_response(text).tool_calls
    assert_every_cut_matches(text, None, step=7)
