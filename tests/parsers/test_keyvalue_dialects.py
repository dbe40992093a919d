"""GLM's key/value markup under other models' tags, and the value typing all raw-text formats share.

The dialects, each from its published template or reference parser:

* Hunyuan HY v3: GLM's own tags, ``<tool_sep>`` after the name, calls grouped
  in ``<tool_calls>`` (read by the GLM family);
* Hunyuan HY v4: every tag suffixed ``:opensource``;
* IQuest-Coder: ``<iquestcoder_tool_call>`` around GLM's key/value tags;
* Solar Open: ``<|tool_call:start|>NAME<|tool_arg:start|>k<|tool_arg:value|>v<|tool_arg:end|><|tool_call:end|>``,
  reasoning in ``<|think:start|>…<|think:end|>``.

Also read here: GigaChat 3.5's ``｜GCML｜`` token in front of DeepSeek's DSML
markup, openPangu's JSON call list between LFM2's call tokens, Gemma 4's
stripped ``call:NAME{...}`` right after its reasoning channel closes, PLaMo 3's
requests, and MiniMax-M3's elements behind its ``]<]minimax[>[`` marker.

A call the output cut off right after a whole value lost only its closer: it
is read, with the repair recorded. A value cut in half is reported, not run.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.parsers.typedvalues import typed_value
from utp.types import DiagnosticKind, Tool

from .conftest import assert_every_cut_matches, stream_cpu_time

WEATHER = Tool(
    "get_weather",
    parameters={"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "note": {"type": "string"}}},
)
CLOCK = Tool("current_date", parameters={"type": "object", "properties": {}})
TOOLS = [WEATHER, CLOCK]


def read(text: str, tools: list | None = TOOLS) -> tuple[list[tuple[str, dict, str]], str]:
    parsed = parse_response(text, tools=tools)
    return [(c.name, c.arguments, c.format) for c in parsed.tool_calls], parsed.content


def kinds(text: str) -> list[DiagnosticKind]:
    return [d.kind for d in parse_response(text, tools=TOOLS).diagnostics]


HY3 = "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Oslo</arg_value>\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>\n<tool_call>current_date<tool_sep>\n</tool_call>\n</tool_calls>"
HY4 = (
    "Checking.<tool_calls:opensource><tool_call:opensource>get_weather"
    "<arg_key:opensource>city</arg_key:opensource><arg_value:opensource>Oslo</arg_value:opensource>"
    "<arg_key:opensource>days</arg_key:opensource><arg_value:opensource>2</arg_value:opensource></tool_call:opensource>"
    "<tool_call:opensource>current_date</tool_call:opensource></tool_calls:opensource>"
)
#: HY v3's open-source tags: v4's suffixed tags with the suffixed separator after the name
HY3_OPEN = HY4.replace("get_weather<arg_key", "get_weather<tool_sep:opensource>\n<arg_key").replace(
    "current_date</tool_call", "current_date<tool_sep:opensource>\n</tool_call"
)
IQUEST = "One moment.\n<iquestcoder_tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Oslo</arg_value>\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</iquestcoder_tool_call><iquestcoder_tool_call>current_date</iquestcoder_tool_call>"
SOLAR = (
    "<|think:start|>The user wants Oslo.<|think:end|>Let me look.<|tool_call:start|>get_weather\n"
    "<|tool_arg:start|>city<|tool_arg:value|>Oslo<|tool_arg:end|>\n"
    "<|tool_arg:start|>days<|tool_arg:value|>2<|tool_arg:end|>\n<|tool_call:end|>"
    "<|tool_call:start|>current_date\n<|tool_call:end|>"
)
BOTH = [("get_weather", {"city": "Oslo", "days": 2}), ("current_date", {})]


@pytest.mark.parametrize(
    ("text", "family", "content"),
    [(HY3, "glm", ""), (HY4, "hunyuan", "Checking."), (HY3_OPEN, "hunyuan", "Checking."), (IQUEST, "iquest_coder", "One moment."), (SOLAR, "solar_open", "Let me look.")],
    ids=["hunyuan-v3", "hunyuan-v4", "hunyuan-v3-opensource", "iquest", "solar"],
)
def test_each_dialect_reads_both_calls_typed_by_the_schema(text: str, family: str, content: str) -> None:
    calls, got_content = read(text)
    assert [(name, args) for name, args, _ in calls] == BOTH
    assert {fmt for _, _, fmt in calls} == {family}
    assert got_content == content


def test_solar_reasoning_is_thinking_and_a_value_keeps_its_spaces() -> None:
    parsed = parse_response(SOLAR, tools=TOOLS)
    assert parsed.thinking == "The user wants Oslo."
    spaced = "<|tool_call:start|>get_weather\n<|tool_arg:start|>note<|tool_arg:value|>  two spaces first<|tool_arg:end|>\n<|tool_call:end|>"
    assert read(spaced)[0] == [("get_weather", {"note": "  two spaces first"}, "solar_open")]


def test_a_solar_value_may_hold_text_that_starts_like_its_tokens() -> None:
    text = "<|tool_call:start|>get_weather\n<|tool_arg:start|>note<|tool_arg:value|>what is <|tool_call: anyway<|tool_arg:end|>\n<|tool_call:end|>"
    assert read(text)[0] == [("get_weather", {"note": "what is <|tool_call: anyway"}, "solar_open")]


def test_jamba_json_group_is_still_jamba() -> None:
    calls, content = read('<tool_calls>[{"name": "get_weather", "arguments": {"city": "Oslo"}}]</tool_calls>')
    assert calls == [("get_weather", {"city": "Oslo"}, "jamba")]
    assert content == ""


@pytest.mark.parametrize(
    "text",
    [
        "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Oslo</arg_value>\n",
        "<tool_calls:opensource><tool_call:opensource>get_weather<arg_key:opensource>city</arg_key:opensource><arg_value:opensource>Oslo</arg_value:opensource>",
        "<|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>Oslo<|tool_arg:end|>\n",
    ],
    ids=["hunyuan-v3", "hunyuan-v4", "solar"],
)
def test_a_call_cut_after_a_whole_value_is_read_with_the_repair_named(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Oslo"})]
    assert any("output ended before" in repair for repair in parsed.tool_calls[0].repairs)


@pytest.mark.parametrize(
    "text",
    [
        "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Os",
        "<tool_calls:opensource><tool_call:opensource>get_weather<arg_key:opensource>city</arg_key:opensource>",
        "<|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>Os",
    ],
    ids=["cut-mid-value", "cut-after-key", "solar-cut-mid-value"],
)
def test_a_half_written_value_is_reported_not_run(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == []
    assert DiagnosticKind.TRUNCATED in [d.kind for d in parsed.diagnostics]


@pytest.mark.parametrize("text", [HY3, HY4, IQUEST, SOLAR], ids=["hunyuan-v3", "hunyuan-v4", "iquest", "solar"])
def test_streaming_matches_one_shot_at_every_cut(text: str) -> None:
    assert_every_cut_matches(text, TOOLS, step=23)


def test_gigachat_gcml_token_is_read_as_dsml() -> None:
    text = (
        'Sure.<｜GCML｜tool_calls><｜GCML｜invoke name="get_weather">'
        '<｜GCML｜parameter name="city" string="true">Oslo</｜GCML｜parameter>'
        '<｜GCML｜parameter name="days" string="false">2</｜GCML｜parameter>'
        "</｜GCML｜invoke></｜GCML｜tool_calls>"
    )
    assert read(text) == ([("get_weather", {"city": "Oslo", "days": 2}, "deepseek_dsml")], "Sure.")


def test_a_json_call_list_between_lfm2_call_tokens_is_read() -> None:
    text = 'Checking.<|tool_call_start|>[{"name": "get_weather", "arguments": {"city": "Oslo"}}, {"name": "current_date", "arguments": {}}]<|tool_call_end|>'
    calls, content = read(text)
    assert [(name, args) for name, args, _ in calls] == [("get_weather", {"city": "Oslo"}), ("current_date", {})]
    assert content == "Checking."


def test_gemma4_bare_call_right_after_its_reasoning_channel() -> None:
    text = '<|channel>thought\nThe user wants Oslo.\n<channel|>call:get_weather{city:<|"|>Oslo<|"|>}'
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Oslo"})]
    assert parsed.thinking.strip() == "The user wants Oslo."
    # mid-sentence it is still prose
    assert read('We could run call:get_weather{city:<|"|>Oslo<|"|>} later.')[0] == []


@pytest.mark.parametrize(
    ("raw", "schema", "want"),
    [
        ("3.5", {"type": "float"}, 3.5),
        ("7", {"type": "int"}, 7),
        ("true", {"type": "bool"}, True),
        ('{"k": 1}', {"type": "dict"}, {"k": 1}),
        ("null", {"anyOf": [{"type": "string"}, {"type": "null"}]}, None),
        ("None", {"type": ["string", "null"]}, None),
        ("plain", {"type": ["string", "null"]}, "plain"),
        ('{"a": 1}', {"type": ["string", "object"]}, {"a": 1}),
        ("plain", {"type": ["string", "object"]}, "plain"),
        ("\"{'key': 'value', 'n': 1}\"", {"type": "object"}, {"key": "value", "n": 1}),
        ('"[1, 2]"', {"type": "array"}, [1, 2]),
        ('"just words"', {"type": "object"}, '"just words"'),
        ('[{\\"id\\": \\"1\\", \\"path\\": \\"C:\\\\\\\\tmp\\"}]', {"type": "array"}, [{"id": "1", "path": "C:\\tmp"}]),
        ('[{\\"id\\": \\"1\\"}', {"type": "array"}, '[{\\"id\\": \\"1\\"}'),
    ],
)
def test_raw_values_are_typed_by_the_schema(raw: str, schema: dict, want: object) -> None:
    assert typed_value(raw, schema) == want


def test_arguments_wrapped_in_one_undeclared_argument_are_unwrapped() -> None:
    text = (
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
        '<｜DSML｜parameter name="arguments" string="false">{"city": "Oslo", "days": 2}</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    )
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Oslo", "days": 2})]
    assert any("unwrapped" in repair for repair in parsed.tool_calls[0].repairs)


def test_a_wrapper_written_as_a_python_dict_is_unwrapped_too() -> None:
    # MiniCPM writes raw values: the wrapped arguments come as Python's repr of a dict
    text = """<function name="get_weather"><param name="properties">{'city': 'Oslo', 'days': 2}</param></function>"""
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Oslo", "days": 2})]


@pytest.mark.parametrize(
    ("arguments", "tool"),
    [
        ('{"input": {"city": "Oslo"}}', Tool("get_weather", parameters={"type": "object", "properties": {"input": {"type": "object"}}})),
        ('{"arguments": {"town": "Oslo"}}', WEATHER),
        ('{"arguments": {"city": "Oslo"}, "days": 2}', WEATHER),
    ],
    ids=["declared-wrapper", "inner-key-undeclared", "more-than-one-argument"],
)
def test_a_wrapper_the_tool_declares_or_that_holds_other_keys_stays(arguments: str, tool: Tool) -> None:
    import json

    text = f'<tool_call>{{"name": "get_weather", "arguments": {arguments}}}</tool_call>'
    parsed = parse_response(text, tools=[tool])
    assert parsed.tool_calls[0].arguments == json.loads(arguments)


def test_a_dsml_value_marked_string_is_typed_by_a_schema_that_says_otherwise() -> None:
    text = (
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
        '<｜DSML｜parameter name="days" string="true">3</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="city" string="true">42</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    )
    assert read(text)[0] == [("get_weather", {"days": 3, "city": "42"}, "deepseek_dsml")]


PLAMO = (
    "Checking.<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|>"
    "<|plamo:begin_tool_name:plamo|>get_weather<|plamo:end_tool_name:plamo|>"
    '<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{"city": "Oslo", "days": 2}<|plamo:end_tool_arguments:plamo|>'
    "<|plamo:end_tool_request:plamo|><|plamo:begin_tool_request:plamo|>"
    "<|plamo:begin_tool_name:plamo|>current_date<|plamo:end_tool_name:plamo|>"
    "<|plamo:begin_tool_arguments:plamo|>{}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|>"
    "<|plamo:end_tool_requests:plamo|>"
)


def test_plamo_requests_are_read_in_order() -> None:
    calls, content = read(PLAMO)
    assert [(name, args) for name, args, _ in calls] == BOTH
    assert {fmt for _, _, fmt in calls} == {"plamo"}
    assert content == "Checking."


def test_plamo_streams_as_it_parses() -> None:
    assert_every_cut_matches(PLAMO, TOOLS, step=41)


@pytest.mark.parametrize(
    ("cut", "ran"),
    [
        ('<|plamo:begin_tool_arguments:plamo|><|plamo:msg|>{"city": "Os', False),
        ("<|plamo:begin_tool_name:plamo|>get_wea", False),
        ('<|plamo:begin_tool_arguments:plamo|>{"city": "Oslo"}<|plamo:end_tool_arguments:plamo|>', True),
    ],
    ids=["mid-arguments", "mid-name", "after-arguments"],
)
def test_a_cut_off_plamo_request_runs_only_when_its_arguments_are_whole(cut: str, ran: bool) -> None:
    head = "<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|>"
    if not cut.startswith("<|plamo:begin_tool_name"):
        head += "<|plamo:begin_tool_name:plamo|>get_weather<|plamo:end_tool_name:plamo|>"
    parsed = parse_response(head + cut, tools=TOOLS)
    assert bool(parsed.tool_calls) is ran
    assert parsed.content == ""
    if not ran:
        assert DiagnosticKind.TRUNCATED in [d.kind for d in parsed.diagnostics]


def test_dsml_string_attributes_without_the_token_keep_their_values() -> None:
    text = '<invoke name="get_weather"><parameter name="city" string="true">42</parameter><parameter name="days" string="false">3</parameter></invoke>'
    assert read(text)[0] == [("get_weather", {"city": "42", "days": 3}, "anthropic_xml")]


def test_a_kimi_section_closed_by_its_end_token_ends_unclosed_reasoning() -> None:
    text = (
        "<think>I should read it.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
        '<|tool_call_argument_begin|>{"city": "Oslo"}<|tool_call_end|><|tool_calls_section_end|>'
    )
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Oslo"})]
    assert parsed.thinking == "I should read it."


STREAM_FLOODS = {
    "glm values never closed": "<tool_call>get_weather<arg_key>city</arg_key><arg_value>x",
    "solar values never closed": "<|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>",
    "plamo arguments cut off": '<|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>get_weather<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|>{"city": "',
    "hunyuan groups of openers": "<tool_calls:opensource><tool_call:opensource>",
}


@pytest.mark.parametrize("unit", list(STREAM_FLOODS.values()), ids=list(STREAM_FLOODS))
def test_streaming_a_call_that_never_closes_stays_linear(unit: str) -> None:
    """A report running to the end of the text was re-read after every lookahead.

    That cost 7.4-8.4x the time for 4x the text at these sizes (10.7x at 96 KB
    to 384 KB); linear reading gives 3.2-3.5x.
    """
    small, large = (unit * (n // len(unit)) for n in (48_000, 192_000))
    stream_cpu_time(unit * 20, TOOLS)  # warm the caches
    ratio = stream_cpu_time(large, TOOLS) / stream_cpu_time(small, TOOLS)
    if ratio >= 6:  # one re-measure: the machine is shared
        ratio = stream_cpu_time(large, TOOLS) / stream_cpu_time(small, TOOLS)
    assert ratio < 6, f"{ratio:.1f}x the time for 4x the text"



@pytest.mark.parametrize(
    ("text", "want", "repair"),
    [
        (
            "<|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>Oslo<|tool_call:end|>"
            "<|tool_call:start|>current_date\n<|tool_call:end|>",
            [("get_weather", {"city": "Oslo"}), ("current_date", {})],
            "missing <|tool_arg:end|>",
        ),
        (
            "<|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>Oslo<|tool_arg:end|>\n"
            "<|tool_call:start|>current_date\n<|tool_call:end|>",
            [("get_weather", {"city": "Oslo"}), ("current_date", {})],
            "before the next call",
        ),
        (
            "<|tool_call:start|>get_weather\n<|tool_arg:start|>ci<|tool_arg:start|>city<|tool_arg:value|>Oslo<|tool_arg:end|>\n<|tool_call:end|>",
            [("get_weather", {"city": "Oslo"})],
            "dropped the unfinished key 'ci'",
        ),
    ],
    ids=["value-ended-by-call-end", "call-ended-by-next-call", "dangling-key"],
)
def test_solar_tokens_end_what_their_closer_left_open(text: str, want: list, repair: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == want
    assert any(repair in r for r in parsed.tool_calls[0].repairs)
    assert_every_cut_matches(text, TOOLS, step=29)


M = "]<]minimax[>["
ORDER = Tool(
    "create_order",
    parameters={
        "type": "object",
        "properties": {
            "user_id": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "shipping": {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "string"}}},
        },
    },
)


def test_minimax_m3_elements_are_typed_by_the_schema_objects_and_lists_included() -> None:
    text = (
        f"<mm:think>Ordering.</mm:think>Placing it.{M}<tool_call>\n{M}<invoke name=\"create_order\">{M}<user_id>42{M}</user_id>"
        f"{M}<tags>{M}<item>a{M}</item>{M}<item>b{M}</item>{M}</tags>"
        f"{M}<shipping>{M}<city>Oslo{M}</city>{M}<zip>0150{M}</zip>{M}</shipping>{M}</invoke>\n{M}</tool_call>"
    )
    parsed = parse_response(text, tools=[ORDER])
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [
        ("create_order", {"user_id": 42, "tags": ["a", "b"], "shipping": {"city": "Oslo", "zip": "0150"}}, "minimax_m3")
    ]
    assert (parsed.content, parsed.thinking) == ("Placing it.", "Ordering.")
    assert_every_cut_matches(text, [ORDER], step=53)


def test_minimax_m3_runs_the_invokes_written_whole_before_a_cut() -> None:
    text = f'{M}<tool_call>\n{M}<invoke name="create_order">{M}<user_id>1{M}</user_id>{M}</invoke>\n{M}<invoke name="create_order">{M}<user_id>2'
    parsed = parse_response(text, tools=[ORDER])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("create_order", {"user_id": 1})]
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.TRUNCATED]
    assert parsed.content == ""


def test_minimax_m3_a_mismatched_closer_is_reported_not_read() -> None:
    text = f'{M}<tool_call>{M}<invoke name="create_order">{M}<user_id>1{M}</tags>{M}</invoke>{M}</tool_call> after'
    parsed = parse_response(text, tools=[ORDER])
    assert parsed.tool_calls == []
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.UNPARSEABLE]
    assert parsed.content == "after"
