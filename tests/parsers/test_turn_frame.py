"""The chat template's frame a server left around an answer is the template's, not the answer's.

``<|im_start|>assistant\nadd(x=1)<|im_end|>``, ``read_file path="a"</s>``:
shapes that are a call only when they are the whole answer are read with a
role header before them and end-of-turn tokens after them set aside, one-shot
and streamed alike, and neither is part of the content. A token with text
after it is text like any other; so is a header anywhere but the output's start.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp.parsers import parse_response
from utp.parsers.turnframe import ROLE_HEADERS, TURN_END_TOKENS, TURN_END_TOKENS_MAX, role_header_end, turn_end_at, turn_end_held
from utp.types import Tool

from .conftest import assert_every_cut_matches, assert_stream_matches_under

ADD = Tool("add", parameters={"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}})
READ_FILE = Tool("read_file", parameters={"type": "object", "properties": {"path": {"type": "string"}}})
TOOLS = [ADD, READ_FILE]

#: whole-answer shapes the parser reads as written; each must read the same with a token after it
WHOLE_ANSWER_CALLS = {
    "python call": ("add(x=1, y=2)", [("add", {"x": 1, "y": 2})]),
    "python call with json": ('add({"x": 1, "y": 2})', [("add", {"x": 1, "y": 2})]),
    "glued name and json": ('read_file{"path": "a.txt"}', [("read_file", {"path": "a.txt"})]),
    "name and key=value": ('read_file path="a.txt"', [("read_file", {"path": "a.txt"})]),
    "name line then json": ('read_file\n{"path": "a.txt"}', [("read_file", {"path": "a.txt"})]),
    "python call list": ("[add(x=1), add(x=2)]", [("add", {"x": 1}), ("add", {"x": 2})]),
}


def _calls(text: str) -> list[tuple]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=TOOLS).tool_calls]


@pytest.mark.parametrize("shape", sorted(WHOLE_ANSWER_CALLS))
@pytest.mark.parametrize("token", ["<|im_end|>", "</s>", "<|eot_id|>", "<end_of_turn>", "<|end|>", "<|return|>", "\n<|im_end|>\n", "<|eot_id|></s>"])
def test_a_whole_answer_call_reads_the_same_before_an_end_of_turn_token(shape: str, token: str) -> None:
    text, expected = WHOLE_ANSWER_CALLS[shape]
    assert _calls(text) == expected  # the plain form, for reference
    parsed = parse_response(text + token, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == expected
    assert parsed.content == ""
    assert_stream_matches_under(text + token, TOOLS, 1)
    assert_stream_matches_under(text + token, TOOLS, 4)


def test_every_cut_of_a_call_and_its_token_streams_like_one_shot_parsing() -> None:
    assert_every_cut_matches('read_file path="a.txt"\n<|im_end|>', TOOLS, 3)


@pytest.mark.parametrize(
    "text, content",
    [
        ("The answer is 4.<|im_end|>", "The answer is 4."),
        ("The answer is 4.\n<|im_end|>\n", "The answer is 4.\n"),
        ("Done.<|im_end|>Assistant: more", "Done.<|im_end|>Assistant: more"),  # text after it: not the end
        ("<|im_end|>", ""),
        ("x<|im_en", "x<|im_en"),  # never completed: no token
    ],
)
def test_the_tokens_are_no_part_of_the_content(text: str, content: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == [] and parsed.content == content
    assert_stream_matches_under(text, TOOLS, 1)
    assert_stream_matches_under(text, TOOLS, 3)


@pytest.mark.parametrize(
    "text",
    [
        "Use add(x=1, y=2) to add the numbers.<|im_end|>",
        'You could run read_file path="a.txt" yourself.</s>',
        "I would call add(x=1, y=2) here.<|eot_id|>",
        "add(x=1, y=2)<|im_end|>\nThat is how you call it.",
    ],
)
def test_prose_that_shows_a_call_is_not_one_before_a_token_either(text: str) -> None:
    assert _calls(text) == []
    assert_stream_matches_under(text, TOOLS, 2)


def test_a_run_is_read_backwards_a_bounded_number_of_tokens() -> None:
    """A flood of tokens costs a constant: only the last few are the turn's end."""
    text = "add(x=1)" + "<|im_end|>" * (TURN_END_TOKENS_MAX + 3)
    assert turn_end_at(text) == len(text) - TURN_END_TOKENS_MAX * len("<|im_end|>")
    assert turn_end_at("add(x=1)" + " " * 100 + "</s>") == len("add(x=1)") + 100  # the blanks stay the answer's
    assert turn_end_at("add(x=1)</s>" + " " * 100) == len("add(x=1)</s>") + 100  # too many blanks after: no run


def test_a_stream_holds_back_a_token_still_arriving() -> None:
    assert turn_end_held("add(x=1)<|im_") == len("add(x=1)")
    assert turn_end_held("add(x=1)</s>\n<") == len("add(x=1)")
    assert turn_end_held("add(x=1)") == len("add(x=1)")


_PIECES = ["<|im_start|>assistant", "assistant\n", "add(x=1)", 'read_file path="a"', "Hi.", " ", "\n", "<|im_end|>", "</s>", "<|im_", "<", "end|>", "<tool_call>", '{"name": "add", "arguments": {"x": 2}}', "</tool_call>", "<think>", "<|eot_id|>"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(st.sampled_from(_PIECES), max_size=14), size=st.integers(1, 9))
def test_streaming_agrees_with_one_shot_parsing_around_tokens(pieces: list[str], size: int) -> None:
    assert_stream_matches_under("".join(pieces), TOOLS, size)


@pytest.mark.parametrize("shape", sorted(WHOLE_ANSWER_CALLS))
@pytest.mark.parametrize(
    "header",
    [
        "<|im_start|>assistant\n",
        "<|start_header_id|>assistant<|end_header_id|>\n\n",
        "<start_of_turn>model\n",
        "<|assistant|>\n",
        "assistant\n\n",
        "\n<|im_start|>assistant",
    ],
)
def test_a_whole_answer_call_reads_the_same_after_a_role_header(shape: str, header: str) -> None:
    text, expected = WHOLE_ANSWER_CALLS[shape]
    parsed = parse_response(header + text + "<|im_end|>", tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == expected
    assert parsed.content == ""
    assert_stream_matches_under(header + text, TOOLS, 1)
    assert_stream_matches_under(header + text + "<|im_end|>", TOOLS, 5)


@pytest.mark.parametrize(
    "text, content",
    [
        ("<|im_start|>assistant\nThe answer is 4.", "The answer is 4."),
        ("assistant\nThe answer is 4.", "The answer is 4."),
        ("assistant", "assistant"),  # the role's name alone, no line after it: a word
        ("assistants answer questions.", "assistants answer questions."),
        ("The <|im_start|>assistant token opens a turn.", "The <|im_start|>assistant token opens a turn."),
        ("Tool call:\nassistant\nadd(x=1)", "Tool call:\nassistant\nadd(x=1)"),  # not at the start: text
    ],
)
def test_a_role_header_only_opens_an_output(text: str, content: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == [] and parsed.content == content
    assert role_header_end(text) == (len(text) - len(content) if content != text else 0)
    assert_stream_matches_under(text, TOOLS, 1)
    assert_stream_matches_under(text, TOOLS, 4)


def test_every_cut_of_a_header_a_call_and_a_token_streams_like_one_shot_parsing() -> None:
    assert_every_cut_matches('<|im_start|>assistant\nread_file path="a.txt"<|im_end|>', TOOLS, 4)


def test_byte_chunks_hold_the_frame_back_too() -> None:
    from utp.parsers.streaming import CallReady, ContentDelta, stream_parse

    raw = "<|im_start|>assistant\nadd(x=1)<|im_end|>".encode()
    events, _ = stream_parse([raw[i : i + 3] for i in range(0, len(raw), 3)], tools=TOOLS)
    assert [(e.call.name, e.call.arguments) for e in events if isinstance(e, CallReady)] == [("add", {"x": 1})]
    assert "".join(e.text for e in events if isinstance(e, ContentDelta)) == ""


def test_harmony_keeps_its_own_header() -> None:
    """gpt-oss's ``<|start|>assistant`` is followed by the channel and recipient its family reads."""
    assert not any(header.startswith("<|start|>") for header in ROLE_HEADERS)
    text = '<|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{"path": "a"}<|call|>'
    assert _calls(text) == [("read_file", {"path": "a"})]


def test_a_command_line_glued_after_a_call_is_no_answer_start_in_a_stream_either() -> None:
    """Found by the property above: a stream watches for offered names everywhere, and read the
    command line after ``add(x=1)`` that one-shot parsing (rightly) leaves as text."""
    text = 'add(x=1)read_file path="a"'
    assert _calls(text) == []
    assert_stream_matches_under(text, TOOLS, 1)
    assert _calls('Tool call: read_file path="a"') == [("read_file", {"path": "a"})]


def test_an_end_of_sequence_tag_after_its_opener_closes_an_element() -> None:
    """Found by Hypothesis: a tool named ``s`` written as an element (``<s>\n</s>``) ends in ``</s>``."""
    tools = [Tool("s")]
    parsed = parse_response("<s>\n</s>", tools=tools)
    assert [c.name for c in parsed.tool_calls] == ["s"]
    assert_stream_matches_under("<s>\n</s>", tools, 1)
    assert turn_end_at("<s>\n</s>") == len("<s>\n</s>")
    assert turn_end_at("Hello.</s>") == len("Hello.")


def test_every_token_ends_with_a_closing_angle() -> None:
    """The backwards read looks a token up by its last two characters, after a ``>``."""
    assert all(token.startswith("<") and token.endswith(">") for token in TURN_END_TOKENS)


@pytest.mark.parametrize("body", ["add(x=1)", '{"name": "add", "arguments": {"x": 1}}'])
@pytest.mark.parametrize("size", [1, 3, 7])
def test_stray_text_longer_than_a_streams_lookahead_before_the_closer_is_read_alike(body: str, size: int) -> None:
    """Found by Hypothesis: one-shot parsing took any amount of stray text before a far closer
    into the block, while a stream had announced the call and shown that text a lookahead
    after the call's end. Stray text now belongs to the block only within that lookahead."""
    far = f"<tool_call>{body}<|im_start|>assistant<|im_start|>assistant</tool_call>"
    parsed = parse_response(far, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("add", {"x": 1})]
    assert parsed.content == "<|im_start|>assistant<|im_start|>assistant</tool_call>"
    assert_stream_matches_under(far, TOOLS, size)
    near = f"<tool_call>{body}\n<|im_end|>\n</tool_call>"
    assert parse_response(near, tools=TOOLS).content == ""
    assert_stream_matches_under(near, TOOLS, size)
