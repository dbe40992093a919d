"""Streaming equals one-shot parsing on texts that mix families, prose and reasoning.

The per-family properties cut one family's rendering; the places where
streams and one-shot parsing used to disagree were between families: a bare
``call:`` after a reasoning closer and one blank (the scan's lookahead refused
what the reader takes), and an answer whose first line names a tool in prose
with a call on its last line (one-shot parsing tried only the first place a
call list may begin). Both were found by cutting texts like these at random;
this keeps doing so, with the call-span limit small enough to be reached.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from utp.parsers import parse_response
from utp.parsers.streaming import CallReady, ContentDelta, stream_parse
from utp.types import Tool

TOOLS = [Tool("get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}}), Tool("f")]

#: prose, words that touch triggers, whole and broken calls of several families, reasoning, stray marks
PIECES = [
    "Here is what I found. ", "read", "x", "for", " ", "\n", "I will check.\n", "recall:", "my",
    'get_weather(city="Paris")', 'functions.get_weather({"city": "P"})', 'default_api.get_weather(city="P")',
    'functools[{"name": "get_weather", "arguments": {"city": "P"}}]', "call:get_weather{city:<escape>P<escape>}",
    'functions.get_weather:0{"city": "P"}', 'get_weather\n{"city": "P"}',
    '<tool_call>{"name": ', '<tool_call>{"name": </tool_call>', '<tool_call>{"name": "f", "arguments": {}}</tool_call>',
    "<tool_call>to=functions.get_weather</tool_call>", '<think>hmm get_weather(city="x")</think>', "```py\nf()\n```\n",
    'Done.assistantcommentary to=functions.get_weather json<|message|>{"city": "P"}', "[get_weather(city='P')]",
    "{", "}", "<", ">", "(", ")", '"',
]


@st.composite
def cut_texts(draw: st.DrawFn) -> tuple[str, list[int], dict[str, int]]:
    text = "".join(draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=12)))
    cuts = draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=8))
    limit = draw(st.sampled_from([None, 1, 2, 3]))
    return text, cuts, {} if limit is None else {"max_call_spans": limit}


@settings(max_examples=400, deadline=None)
@given(cut_texts())
def test_streaming_mixed_markup_gives_the_one_shot_content_and_calls(case: tuple[str, list[int], dict[str, int]]) -> None:
    text, cuts, options = case
    streamed, one_shot = streamed_and_one_shot(text, cuts, **options)
    assert streamed == one_shot


def streamed_and_one_shot(text: str, cuts: list[int], **options: object) -> tuple[tuple[str, list], tuple[str, list]]:
    """``(content, calls)`` of ``text`` streamed cut at ``cuts``, and of it parsed at once."""
    parsed = parse_response(text, tools=TOOLS, **options)
    bounds = sorted({c for c in cuts if 0 < c < len(text)})
    chunks = [text[a:b] for a, b in zip([0, *bounds], [*bounds, len(text)])]
    events, _ = stream_parse(chunks, tools=TOOLS, **options)
    content = "".join(e.text for e in events if type(e) is ContentDelta)
    calls = [(e.call.name, e.call.arguments) for e in events if type(e) is CallReady]
    return (content, calls), (parsed.content, [(c.name, c.arguments) for c in parsed.tool_calls])
