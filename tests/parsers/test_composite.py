"""The composite parser: one pass, reasoning, merge and de-dup, name checks, never raising."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from utp.parsers import get_family, get_parser, parse_response
from utp.parsers.base import CallFamily, Extraction, ParseContext, Trigger
from utp.parsers.composite import CompositeParser
from utp.parsers.triggerscan import TriggerScanner, scanner_for
from utp.parsers.names import edit_distance, normalize_name, resolve_name
from utp.protocols import ToolCallParser
from utp.tooldefs import normalize_tools
from utp.types import DiagnosticKind, ParsedResponse, ToolCall

TOOLS = [{"name": n} for n in ("get_weather", "get_time", "say_hello", "say_hello_world")]


def test_it_is_a_tool_call_parser() -> None:
    parser = get_parser()
    assert isinstance(parser, ToolCallParser)
    assert parser.can_parse('x <tool_call>{"name": "a", "arguments": {}}</tool_call>')
    assert parser.can_parse({"message": {"tool_calls": [{"function": {"name": "a"}}]}})
    assert not parser.can_parse("plain prose without any trigger")


def test_plain_prose_is_untouched() -> None:
    text = "  Paris is sunny today.\n\nAnything else? "
    parsed = parse_response(text)
    assert (parsed.content, parsed.tool_calls, parsed.finish_reason, parsed.diagnostics) == (text, [], "stop", [])


def test_content_around_spans_is_trimmed_at_the_cut() -> None:
    text = 'Checking now.  <tool_call>{"name": "a", "arguments": {}}</tool_call>\n\nDone for now.'
    assert parse_response(text).content == "Checking now.\nDone for now."


def test_native_and_content_calls_are_both_kept() -> None:
    """HLD 8.1 mixed case: a native call and a different XML call in one response give two calls."""
    response = {"message": {"tool_calls": [{"function": {"name": "tool1", "arguments": "{}"}}], "content": '<tools>{"name": "tool2"}</tools>'}}
    assert [c.name for c in parse_response(response).tool_calls] == ["tool1", "tool2"]


def test_the_same_call_native_and_in_content_appears_once() -> None:
    response = {"message": {"tool_calls": [{"function": {"name": "a", "arguments": {"x": 1}}}], "content": '<tool_call>{"name": "a", "arguments": {"x": 1}}</tool_call>'}}
    parsed = parse_response(response)
    assert [(c.name, c.format) for c in parsed.tool_calls] == [("a", "native")]
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.DUPLICATE]


def test_reasoning_goes_to_thinking_and_calls_there_are_not_run() -> None:
    text = '<think>maybe <tool_call>{"name": "get_time", "arguments": {}}</tool_call>?</think>The time is noon.'
    parsed = parse_response(text)
    assert parsed.tool_calls == []
    assert parsed.content == "The time is noon."
    assert "maybe" in parsed.thinking
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.IN_REASONING]


def test_unclosed_and_prefilled_reasoning() -> None:
    assert parse_response("<think>still thinking when the tokens ran out").thinking == "still thinking when the tokens ran out"
    parsed = parse_response("template opened the think block</think>\nAnswer.")
    assert (parsed.thinking, parsed.content) == ("template opened the think block", "Answer.")


@pytest.mark.parametrize(
    ("text", "thinking", "content"),
    [
        ('<think>Fix the brace.<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>', "Fix the brace.", ""),
        ('<think>Need lookup<tool_call>get_time</tool_call>\nChecking.', "Need lookup", "Checking."),
        ('<think>bad <tool_call>{oops</tool_call> then <tool_call>{"name": "get_time", "arguments": {}}</tool_call>', "bad <tool_call>{oops</tool_call> then", ""),
        ("<think>Look it up.\n<tool_call>\n<function=get_time>\n</function>\n</tool_call>", "Look it up.", ""),
    ],
)
def test_a_call_ends_a_reasoning_block_the_output_never_closes(text: str, thinking: str, content: str) -> None:
    """Ollama's Qwen 3.5 parser reads such calls after a real report; only a call that reads ends the block."""
    from .conftest import assert_every_cut_matches

    parsed = parse_response(text)
    assert [c.name for c in parsed.tool_calls] == ["get_time"]
    assert (parsed.thinking, parsed.content) == (thinking, content)
    assert not any(d.kind is DiagnosticKind.IN_REASONING for d in parsed.diagnostics)
    assert_every_cut_matches(text, None, step=9)


def test_native_thinking_field_is_scanned_too() -> None:
    response = {"message": {"thinking": '<tool_call>{"name": "a", "arguments": {}}</tool_call>', "content": "ok"}}
    parsed = parse_response(response)
    assert parsed.tool_calls == [] and parsed.diagnostics[0].kind is DiagnosticKind.IN_REASONING


def test_names_exact_normalised_corrected_unknown() -> None:
    text = "\n".join(
        f'<tool_call>{{"name": "{n}", "arguments": {{}}}}</tool_call>' for n in ("get_time", "functions.Get_Weather", "get_water", "perform")
    )
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.known) for c in parsed.tool_calls] == [("get_time", True), ("get_weather", True), ("get_weather", True), ("perform", False)]
    kinds = [d.kind for d in parsed.diagnostics]
    assert kinds.count(DiagnosticKind.NAME_CORRECTED) == 2 and kinds.count(DiagnosticKind.UNKNOWN_TOOL) == 1
    assert any("get_water" in r for r in parsed.tool_calls[2].repairs)


def test_ambiguous_misspelling_is_not_guessed() -> None:
    ctx = ParseContext(normalize_tools([{"name": "get_cat"}, {"name": "get_car"}]))
    assert resolve_name("get_ca", ctx).known is False


def test_short_names_are_corrected_within_one_edit() -> None:
    """Two edits are half of ``test``: ``t.test`` (a JavaScript sample's method) is not the ``test`` tool misspelt."""
    ctx = ParseContext(normalize_tools([{"name": "test"}, {"name": "get_weather"}]))
    assert resolve_name("tset", ctx).known is True  # one transposition
    assert resolve_name("t.test", ctx).known is False
    assert resolve_name("get_wether", ctx).name == "get_weather"
    sample = "```js\nreturn Promise.all([\n    t.test('this subtest is now skipped'),\n    t.test('run', { only: true }),\n  ]);\n```"
    assert parse_response(sample, tools=[{"name": "test", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}]).tool_calls == []


def test_without_tools_known_is_none() -> None:
    assert parse_response('<tool_call>{"name": "x", "arguments": {}}</tool_call>').tool_calls[0].known is None


def test_name_helpers() -> None:
    assert normalize_name(" functions.Get Weather ") == "get_weather"
    assert normalize_name("functions.get_weather:3") == "get_weather"
    assert edit_distance("get_water", "get_weather", 2) == 2
    assert edit_distance("abcd", "abdc", 2) == 1  # a transposition is one edit
    assert edit_distance("short", "much_longer_name", 2) == 3


def test_finish_reason_comes_from_the_view_without_calls() -> None:
    assert parse_response({"message": {"content": "cut"}, "done_reason": "length"}).finish_reason == "length"


class _Raising(CallFamily):
    name = "test_raising"
    declared_triggers = (Trigger("<boom>"),)
    priority = 99

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        raise RuntimeError("family bug")

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "<boom>"


class _BadSpan(CallFamily):
    name = "test_bad_span"
    declared_triggers = (Trigger("<bad>"),)

    def extract(self, text: str, pos: int, trigger: str, ctx: ParseContext) -> Extraction | None:
        return Extraction(end=pos)  # would loop forever if trusted

    def render(self, calls: Sequence[ToolCall]) -> str:
        return "<bad>"


def test_a_raising_family_cannot_crash_parse() -> None:
    families = [_Raising(), _BadSpan(), get_family("hermes")]
    parser = CompositeParser(families, ParseContext())
    parsed = parser.parse('a <boom> b <bad> c <tool_call>{"name": "f", "arguments": {}}</tool_call>')
    assert [c.name for c in parsed.tool_calls] == ["f"]
    reasons = " ".join(d.reason for d in parsed.unparsed)
    assert "family bug" in reasons and "invalid span" in reasons
    assert "<boom>" in parsed.content


def test_shared_triggers_are_tried_by_priority_and_prefixes_are_candidates() -> None:
    scanner = TriggerScanner([get_family(n) for n in ("hermes", "json", "mistral")])
    names = [c.family.name for c in scanner.candidates["[TOOL_CALLS]"]]
    assert names == ["mistral", "json"]  # '[' (json) is a prefix of '[TOOL_CALLS]'
    assert scanner_for([get_family("hermes")]) is scanner_for([get_family("hermes")])


def test_get_parser_is_cached_for_the_same_tools_object() -> None:
    tools = [{"name": "a"}]
    assert get_parser("auto", tools) is get_parser("auto", tools)
    assert get_parser("auto", tools) is not get_parser("auto", [{"name": "a"}])


def test_format_restricts_the_families() -> None:
    text = '[TOOL_CALLS]a[ARGS]{}  <tool_call>{"name": "b", "arguments": {}}</tool_call>'
    assert [c.name for c in parse_response(text, format="mistral").tool_calls] == ["a"]
    assert [c.name for c in parse_response(text, format="native").tool_calls] == []
    assert [c.name for c in parse_response(text).tool_calls] == ["a", "b"]


_json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["message", "content", "tool_calls", "function", "name", "arguments", "choices", "delta", "thinking", "x"]) | st.text(max_size=5), inner, max_size=5),
    max_leaves=25,
)


@given(st.text(max_size=400))
@settings(max_examples=300, deadline=None)
def test_never_raises_on_arbitrary_text(text: str) -> None:
    assert isinstance(parse_response(text), ParsedResponse)
    assert isinstance(parse_response(text, tools=TOOLS), ParsedResponse)


_TRIGGERY = st.lists(
    st.sampled_from(['<tool_call>', '</tool_call>', '{"name": "f", ', '"arguments": {', '}', ']', '[', '[TOOL_CALLS]', '<think>', '</think>', '```json\n', '\n```', ' prose ', '"', "'", '<|python_tag|>', 'functools[', '<tools>', ':\n', '\n']),
    max_size=25,
).map("".join)


@given(_TRIGGERY)
@settings(max_examples=400, deadline=None)
def test_never_raises_on_trigger_soup(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert isinstance(parsed, ParsedResponse)
    assert not any("parser error" in d.reason for d in parsed.diagnostics)


@given(_json_like)
@settings(max_examples=300, deadline=None)
def test_never_raises_on_arbitrary_json_shapes(value: object) -> None:
    for response in (value, {"message": value}, {"choices": [{"message": value}]}, {"message": {"tool_calls": value}}):
        parsed = parse_response(response)
        assert isinstance(parsed, ParsedResponse)
        assert not any("parser error" in d.reason for d in parsed.diagnostics)


def test_reasoning_helpers() -> None:
    from utp.parsers.reasoning import harmony_analysis_spans, join_around_spans, split_reasoning

    content, thinking, spans = split_reasoning("a <think>x</think> b <think>y")
    assert (content, thinking, len(spans)) == ("a\nb", "x\n\ny", 2)
    assert split_reasoning("pre</think>post")[:2] == ("post", "pre")
    text = "<|channel|>analysis<|message|>think hard<|end|><|start|>assistant<|channel|>final<|message|>42"
    assert [s.body for s in harmony_analysis_spans(text)] == ["think hard"]
    assert join_around_spans("A  <x>  B", [(3, 6)]) == "A\nB"
    assert join_around_spans("unchanged ", []) == "unchanged "
