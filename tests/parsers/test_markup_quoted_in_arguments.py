"""An argument may quote tool-call markup: a model explaining a format, or searching for a tag.

In a family whose arguments are JSON, the family's own closing tag inside a
string is the argument's text, not the end of the call: valid JSON says so,
and the call must run with the whole string. Found while testing the
`lmstudio` family: the families that bounded a body by its first closer
(granite, jamba, internlm, command_r, lmstudio, kimi_k2, deepseek, cwm) ran
such a call with the string cut at the tag, and the rest of it shown as prose.

Families whose argument values are raw text (Qwen3-Coder's and Anthropic's
``<parameter>``, a ``<tool name=…>`` element's arguments, DSML (and its collapsed form), Kimi-K3's string arguments, the command-line fence,
Solar Open's values between special tokens) have no way to escape a tag, so a value that contains the closing tag ends
there, as it does in the reference parsers; they are left out below.

Also here: the work bounds that came with it. A lenient (repairing) read of a
body once ran to the end of the text from every opener of a flood (seconds
for 40 KB); it now stops where the tag is written again.
"""

from __future__ import annotations

import pytest

from tests.parsers.conftest import WHOLE_ANSWER_ONLY, assert_every_cut_matches
from utp.parsers import family_names, get_family, parse_response
from utp.parsers.jsonrepair import INNER_QUOTES, _LenientReader, loads_lenient
from utp.types import Tool, ToolCall

TOOLS = [Tool("search", parameters={"type": "object", "properties": {"query": {"type": "string"}}}), Tool("g")]

#: argument values are raw text between tags: a closing tag in a value cannot be escaped
RAW_TEXT_VALUES = {
    "qwen3_coder", "anthropic_xml", "deepseek_dsml", "collapsed_invoke", "kimi_k3", "bash", "solar_open", "minimax_stripped", "named_tool_element",
}
JSON_ARGUMENT_FAMILIES = [name for name in family_names() if name not in RAW_TEXT_VALUES | WHOLE_ANSWER_ONLY]


def _self_quoting(family: str) -> tuple[str, ToolCall]:
    """A call whose argument holds the family's own rendering of another call, in prose."""
    render = get_family(family).render
    call = ToolCall("search", {"query": "see " + render([ToolCall("g", {})]) + " end"})
    return f"Ok.\n{render([call])}\nDone.", call


@pytest.mark.parametrize("family", JSON_ARGUMENT_FAMILIES)
def test_a_call_quoting_its_own_markup_runs_once_with_the_whole_argument(family: str) -> None:
    text, call = _self_quoting(family)
    parsed = parse_response(text, tools=TOOLS, allow_bash=True)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("search", call.arguments)]
    assert parsed.content.split() == ["Ok.", "Done."]


@pytest.mark.parametrize("family", JSON_ARGUMENT_FAMILIES)
def test_streaming_a_call_quoting_its_own_markup_matches_one_shot(family: str) -> None:
    """A stream that has seen only part of the quoting string waits; it never runs half of it."""
    text, _ = _self_quoting(family)
    assert_every_cut_matches(text, TOOLS, step=41)


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ('<tool_calls>[{"name": "search", "arguments": {"query": "what does </tool_calls> mean"}}]</tool_calls>', "what does </tool_calls> mean"),
        ('<|action_start|><|plugin|>\n{"name": "search", "parameters": {"query": "a <|action_end|> b"}}<|action_end|>', "a <|action_end|> b"),
        ('<|tool_call|>[{"name": "search", "arguments": {"query": "a <|/tool_call|> b"}}]<|/tool_call|>', "a <|/tool_call|> b"),
        ('[TOOL_REQUEST]{"name": "search", "arguments": {"query": "[END_TOOL_REQUEST]"}}[END_TOOL_REQUEST]', "[END_TOOL_REQUEST]"),
        ('<|START_ACTION|>[{"tool_name": "search", "parameters": {"query": "x<|END_ACTION|>y"}}]<|END_ACTION|>', "x<|END_ACTION|>y"),
        ('Action: ```json\n[{"tool_name": "search", "parameters": {"query": "use ```code``` here"}}]\n```', "use ```code``` here"),
        (
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>"
            '{"query": "<|tool_call_end|>"}<|tool_call_end|><|tool_calls_section_end|>',
            "<|tool_call_end|>",
        ),
        ('<tool_calls>[{"name":"search","arguments":{"query":"<tool_calls>"}}]</tool_calls>', "<tool_calls>"),
        ('<|python_tag|>{"name": "search", "parameters": {"query": "<|python_tag|> x"}}', "<|python_tag|> x"),
        ('[TOOL_CALLS][{"name": "search", "arguments": {"query": "[TOOL_CALLS] x"}}]', "[TOOL_CALLS] x"),
    ],
    ids=["jamba", "internlm", "granite", "lmstudio", "command_r", "command_r_fence", "kimi_k2", "jamba_opener", "llama_opener", "mistral_opener"],
)
def test_a_tag_inside_a_json_string_is_text(text: str, query: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("search", {"query": query})]
    assert parsed.content == ""
    assert not parsed.diagnostics


@pytest.mark.parametrize(
    "opener,closer",
    [("<tool_call>", "</tool_call>"), ("<tool_calls>[", "]</tool_calls>"), ("<|action_start|><|plugin|>", "<|action_end|>")],
)
def test_a_block_missing_its_brace_and_tag_still_leaves_the_next_block(opener: str, closer: str) -> None:
    """A value cut short by the tag opening again (outside any string) is read as truncated."""
    text = f'{opener}{{"name": "search", "arguments": {{"query": "a"}}\n{opener}{{"name": "g", "arguments": {{}}}}{closer}'
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("search", {"query": "a"}), ("g", {})]


@pytest.mark.parametrize("unit", ['<TOOLCALL>["', '<tool_calls>{"a": "', '<|python_tag|>["', '<|START_ACTION|>{"a": "', "functools["])
def test_a_flood_of_tags_opening_broken_json_is_one_reported_span(unit: str) -> None:
    text = unit * 3000
    parsed = parse_response(text, tools=[Tool("f")])
    assert not parsed.tool_calls
    assert len(parsed.diagnostics) == 1
    assert parsed.diagnostics[0].kind.value == "unparseable"


def test_unclosable_inner_quotes_are_walked_once_per_read() -> None:
    """Every string of ``{"a": "x" y...`` asks where a value with unescaped quotes could end.

    The first walk finds that no quote can end one; later strings must not walk the rest
    of the text again (the reader once did: two seconds for 22 KB). Counted, not timed.
    """
    walked = 0
    original = _LenientReader.past_inner_quotes

    def counting(self: _LenientReader, end: int) -> int:
        nonlocal walked
        found = original(self, end)
        walked += 1
        return found

    import utp.parsers.jsonrepair as jsonrepair

    hops = 0
    quoted_string_end = jsonrepair.quoted_string_end

    def counting_hops(text: str, pos: int) -> int:
        nonlocal hops
        hops += 1
        return quoted_string_end(text, pos)

    text = '{"a": "x" y' * 2000
    _LenientReader.past_inner_quotes = counting  # type: ignore[method-assign]
    jsonrepair.quoted_string_end = counting_hops  # type: ignore[assignment]
    try:
        with pytest.raises(ValueError):
            loads_lenient(text)
    finally:
        _LenientReader.past_inner_quotes = original  # type: ignore[method-assign]
        jsonrepair.quoted_string_end = quoted_string_end  # type: ignore[assignment]
    assert walked >= 2
    assert hops <= 2 * text.count('"'), (walked, hops)


def test_inner_quotes_that_can_end_are_still_repaired() -> None:
    value, repairs = loads_lenient('{"html": "<a href="x">y</a>", "n": 1}')
    assert value == {"html": '<a href="x">y</a>', "n": 1}
    assert INNER_QUOTES in repairs


#: a Qwen3-Coder value quoting the block's closer (in the template's layout), then more of the value
QWEN_QUOTING_CLOSER = (
    "<tool_call>\n<function=write_file>\n<parameter=path>\nREADME.md\n</parameter>\n<parameter=content>\n"
    "Wrap calls in <tool_call> and </tool_call> tags. Never write anything after the closing tag, "
    "not even a full stop.\n</parameter>\n</function>\n</tool_call>"
)
WRITE = [Tool("write_file", parameters={"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}})]


def _tag_sized(text: str) -> list[str]:
    """Chunks as a tokenizer cuts such output: each tag whole, the text between on its own."""
    import re

    return [piece for piece in re.split(r"(<[^>]*>)", text) if piece]


@pytest.mark.parametrize("chunking", ["tags", "1", "4", "16"])
def test_a_qwen3_coder_value_quoting_the_closer_is_not_cut_when_streamed(chunking: str) -> None:
    """One-shot keeps the value whole (a </function> follows); a stream must not announce half a file."""
    from utp.parsers.streaming import CallReady, stream_parse

    expected = parse_response(QWEN_QUOTING_CLOSER, tools=WRITE).tool_calls
    assert expected[0].arguments["content"].endswith("not even a full stop.")
    size = None if chunking == "tags" else int(chunking)
    chunks = _tag_sized(QWEN_QUOTING_CLOSER) if size is None else [QWEN_QUOTING_CLOSER[i : i + size] for i in range(0, len(QWEN_QUOTING_CLOSER), size)]
    events, _ = stream_parse(chunks, tools=WRITE)
    assert [e.call.arguments for e in events if isinstance(e, CallReady)] == [c.arguments for c in expected]


def test_a_qwen3_coder_value_quoting_the_closer_streams_as_one_shot_at_every_cut() -> None:
    assert_every_cut_matches(QWEN_QUOTING_CLOSER, WRITE, step=37)


def test_a_dropped_function_closer_before_the_block_closer_still_ends_the_call() -> None:
    """The common drift (``</parameter>`` then ``</tool_call>``, no ``</function>``) stays a call, at once."""
    text = "<tool_call>\n<function=write_file>\n<parameter=path>\na\n</parameter>\n</tool_call> Done, more prose follows here."
    assert [c.arguments for c in parse_response(text, tools=WRITE).tool_calls] == [{"path": "a"}]
    assert_every_cut_matches(text, WRITE, step=29)


@pytest.mark.parametrize("family", ["deepseek", "kimi_k2"])
def test_a_string_after_an_escaped_backslash_still_quotes_the_next_calls_token(family: str) -> None:
    """``"\\\\"`` closes its string: the quote after the escaped backslash counts (found by the round-trip property)."""
    call = ToolCall(name="A", arguments={"\\": None, "<|tool▁call▁begin|>": None, "<|tool_call_begin|>": None})
    text = get_family(family).render([call])
    assert [(c.name, c.arguments) for c in parse_response(text, format=family).tool_calls] == [("A", call.arguments)]
