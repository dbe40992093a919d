"""A response is read for at most ``MAX_CALL_SPANS`` calls or call reports; the rest is content.

A model that writes more than a thousand calls in one answer is repeating
itself: an agent must not be handed 50,000 calls to run, and a megabyte of the
same opener must not cost one read per opener (1 MB of ``>>>f\\n{"a": `` took
seconds). Past the limit the text is content, reported once, and a stream stops
at the same span as one-shot parsing, so the two still agree on every text.
Also here: a call tag whose JSON was cut off before its name is reported
(it used to be shown as prose; one key later it was already a report).
"""

from __future__ import annotations

from typing import Any

import pytest

from utp.parsers import get_family, get_parser, parse_response
from utp.parsers.scanloop import MAX_CALL_SPANS
from utp.parsers.families.hermes import HermesFamily
from utp.parsers.streaming import CallReady, ContentDelta, DiagnosticEvent, stream_parse
from utp.types import DiagnosticKind, Tool, ToolCall

TOOLS = [Tool("f", parameters={"type": "object", "properties": {"n": {"type": "integer"}}})]


def _hermes(n: int) -> str:
    return get_family("hermes").render([ToolCall("f", {"n": n})])


def _streamed(text: str, cuts: list[int], **options: Any) -> tuple[str, list[tuple[str, dict]], list[str]]:
    bounds = sorted({c for c in cuts if 0 < c < len(text)})
    chunks = [text[a:b] for a, b in zip([0, *bounds], [*bounds, len(text)])]
    events, _ = stream_parse(chunks, tools=TOOLS, **options)
    content = "".join(e.text for e in events if type(e) is ContentDelta)
    calls = [(e.call.name, e.call.arguments) for e in events if type(e) is CallReady]
    return content, calls, [e.diagnostic.reason for e in events if type(e) is DiagnosticEvent]


def test_the_calls_past_the_limit_are_content_and_reported_once() -> None:
    text = "Calling.\n" + "\n".join(_hermes(n) for n in range(5)) + "\nDone."
    parsed = parse_response(text, tools=TOOLS, max_call_spans=3)
    assert [c.arguments["n"] for c in parsed.tool_calls] == [0, 1, 2]
    assert parsed.content == "Calling.\n" + "\n".join(_hermes(n) for n in (3, 4)) + "\nDone."
    [report] = parsed.diagnostics
    assert report.kind is DiagnosticKind.UNPARSEABLE and "more than 3 calls or call reports" in report.reason
    assert report.offset == text.index(_hermes(3)) - 1


def test_nothing_is_reported_when_nothing_follows_the_last_span() -> None:
    text = "\n".join(_hermes(n) for n in range(3)) + "\n"
    parsed = parse_response(text, tools=TOOLS, max_call_spans=3)
    assert len(parsed.tool_calls) == 3 and parsed.diagnostics == []


def test_call_reports_count_toward_the_limit() -> None:
    text = '<tool_call>{"name": "f", "arguments": {"n": }</tool_call>\n' * 2 + _hermes(9)
    parsed = parse_response(text, tools=TOOLS, max_call_spans=2)
    assert parsed.tool_calls == [] and parsed.content == _hermes(9)
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.UNPARSEABLE] * 3


def test_the_default_limit_reads_1024_calls() -> None:
    assert MAX_CALL_SPANS == 1024
    text = "".join(f"```py\nf(n={n})\n```\n" for n in range(MAX_CALL_SPANS + 3))
    parsed = parse_response(text, tools=TOOLS)
    assert len(parsed.tool_calls) == MAX_CALL_SPANS and parsed.tool_calls[-1].arguments == {"n": MAX_CALL_SPANS - 1}
    assert parsed.content.startswith(f"```py\nf(n={MAX_CALL_SPANS})") and len(parsed.diagnostics) == 1


@pytest.mark.parametrize("option", [0, -1, "3", None])
def test_a_limit_that_is_no_positive_whole_number_means_the_default(option: Any) -> None:
    text = "\n".join(_hermes(n) for n in range(5))
    assert len(parse_response(text, tools=TOOLS, max_call_spans=option).tool_calls) == 5


def test_a_stream_stops_reading_at_the_same_span_for_every_cut() -> None:
    text = "Calling.\n" + "\n".join(_hermes(n) for n in range(3)) + "\n<think>not reasoning now</think> ```py\nf(n=7)\n``` bye"
    parsed = parse_response(text, tools=TOOLS, max_call_spans=2)
    want = (parsed.content, [(c.name, c.arguments) for c in parsed.tool_calls], [d.reason for d in parsed.diagnostics])
    assert len(want[1]) == 2 and "not reasoning now" in want[0]
    for a in range(len(text) + 1):
        assert _streamed(text, [a], max_call_spans=2) == want, a
        for b in range(a + 1, len(text), 13):
            assert _streamed(text, [a, b], max_call_spans=2) == want, (a, b)


def test_a_flood_of_call_openers_costs_a_bounded_number_of_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """50,000 openers, each a call cut off before its name: the family reads as many as the limit allows."""
    reads = []
    original = HermesFamily.extract

    def counted(self: HermesFamily, *args: Any) -> Any:
        reads.append(1)
        return original(self, *args)

    monkeypatch.setattr(HermesFamily, "extract", counted)
    text = '<tool_call>{"name": ' * 50_000
    parsed = get_parser("auto", TOOLS).parse(text)
    assert len(reads) == MAX_CALL_SPANS
    assert len(parsed.diagnostics) == MAX_CALL_SPANS + 1 and "more than 1024" in parsed.diagnostics[-1].reason


@pytest.mark.parametrize(
    ("text", "kind", "content"),
    [
        ('<tool_call>{"name": ', DiagnosticKind.TRUNCATED, ""),
        ('<tool_call>{"name": </tool_call> Done.', DiagnosticKind.UNPARSEABLE, "Done."),
        ('<tool_call>{"name": \n<tool_call>{"name": "f", "arguments": {"n": 1}}</tool_call>', DiagnosticKind.UNPARSEABLE, ""),
    ],
    ids=["end-of-output", "closer", "tag-written-again"],
)
def test_a_call_tag_cut_off_before_its_name_is_reported(text: str, kind: DiagnosticKind, content: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.diagnostics[0].kind is kind and "before its name" in parsed.diagnostics[0].reason
    assert parsed.content == content
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == ([("f", {"n": 1})] if "again" in text or '"n": 1' in text else [])
    for a in range(len(text) + 1):
        assert _streamed(text, [a])[:2] == (parsed.content, [(c.name, c.arguments) for c in parsed.tool_calls]), a


def test_a_weak_tag_cut_before_a_name_stays_prose() -> None:
    """``<tools>`` is common in prose about tools: only the call tags report a cut name."""
    text = 'a <tools>{"name": </tools>'
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.content == text and parsed.diagnostics == []


def test_an_echoed_tool_definition_cut_off_is_not_a_call_cut_before_its_name() -> None:
    """SmolLM2 135M (recorded, core/loop_trap) echoed its prompt's tool definition in the tag and ran
    out of tokens: the name *was* written, nested; the rule is only for ``{"name": `` and no more."""
    text = '<tool_call>\n{"type": "function", "function": {"name": "get_export_status", "description": "Check an export'
    parsed = parse_response(text, tools=TOOLS)
    assert not any("before its name" in d.reason for d in parsed.diagnostics)


def test_one_block_of_repeated_calls_is_read_to_the_limit_and_counts_against_it() -> None:
    """Qwen3-Coder calls whose closers were left out end at the next ``<function=``, so one block
    of a model repeating itself holds a call per opener: 1 MB of them took 0.47 s, one read each,
    where the response's limit should bound it. Found by ``make bench`` (``unclosed_qwen-1MB``)."""
    unit = "<tool_call><function=f><parameter=n>"
    parsed = parse_response(unit * 5, tools=TOOLS, max_call_spans=3)
    assert len(parsed.tool_calls) == 3
    assert "more than 3 calls or call reports" in parsed.diagnostics[-1].reason
    flood = parse_response(unit * (1_000_000 // len(unit)), tools=TOOLS)
    assert len(flood.tool_calls) == MAX_CALL_SPANS
    assert f"more than {MAX_CALL_SPANS} calls or call reports" in flood.diagnostics[-1].reason



@pytest.mark.parametrize("blocks", [1, 3])
def test_a_stream_counts_calls_in_a_block_as_one_shot_parsing_does(blocks: int) -> None:
    """Blocks holding several calls each, past the limit: the stream stops where one-shot parsing stops."""
    block = "<tool_call>\n" + "".join(f"<function=f>\n<parameter=n>\n{n}\n</parameter>\n</function>\n" for n in (1, 2)) + "</tool_call>"
    unclosed = "<tool_call><function=f><parameter=n>" * 5 + " tail"
    for text in (block * blocks + " tail", unclosed):
        one_shot = parse_response(text, tools=TOOLS, max_call_spans=3)
        content, calls, reports = _streamed(text, list(range(0, len(text), 7)), max_call_spans=3)
        assert calls == [(c.name, c.arguments) for c in one_shot.tool_calls]
        assert reports == [d.reason for d in one_shot.diagnostics]
