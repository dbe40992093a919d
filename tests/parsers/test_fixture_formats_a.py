"""LongCat and dots tags (hermes), GigaChat 3 / 3.1, Apertus, and Seed-OSS's ``<seed:think>``.

Vectors marked "fixture" are the test inputs of vLLM's own parsers (cited by
path in vllm-project/vllm); the others follow each format's definition: the
reference parser named in each family's docstring.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp.parsers import get_family, parse_response
from utp.parsers.base import ParseContext, registered_families
from utp.parsers.reasoning import REASONING_TAGS, split_reasoning
from utp.parsers.streaming import CallReady, ContentDelta, StreamParser, stream_parse
from utp.types import DiagnosticKind, Tool, ToolCall

from .conftest import assert_stream_matches, streamed
from .test_scan_filter import _same_scan

FAMILIES = registered_families()
CONTEXTS = [ParseContext(), ParseContext([Tool("get_weather"), Tool("f")])]


def calls(text: str, **kw: object) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, **kw).tool_calls]


def kinds(text: str) -> list[DiagnosticKind]:
    return [d.kind for d in parse_response(text).diagnostics]




# ---------------------------------------------------------------- LongCat / dots (hermes tags)

# fixture: tests/tool_parsers/test_longcat_tool_parser.py
LONGCAT_FIXTURES = [
    ('<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Tokyo"}}</longcat_tool_call>', [("get_weather", {"city": "Tokyo"})], ""),
    (
        '<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Tokyo"}}</longcat_tool_call>\n'
        '<longcat_tool_call>{"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}</longcat_tool_call>',
        [("get_weather", {"city": "Tokyo"}), ("get_time", {"timezone": "Asia/Tokyo"})],
        "",
    ),
    ('<longcat_tool_call>{"name": "refresh", "arguments": {}}</longcat_tool_call>', [("refresh", {})], ""),
    (
        'Let me check the weather for you.\n<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Tokyo"}}</longcat_tool_call>\nHere is the result.',
        [("get_weather", {"city": "Tokyo"})],
        "Let me check the weather for you.\nHere is the result.",
    ),
    (
        '<longcat_tool_call>{\n  "name": "test_function",\n  "arguments": {\n    "quoted": "He said \\"hello\\"",\n    "path": "C:\\\\Users\\\\file.txt"\n  }\n}</longcat_tool_call>',
        [("test_function", {"quoted": 'He said "hello"', "path": "C:\\Users\\file.txt"})],
        "",
    ),
]


@pytest.mark.parametrize(("text", "want", "content"), LONGCAT_FIXTURES)
def test_longcat_fixtures(text: str, want: list, content: str) -> None:
    parsed = parse_response(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == want
    assert parsed.content == content
    assert all(c.format == "hermes" for c in parsed.tool_calls)


def test_longcat_missing_closer_and_broken_json() -> None:
    # the hermes rules hold under the new tag: a missing closer at the end, unreadable JSON reported
    assert calls('<longcat_tool_call>{"name": "f", "arguments": {"a": 1}}') == [("f", {"a": 1})]
    assert kinds("<longcat_tool_call>{name: f, </longcat_tool_call>") == [DiagnosticKind.UNPARSEABLE]


def test_dots_json_body_and_invoke_body() -> None:
    # fixture: tests/tool_parsers/test_dots_tool_parser.py (an <invoke> body is anthropic_xml's)
    text = (
        '<dots_function_call><invoke name="search"><parameter name="query">chairs</parameter></invoke>'
        '<invoke name="open"><parameter name="id">7</parameter></invoke></dots_function_call>'
        '<dots_function_call>{"name":"search","arguments":{"query":"tables"}}</dots_function_call>'
    )
    assert calls(text) == [("search", {"query": "chairs"}), ("open", {"id": 7}), ("search", {"query": "tables"})]
    assert "tables" not in parse_response(text).content


@pytest.mark.parametrize(
    "text",
    [
        "Wrap each call in <longcat_tool_call> tags.",
        "Use <dots_function_call> then the JSON.",
        "<longcat_tool_call>\nThe tool call goes here.\n</longcat_tool_call>",
        "`<dots_function_call>{\"name\": \"f\", \"arguments\": {}}</dots_function_call>`",
    ],
)
def test_longcat_and_dots_tags_in_prose_stay_content(text: str) -> None:
    parsed = parse_response(text)
    assert parsed.tool_calls == [] and parsed.content == text


# ---------------------------------------------------------------- GigaChat 3 / 3.1

MEMORY = {"action": "create", "id": "preferences"}
# fixture: tests/tool_parsers/test_gigachat3_tool_parser.py (both generations)
GIGACHAT_FIXTURES = [
    '<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "manage_user_memory", "arguments": {"action": "create", "id": "preferences"}}',
    '<|function_call|>{"name": "manage_user_memory", "arguments": {"action": "create", "id": "preferences"}}',
]


@pytest.mark.parametrize("text", GIGACHAT_FIXTURES)
def test_gigachat_fixtures(text: str) -> None:
    assert calls(text) == [("manage_user_memory", MEMORY)]
    assert parse_response(text).content == ""
    prose = "I'll check that for you." + text + "</s>"
    parsed = parse_response(prose)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("manage_user_memory", MEMORY)]
    assert parsed.content == "I'll check that for you."
    assert parsed.tool_calls[0].format == "gigachat"


def test_gigachat_nested_arguments_and_empty_arguments() -> None:
    nested = {"action": "create", "content": {"short_answers": True, "english_ui": False}}
    text = '<|function_call|>{"name": "m", "arguments": ' + json.dumps(nested) + "}"
    assert calls(text) == [("m", nested)]
    assert calls('<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "m", "arguments": {}}') == [("m", {})]


def test_gigachat_role_marker_without_message_separator() -> None:
    # the reference regex reads ``function call<|role_sep|>\n`` wherever it stands
    assert calls('function call<|role_sep|>\n{"name": "f", "arguments": {"a": 1}}</s>') == [("f", {"a": 1})]


def test_gigachat_argument_may_hold_the_end_of_sequence_text() -> None:
    text = '<|function_call|>{"name": "f", "arguments": {"html": "<s>old</s>"}}</s>'
    assert calls(text) == [("f", {"html": "<s>old</s>"})]
    assert parse_response(text).content == ""


@pytest.mark.parametrize(
    "text",
    [
        "<|message_sep|>\n\nassistant<|role_sep|>\n{\"name\": \"f\", \"arguments\": {}}",  # another role's message
        "The model writes a function call after the role separator.",
        "function call: {\"name\": \"f\", \"arguments\": {}}",
        "<|function_call|> is GigaChat's token.",
    ],
)
def test_gigachat_negatives(text: str) -> None:
    # (bare JSON after prose may still be the json family's call; only gigachat's reading is tested)
    parsed = parse_response(text)
    assert all(c.format != "gigachat" for c in parsed.tool_calls)
    assert all(d.format != "gigachat" for d in parsed.diagnostics)


def test_gigachat_damage_is_reported() -> None:
    assert kinds('<|function_call|>{"foo": 1}') == [DiagnosticKind.UNPARSEABLE]  # not a call object
    assert kinds("<|function_call|>{name: ") == [DiagnosticKind.UNPARSEABLE]
    assert kinds("<|message_sep|>\n\nfunction call<|role_sep|>\n") == [DiagnosticKind.TRUNCATED]
    # cut off at the end of the output after a whole value: read, with the repair recorded
    parsed = parse_response('<|function_call|>{"name": "f", "arguments": {"city": "Paris"')
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("f", {"city": "Paris"})]
    assert parsed.tool_calls[0].repairs
    # ... inside a string: a half-written value, reported and not run
    assert kinds('<|function_call|>{"name": "f", "arguments": {"city": "Par') == [DiagnosticKind.TRUNCATED]
    # abandoned for a new marker: not run
    text = '<|function_call|>{"name": "f", "arguments": {"a": <|function_call|>{"name": "g", "arguments": {}}'
    assert calls(text) == [("g", {})]
    assert kinds(text) == [DiagnosticKind.UNPARSEABLE]


# ---------------------------------------------------------------- Apertus

# fixture: tests/tool_parsers/test_apertus_tool_parser.py
APERTUS_FIXTURES = [
    ('<|tools_prefix|>[{"get_weather": {"location": "London"}}]<|tools_suffix|>', [("get_weather", {"location": "London"})], ""),
    (
        'Let me check the weather for you. <|tools_prefix|>[{"get_weather": {"location": "Paris"}}]<|tools_suffix|>',
        [("get_weather", {"location": "Paris"})],
        "Let me check the weather for you.",
    ),
    (
        '<|tools_prefix|>[{"get_weather": {"location": "London"}}, {"get_time": {"location": "London"}}]<|tools_suffix|>',
        [("get_weather", {"location": "London"}), ("get_time", {"location": "London"})],
        "",
    ),
    (
        '<|tools_prefix|>[{"complex_function": {"nested": {"inner": "value"}, "list": ["a", "b"]}}]<|tools_suffix|>',
        [("complex_function", {"nested": {"inner": "value"}, "list": ["a", "b"]})],
        "",
    ),
    # missing suffix, and a list cut off at the end of the output
    ('<|tools_prefix|>[{"get_weather": {"location": "San Francisco", "unit": "celsius"}}]', [("get_weather", {"location": "San Francisco", "unit": "celsius"})], ""),
    ('<|tools_prefix|>[{"get_weather": {"location": "London"}}', [("get_weather", {"location": "London"})], ""),
]


@pytest.mark.parametrize(("text", "want", "content"), APERTUS_FIXTURES)
def test_apertus_fixtures(text: str, want: list, content: str) -> None:
    parsed = parse_response(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == want
    assert parsed.content == content
    assert all(c.format == "apertus" for c in parsed.tool_calls)


def test_apertus_truncation_is_recorded() -> None:
    parsed = parse_response('<|tools_prefix|>[{"get_weather": {"location": "London"}}')
    assert parsed.tool_calls[0].repairs
    # the last item cut off before its arguments: the first call runs, the cut one is reported
    # the cut fell in the last item, inside its name or inside a value: the calls before it were written whole
    for cut in ('{"get_ti', '{"g": {"b": "hal', '{"g": {"b": 2, "c'):
        parsed = parse_response('<|tools_prefix|>[{"f": {"a": 1}}, ' + cut)
        assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("f", {"a": 1})], cut
        assert DiagnosticKind.TRUNCATED in [d.kind for d in parsed.diagnostics]
    assert kinds("<|tools_prefix|>") == [DiagnosticKind.TRUNCATED]


def test_apertus_text_after_the_block_is_content() -> None:
    parsed = parse_response('<|tools_prefix|>[{"f": {}}]<|tools_suffix|> Done.')
    assert parsed.content == "Done." and calls('<|tools_prefix|>[{"f": {}}] Done.') == [("f", {})]
    assert parse_response('<|tools_prefix|>[{"f": {}}] Done.').content == "Done."


def test_apertus_other_shapes() -> None:
    # one object instead of a list (the reference wraps it); the name/arguments shape; a JSON-string argument object
    assert calls('<|tools_prefix|>{"f": {"a": 1}}<|tools_suffix|>') == [("f", {"a": 1})]
    assert calls('<|tools_prefix|>[{"name": "f", "arguments": {"a": 1}}]<|tools_suffix|>') == [("f", {"a": 1})]
    assert calls('<|tools_prefix|>[{"f": "{\\"a\\": 1}"}]<|tools_suffix|>') == [("f", {"a": 1})]
    # the suffix inside an argument string does not end the block
    assert calls('<|tools_prefix|>[{"f": {"s": "<|tools_suffix|>"}}]<|tools_suffix|>') == [("f", {"s": "<|tools_suffix|>"})]


@pytest.mark.parametrize(
    "text",
    [
        "<|tools_prefix|>[1, 2]<|tools_suffix|>",
        '<|tools_prefix|>[{"a": 1, "b": 2}]<|tools_suffix|>',
        '<|tools_prefix|>[{"f": 3}]<|tools_suffix|>',
        "<|tools_prefix|>[{f: }<|tools_suffix|>",
    ],
)
def test_apertus_non_calls_after_the_special_token_are_reported(text: str) -> None:
    parsed = parse_response(text)
    assert parsed.tool_calls == []
    assert DiagnosticKind.UNPARSEABLE in [d.kind for d in parsed.diagnostics]


def test_apertus_block_abandoned_for_a_new_one_is_not_run() -> None:
    text = '<|tools_prefix|>[{"f": {"a": <|tools_prefix|>[{"g": {}}]<|tools_suffix|>'
    assert calls(text) == [("g", {})]


def test_apertus_prefix_in_prose_stays_content() -> None:
    text = "Apertus starts a call with <|tools_prefix|> and ends it with <|tools_suffix|>."
    assert parse_response(text).content == text and calls(text) == []


# ---------------------------------------------------------------- <seed:think>


def test_seed_think_is_reasoning() -> None:
    assert ("<seed:think>", "</seed:think>") in REASONING_TAGS
    content, thinking, _ = split_reasoning("<seed:think>plan</seed:think>answer")
    assert (content, thinking) == ("answer", "plan")


def test_a_call_quoted_inside_seed_think_is_not_a_call() -> None:
    # fixture: tests/tool_parsers/test_seed_oss_tool_parser.py (the model spells out the call while thinking)
    call = "<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n</function>\n</seed:tool_call>"
    text = "<seed:think>\nGot it. The format is " + call + ". Let me go with that.</seed:think>" + call
    parsed = parse_response(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"location": "Barcelona, Spain"})]
    assert "Got it" in parsed.thinking and "Got it" not in parsed.content
    # a hermes call inside it is reported, never run
    parsed = parse_response('<seed:think>I could write <tool_call>{"name": "f", "arguments": {}}</tool_call></seed:think>No.')
    assert parsed.tool_calls == [] and parsed.content == "No."
    assert DiagnosticKind.IN_REASONING in [d.kind for d in parsed.diagnostics]


def test_seed_think_with_budget_reflections_and_truncation() -> None:
    # fixture: tests/tool_parsers/test_seed_oss_tool_parser.py (cot_budget_reflect markers sit inside the reasoning)
    text = (
        "<seed:think>The user's current thinking budget is 512.</seed:cot_budget_reflect>\nLet me analyze.\n"
        "<seed:cot_budget_reflect>I have used 131 tokens.</seed:cot_budget_reflect>\n Done.</seed:think>\nAnswer."
    )
    parsed = parse_response(text)
    assert parsed.content == "Answer." and "131 tokens" in parsed.thinking
    # cut off while thinking: everything after the opener is reasoning
    parsed = parse_response('Hi <seed:think>maybe <tool_call>{"name": "f", "arguments": {}}')
    assert parsed.content == "Hi" and parsed.tool_calls == []


def test_plain_think_tags_unchanged() -> None:
    assert split_reasoning("a <think>x</think> b")[:2] == ("a\nb", "x")
    assert split_reasoning("pre</think>post")[:2] == ("post", "pre")
    assert split_reasoning("no reasoning here")[0] == "no reasoning here"


# ---------------------------------------------------------------- streaming, heads, rendering

STREAM_TEXTS = [
    *(t for t, _, _ in LONGCAT_FIXTURES),
    *GIGACHAT_FIXTURES,
    *("ok " + t + "</s> tail" for t in GIGACHAT_FIXTURES),
    *(t for t, _, _ in APERTUS_FIXTURES),
    '<|tools_prefix|>[{"f": {}}] Done.',
    "<seed:think>x <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call></seed:think>answer",
    '<seed:think>a</seed:think><dots_function_call>{"name":"s","arguments":{"q":"t"}}</dots_function_call> end',
    "<|message_sep|>\n\nassistant<|role_sep|>\nhello",
    "<|message_sep|>\n\nfunction call<|role_sep|>\nnot json",
    "<|function_call|> is a token. <|tools_prefix|> too.",
    "<|message_sep|>\n\nfunction",
]


@pytest.mark.parametrize(
    "text",
    ["<|message_sep|>\n\nassistant<|role_sep|>\nhello there", "<|function_call|> is a token.", "<|tools_prefix|> starts a block."],
)
def test_streaming_releases_non_calls_before_the_end(text: str) -> None:
    # settled(): once the text after a marker is plainly not a call, it streams as content
    released = "".join(e.text for e in StreamParser().feed(text) if isinstance(e, ContentDelta))
    assert released.startswith(text[:5]), released


@pytest.mark.parametrize("text", STREAM_TEXTS)
def test_streaming_equals_one_shot(text: str) -> None:
    assert_stream_matches(text)


#: (family, trigger) of every trigger added here, and bodies at the edges of their heads
HEADED = [
    ("hermes", "<longcat_tool_call>"),
    ("hermes", "<dots_function_call>"),
    ("gigachat", "<|message_sep|>"),
    ("gigachat", "function call<|role_sep|>"),
    ("gigachat", "<|function_call|>"),
    ("apertus", "<|tools_prefix|>"),
]
BODIES = [
    "", " ", "\n", "\n\n", "{", "[", "[]", "{}", "x", "<", "```json\n{}", "<name>f</name>", "f\n{}",
    '{"name": "f", "arguments": {}}', '[{"f": {}}]', '{"f": {"a": 1}}', "\n\nfunction call<|role_sep|>\n{",
    "\n\nfunction call<|role_sep|>\n", "\n\nfunction call<|role_sep|>", "function call<|role_sep|>x",
    "\n\nassistant<|role_sep|>\n{}", '{"foo": 1}', "{name: ", "\u00a0{", "\u2028{", "<|tools_suffix|>", "</s>",
]


def _head(family: str, trigger: str) -> re.Pattern[str]:
    return re.compile(FAMILIES[family].trigger_heads[trigger])


@pytest.mark.parametrize("which", HEADED)
@pytest.mark.parametrize("body", BODIES)
def test_head_is_necessary_for_extract(which: tuple[str, str], body: str) -> None:
    family, trigger = which
    for prefix in ("", "ok ", "`"):
        text = prefix + trigger + body
        pos = len(prefix)
        if _head(family, trigger).match(text, pos + len(trigger)) is None:
            for ctx in CONTEXTS:
                assert FAMILIES[family].extract(text, pos, trigger, ctx) is None, (family, text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parts=st.lists(st.sampled_from([t for _, t in HEADED] + BODIES + ["<seed:think>", "</seed:think>", " prose ", "</longcat_tool_call>"]), max_size=10)
)
def test_filtered_scan_equals_literal_scan(parts: list[str]) -> None:
    text = "".join(parts)
    for ctx in CONTEXTS:
        _same_scan(text, ctx)


@pytest.mark.parametrize("family", ["apertus", "gigachat"])
def test_render_round_trips(family: str) -> None:
    rendered = get_family(family).render([ToolCall("get_weather", {"city": "Tokyo", "n": [1, {"x": None}]}), ToolCall("f", {})])
    assert calls(rendered) == [("get_weather", {"city": "Tokyo", "n": [1, {"x": None}]}), ("f", {})]
    assert parse_response(rendered).content == ""
