"""Tags as served models and XML-minded clients vary them.

* Hunyuan's key/value tags carrying a call id where the release writes
  ``:opensource`` (``<tool_calls:abc123>``), and Hy3's ``parameter: KEY: VALUE``
  argument lines under the name;
* arguments written as XML elements inside elements (``<args><k>v</k></args>``),
  leaves typed by a ``type`` attribute;
* a lead-in ending in the full-width colon Chinese text writes (``我来查一下：``),
  and Chinese words that show a sample rather than make a call.

Each with the prose or data that must stay what it is.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.types import DiagnosticKind, Tool

from .conftest import assert_every_cut_matches, assert_stream_matches

WEATHER = Tool(
    "get_weather",
    parameters={"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
)
FILES = [
    Tool("read_file", parameters={"type": "object", "properties": {"path": {"type": "string"}}}),
    Tool("write_file", parameters={"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}),
]


def _calls(text: str, tools: list | None) -> list[tuple[str, dict, str]]:
    return [(c.name, c.arguments, c.format) for c in parse_response(text, tools=tools).tool_calls]


# --------------------------------------------------------------------------- Hunyuan suffixes

HY_ID = (
    "Checking.<tool_calls:call_7f3a><tool_call:call_7f3a>get_weather<tool_sep:call_7f3a>"
    "<arg_key:call_7f3a>city</arg_key:call_7f3a><arg_value:call_7f3a>Oslo</arg_value:call_7f3a>"
    "<arg_key:call_7f3a>days</arg_key:call_7f3a><arg_value:call_7f3a>2</arg_value:call_7f3a>"
    "</tool_call:call_7f3a></tool_calls:call_7f3a>"
)


@pytest.mark.parametrize("tools", [[WEATHER], None])
def test_hunyuan_tags_suffixed_with_a_call_id(tools: list | None) -> None:
    assert _calls(HY_ID, tools) == [("get_weather", {"city": "Oslo", "days": 2}, "hunyuan")]
    assert parse_response(HY_ID, tools=tools).content == "Checking."


def test_hunyuan_with_a_call_id_streams_as_one_shot() -> None:
    assert_every_cut_matches(HY_ID, [WEATHER], step=11)


def test_a_call_id_suffix_cut_after_a_whole_value_is_read_with_the_repair() -> None:
    cut = HY_ID[: HY_ID.index("<arg_key:call_7f3a>days")]
    parsed = parse_response(cut, tools=[WEATHER])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Oslo"})]
    assert any("output ended before </tool_call:call_7f3a>" in r for r in parsed.tool_calls[0].repairs)


def test_a_closer_under_another_suffix_does_not_close_the_call() -> None:
    text = "<tool_call:a1>get_weather<arg_key:a1>city</arg_key:a1><arg_value:a1>Oslo</arg_value:b2></tool_call:b2>"
    parsed = parse_response(text, tools=[WEATHER])
    assert parsed.tool_calls == []
    assert DiagnosticKind.TRUNCATED in [d.kind for d in parsed.diagnostics]


HY3_LINES = (
    "I'll read the target file.\n<tool_calls:abc123>\n<tool_call:abc123>read_file\nparameter: path: docs/NEW-REPO.md\n"
    "</tool_call:abc123>\n<tool_call:abc123>write_file\nparameter: path: b.txt\nparameter: content: first line\nsecond line\n"
    "</tool_call:abc123>\n</tool_calls:abc123>"
)


@pytest.mark.parametrize("tools", [FILES, None])
def test_hy3_parameter_lines_under_the_name(tools: list | None) -> None:
    assert _calls(HY3_LINES, tools) == [
        ("read_file", {"path": "docs/NEW-REPO.md"}, "hunyuan"),
        ("write_file", {"path": "b.txt", "content": "first line\nsecond line"}, "hunyuan"),
    ]
    assert_stream_matches(HY3_LINES)


def test_parameter_lines_the_output_ends_inside_are_not_run() -> None:
    parsed = parse_response(HY3_LINES[: HY3_LINES.index("</tool_call:abc123>")], tools=FILES)
    assert parsed.tool_calls == []


@pytest.mark.parametrize(
    "prose",
    [
        "Hunyuan tags look like <tool_call:opensource> and <tool_calls:opensource>; nothing else here.",
        "The template writes `<tool_call:ID>` before the name; no call follows.",
        "Use the <tool_call:x> marker, then the name of the tool in words you like.",
    ],
)
def test_prose_naming_the_tags_is_no_call(prose: str) -> None:
    parsed = parse_response(prose, tools=FILES)
    assert parsed.tool_calls == []
    assert parsed.content == prose


# --------------------------------------------------------------------------- nested elements

SCALE = Tool(
    "k8s.scale",
    parameters={"type": "object", "properties": {"namespace": {"type": "string"}, "deployment": {"type": "string"}, "replicas": {"type": "integer"}}},
)


def test_arguments_wrapped_again_in_args_with_typed_leaves() -> None:
    text = (
        "<tool_call>\n  <tool_name>k8s.scale</tool_name>\n  <tool_arguments>\n    <args>\n"
        "      <namespace>ai-apps</namespace>\n      <deployment>vllm</deployment>\n"
        '      <replicas type="int">1</replicas>\n    </args>\n  </tool_arguments>\n</tool_call>'
    )
    parsed = parse_response(text, tools=[SCALE])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("k8s.scale", {"namespace": "ai-apps", "deployment": "vllm", "replicas": 1})]
    assert "arguments wrapped again in <args>" in parsed.tool_calls[0].repairs
    assert_stream_matches(text)


@pytest.mark.parametrize(
    ("attribute", "raw", "value"),
    [("bool", "true", True), ("float", "3.14", 3.14), ("integer", "42", 42), ("string", "42", "42")],
)
def test_a_type_attribute_types_its_leaf(attribute: str, raw: str, value: object) -> None:
    text = f'<tool_call><name>config</name><arguments><v type="{attribute}">{raw}</v></arguments></tool_call>'
    assert _calls(text, None) == [("config", {"v": value}, "hermes")]


def test_markup_an_argument_holds_stays_its_text() -> None:
    text = "<tool_name>write_file</tool_name>\n<arguments><path>a.html</path><content><p>Hello</p><p>World</p></content></arguments>"
    assert _calls(text, None) == [("write_file", {"path": "a.html", "content": "<p>Hello</p><p>World</p>"}, "name_element")]


def test_a_value_mixing_markup_and_text_stays_text() -> None:
    text = "<tool_call><name>post</name><arguments><body><b>bold</b> and plain</body></arguments></tool_call>"
    assert _calls(text, None) == [("post", {"body": "<b>bold</b> and plain"}, "hermes")]


# --------------------------------------------------------------------------- full-width lead-ins

WEATHER_CALL = '{"name": "get_weather", "arguments": {"city": "Paris"}}'


@pytest.mark.parametrize(
    "text",
    [
        f"1\uff1a{WEATHER_CALL}",  # FastGPT's answer prefix with the full-width colon
        f"\u6211\u6765\u67e5\u4e00\u4e0b\u5929\u6c14\uff1a\n```json\n{WEATHER_CALL}\n```\n\u8bf7\u7a0d\u7b49\u3002",  # "I'll check the weather:" … "one moment."
    ],
)
def test_a_lead_in_ending_in_the_full_width_colon_introduces_a_call(text: str) -> None:
    assert [(name, arguments) for name, arguments, _ in _calls(text, [WEATHER])] == [("get_weather", {"city": "Paris"})]
    assert_stream_matches(text)


@pytest.mark.parametrize(
    "lead_in",
    [
        "\u8fd4\u56de\u793a\u4f8b\uff1a",  # "Example of what comes back:"
        "\u6211\u7ed9\u4f60\u4e00\u4e2a\u793a\u4f8b\uff1a",  # "I'll give you an example:"
        "\u683c\u5f0f\u5982\u4e0b\uff1a",  # "The format is as follows:"
    ],
)
def test_a_chinese_lead_in_showing_a_sample_keeps_the_fence_a_sample(lead_in: str) -> None:
    text = f"{lead_in}\n```json\n{WEATHER_CALL}\n```\n\u5c31\u662f\u8fd9\u6837\u3002"
    assert _calls(text, [WEATHER]) == []


# --------------------------------------------------------------------------- a tool element named by attribute

SEARCH = Tool("search_web", parameters={"type": "object", "properties": {"query": {"type": "string"}, "count": {"type": "integer"}}})


@pytest.mark.parametrize(
    "text",
    [
        '<tool name="search_web">\n  <parameters>\n    <query>weather in Suzhou</query>\n    <count>5</count>\n  </parameters>\n</tool>',
        '<tool name="search_web"><query>weather in Suzhou</query><count>5</count></tool>',
        '<tool name="search_web"><parameter name="query">weather in Suzhou</parameter><parameter name="count">5</parameter></tool>',
        '<function_call name="search_web"><parameters><parameter name="query">weather in Suzhou</parameter>'
        '<parameter name="count">5</parameter></parameters></function_call>',
        '<tool_call name="search_web">\n<query><![CDATA[weather in Suzhou]]></query>\n<count>5</count>\n</tool_call>',
    ],
)
def test_a_tool_element_named_by_attribute_with_its_arguments_as_elements(text: str) -> None:
    assert _calls(text, [SEARCH]) == [("search_web", {"query": "weather in Suzhou", "count": 5}, "named_tool_element")]
    assert_every_cut_matches(text, [SEARCH], step=13)


def test_several_tool_elements_in_a_wrapper_are_each_a_call() -> None:
    text = '<calls><tool name="search_web"><parameters><query>a</query></parameters></tool><tool name="search_web"><parameters><query>b</query></parameters></tool></calls>'
    assert [(n, a) for n, a, _ in _calls(text, [SEARCH])] == [("search_web", {"query": "a"}), ("search_web", {"query": "b"})]


@pytest.mark.parametrize(
    ("text", "tools"),
    [
        ('<tool name="javac"><arg>-g</arg><src>Main.java</src></tool>', None),  # a build file's markup, nothing offered
        ('<tool name="delete_all"><parameters><force>true</force></parameters></tool>', [SEARCH]),  # not offered
        ('<tool name="search_web">Use this tool to search: <query>x</query></tool>', [SEARCH]),  # prose in the body
        ('<tool name="search_web"><parameters><query>x</query></parameters>', [SEARCH]),  # never closed
    ],
)
def test_tool_elements_that_are_markup_stay_content(text: str, tools: list | None) -> None:
    assert _calls(text, tools) == []


@pytest.mark.parametrize(
    "text",
    [
        '\u597d\u7684\uff0c\u6211\u6765\u67e5\u4e00\u4e0b\u3002\nget_weather(city="Paris")',  # "OK, let me check." then the call line
        '\u8bf7\u7a0d\u7b49\uff01\nget_weather city="Paris"',  # "One moment!" then a command line
    ],
)
def test_a_call_line_after_a_sentence_ended_with_a_full_width_mark(text: str) -> None:
    assert [(n, a) for n, a, _ in _calls(text, [WEATHER])] == [("get_weather", {"city": "Paris"})]
    assert_stream_matches(text)


def test_a_call_line_after_a_chinese_sentence_that_goes_on_is_shown_not_used() -> None:
    text = '\u4f8b\u5982\uff1a\nget_weather(city="Paris")\n\u8fd9\u5c31\u662f\u8c03\u7528\u683c\u5f0f\u3002'  # "e.g.:" call "this is the format."
    assert _calls(text, [WEATHER]) == []
