"""A call written in reasoning the chat template opened is the model thinking, in a stream too.

When the template supplies ``<think>``, the output shows only ``</think>``:
everything before it is reasoning, and one-shot parsing runs no call from it.
A stream once announced such a call even when the whole output came as one
chunk, the ``</think>`` already in hand: a streamed ``write_file`` would have
written a file the model decided against. Whatever the stream has received
when it would announce a call now counts, as it does for one-shot parsing.
A call that closed before its ``</think>`` arrived cannot be known to be
reasoning then; a caller whose template pre-fills reasoning says so
(``prefilled_reasoning``) and the stream then agrees with one-shot parsing
at every cut (the property at the end).
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.parsers.streaming import CallReady, ContentDelta, ThinkingDelta, stream_parse
from utp.parsers.reasoning import REASONING_TAGS
from utp.types import Tool

TOOLS = [Tool("write_file", parameters={"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}})]
CALL = '<tool_call>{"name":"write_file","arguments":{"path":"a","content":"x"}}</tool_call>'
REPRODUCER = f"Let me think. {CALL} Actually no.</think>I will not."


def _streamed(chunks: list[str], **options) -> tuple[str, str, list]:
    events, _ = stream_parse(chunks, tools=TOOLS, **options)
    content = "".join(e.text for e in events if isinstance(e, ContentDelta))
    thinking = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    return content, thinking, [e.call for e in events if isinstance(e, CallReady)]


def test_one_shot_reads_the_call_as_reasoning() -> None:
    parsed = parse_response(REPRODUCER, tools=TOOLS)
    assert parsed.tool_calls == [] and parsed.content == "I will not."


@pytest.mark.parametrize("closer", [closer for _, closer in REASONING_TAGS])
def test_one_chunk_announces_no_call_from_prefilled_reasoning(closer: str) -> None:
    text = REPRODUCER.replace("</think>", closer)
    parsed = parse_response(text, tools=TOOLS)
    content, thinking, calls = _streamed([text])
    assert calls == [] == parsed.tool_calls
    assert content == parsed.content == "I will not."
    assert thinking == parsed.thinking


@pytest.mark.parametrize("size", [24, 40, 64, 200])
def test_a_closer_that_arrives_before_the_call_is_settled_still_counts(size: int) -> None:
    """A call without its closing tag waits for a lookahead; the ``</think>`` inside it decides."""
    text = 'Let me think. <tool_call>{"name":"write_file","arguments":{"path":"a","content":"x"}} no.</think>I will not.'
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    assert _streamed(chunks)[2] == [] == parse_response(text, tools=TOOLS).tool_calls


def test_a_call_after_the_closer_is_still_announced() -> None:
    text = f"Let me think. {CALL} no.</think>Writing it now. {CALL}"
    content, _, calls = _streamed([text])
    assert [(c.name, c.arguments) for c in calls] == [(c.name, c.arguments) for c in parse_response(text, tools=TOOLS).tool_calls]
    assert len(calls) == 1 and content == "Writing it now."


# --- told by the caller: the template opened reasoning ---------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.parsers.test_stream_mixed_markup import PIECES, streamed_and_one_shot  # noqa: E402

PREFILLED = {"prefilled_reasoning": True}


@pytest.mark.parametrize("size", [1, 4, 12, 16, 64])
def test_told_the_template_opened_reasoning_no_chunking_announces_its_call(size: int) -> None:
    """A call that closes long before the ``</think>`` arrives: only the caller can say it is reasoning."""
    text = f"Let me think. {CALL} Then again, writing that file would lose the user's work, so I should not.</think>I will not."
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    parsed = parse_response(text, tools=TOOLS, **PREFILLED)
    content, thinking, calls = _streamed(chunks, **PREFILLED)
    assert calls == [] == parsed.tool_calls
    assert content == parsed.content == "I will not."
    assert thinking == parsed.thinking


def test_an_unknown_prefilled_tag_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="prefilled_reasoning='<reflect>'"):
        parse_response("x", prefilled_reasoning="<reflect>")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*PIECES, "</think>", "Done thinking.</think>\n"]), min_size=1, max_size=12), st.lists(st.integers(1, 400), max_size=8))
def test_told_the_template_opened_reasoning_streams_equal_one_shot(pieces: list[str], cuts: list[int]) -> None:
    streamed, one_shot = streamed_and_one_shot("".join(pieces), cuts, **PREFILLED)
    assert streamed == one_shot
