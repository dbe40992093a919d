"""K2-V3 (IFM tags, glm's reader), MiniCPM-4 XML, and Step-3 (steptml invokes in DeepSeek tokens).

Vectors marked "fixture" are the test inputs of the reference parsers, cited by
repository and path: sgl-project/sglang test/registered/function_call/
test_k2v3_tool_parser.py and test_minicpm4_xml_detector.py, vllm-project/vllm
tests/tool_parsers/test_step3_tool_parser.py. The others follow each format's
definition (the reference parser named in each family's docstring).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp.parsers import get_family, parse_response
from utp.parsers.base import ParseContext, registered_families
from utp.parsers.streaming import CallReady, ContentDelta, StreamParser, stream_parse
from utp.types import DiagnosticKind, Tool, ToolCall

from .conftest import assert_every_cut_matches, assert_stream_matches, streamed
from .test_scan_filter import _same_scan

FAMILIES = registered_families()
CONTEXTS = [ParseContext(), ParseContext([Tool("get_weather"), Tool("f")])]


def calls(text: str, **kw: object) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, **kw).tool_calls]


def formats(text: str) -> set[str]:
    return {c.format for c in parse_response(text).tool_calls}


def kinds(text: str) -> list[DiagnosticKind]:
    return [d.kind for d in parse_response(text).diagnostics]


def typed(name: str, **props: str) -> list[Tool]:
    return [Tool(name, parameters={"type": "object", "properties": {k: {"type": t} for k, t in props.items()}})]




# ---------------------------------------------------------------- K2-V3 (IFM)

# fixture: sgl-project/sglang test/registered/function_call/test_k2v3_tool_parser.py
K2V3_FIXTURES = [
    (
        "<ifm|tool_call>get_weather<ifm|arg_key>city</ifm|arg_key><ifm|arg_value>Tokyo</ifm|arg_value></ifm|tool_call>",
        [("get_weather", {"city": "Tokyo"})],
        "",
    ),
    ("<ifm|tool_call>get_weather</ifm|tool_call>", [("get_weather", {})], ""),
    (
        "<ifm|tool_call>study_args<ifm|arg_key>user_id</ifm|arg_key><ifm|arg_type>string</ifm|arg_type>"
        "<ifm|arg_value>12345</ifm|arg_value></ifm|tool_call>",
        [("study_args", {"user_id": "12345"})],
        "",
    ),
    (
        "<ifm|think>need lookup</ifm|think>\n<ifm|tool_calls>\n<ifm|tool_call>get_weather<ifm|arg_key>city</ifm|arg_key>"
        "<ifm|arg_value>Tokyo</ifm|arg_value></ifm|tool_call>\n</ifm|tool_calls>",
        [("get_weather", {"city": "Tokyo"})],
        None,  # "<ifm|think>need lookup</ifm|think>" until <ifm|think> is a reasoning tag, "" after
    ),
    ('<ifm|tool_call>{"name": "get_weather", "arguments": {"city": "Tokyo"}}</ifm|tool_call>', [("get_weather", {"city": "Tokyo"})], ""),
    (
        '<ifm|tool_call>{"name": "get_weather", "arguments": "{\\"city\\": \\"Tokyo\\"}"}</ifm|tool_call>',
        [("get_weather", {"city": "Tokyo"})],
        "",
    ),
    (
        '<ifm|tool_call>[{"name": "get_weather", "arguments": {"city": "Tokyo"}}, '
        '{"name": "get_weather", "arguments": {"city": "Osaka"}}]</ifm|tool_call>',
        [("get_weather", {"city": "Tokyo"}), ("get_weather", {"city": "Osaka"})],
        "",
    ),
]


@pytest.mark.parametrize(("text", "want", "content"), K2V3_FIXTURES)
def test_k2v3_fixtures(text: str, want: list, content: str | None) -> None:
    parsed = parse_response(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == want
    assert parsed.content == content if content is not None else parsed.content in ("<ifm|think>need lookup</ifm|think>", "")
    assert {c.format for c in parsed.tool_calls} == {"k2_v3"}
    assert parsed.diagnostics == []


def test_k2v3_values_typed_by_schema_then_inline_type() -> None:
    # fixture: days=3 with an integer schema
    text = "<ifm|tool_call>get_weather<ifm|arg_key>days</ifm|arg_key><ifm|arg_value>3</ifm|arg_value></ifm|tool_call>"
    assert calls(text, tools=typed("get_weather", days="integer")) == [("get_weather", {"days": 3})]
    assert calls(text, tools=typed("get_weather", days="string")) == [("get_weather", {"days": "3"})]
    # the schema wins over <ifm|arg_type>; without a schema the inline type decides (K2-v3 detector's _coerce_value)
    inline = (
        "<ifm|tool_call>f<ifm|arg_key>n</ifm|arg_key><ifm|arg_type>integer</ifm|arg_type>"
        "<ifm|arg_value>7</ifm|arg_value></ifm|tool_call>"
    )
    assert calls(inline) == [("f", {"n": 7})]
    assert calls(inline, tools=typed("f", n="string")) == [("f", {"n": "7"})]


def test_k2v3_group_with_several_calls_and_prose() -> None:
    text = (
        "Checking.\n<ifm|tool_calls>\n"
        "<ifm|tool_call>a<ifm|arg_key>x</ifm|arg_key><ifm|arg_value>1</ifm|arg_value></ifm|tool_call>\n"
        '<ifm|tool_call>{"name": "b", "arguments": {}}</ifm|tool_call>\n'
        "</ifm|tool_calls>\nDone."
    )
    parsed = parse_response(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("a", {"x": 1}), ("b", {})]
    assert parsed.content == "Checking.\nDone."


def test_k2v3_truncated_is_reported() -> None:
    assert kinds("<ifm|tool_call>get_weather<ifm|arg_key>city</ifm|arg_key><ifm|arg_value>Tok") == [DiagnosticKind.TRUNCATED]
    assert kinds("Sure. <ifm|tool_calls>\n") == [DiagnosticKind.TRUNCATED]
    assert calls("Sure. <ifm|tool_call>") == []


@pytest.mark.parametrize(
    "text",
    [
        "The K2 template opens calls with <ifm|tool_call> and closes them with </ifm|tool_call>.",
        "A group is <ifm|tool_calls> then calls.",
        "<ifm|tool_call><b>bold</b></ifm|tool_call>",
        '<ifm|tool_call>"quoted"</ifm|tool_call>',
    ],
)
def test_k2v3_prose_stays_content(text: str) -> None:
    parsed = parse_response(text)
    assert parsed.tool_calls == [] and parsed.content == text and parsed.diagnostics == []


def test_glm_unchanged_by_shared_reader() -> None:
    text = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Tokyo</arg_value>\n</tool_call>"
    parsed = parse_response(text)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [("get_weather", {"city": "Tokyo"}, "glm")]
    # <arg_type> is the IFM dialect's only
    odd = "<tool_call>f<arg_key>n</arg_key><arg_type>string</arg_type><arg_value>1</arg_value></tool_call>"
    assert parse_response(odd).tool_calls[0].repairs


# ---------------------------------------------------------------- MiniCPM-4 XML

# fixture: sgl-project/sglang test/registered/function_call/test_minicpm4_xml_detector.py
MINICPM_FIXTURES = [
    (
        'Intro before.\n<function name="get_weather"><param name="city">上海</param><param name="date">2024-06-27</param></function>\nOutro after.\n',
        [("get_weather", {"city": "上海", "date": "2024-06-27"})],
        "Intro before.\nOutro after.\n",
    ),
    (
        '<function name="get_weather"><param name="city"><![CDATA[北\n京]]></param><param name="date">2024-06-27</param></function>\n',
        [("get_weather", {"city": "北\n京", "date": "2024-06-27"})],
        "",
    ),
    (
        '<function name="sum_values"><param name="nums">[1, 2, 3]</param><param name="exact">true</param></function>\n',
        [("sum_values", {"nums": [1, 2, 3], "exact": True})],
        "",
    ),
    (
        'Head\n<function name="get_weather"><param name="city">北京</param></function>\nTXT\n'
        '<function name="sum_values"><param name="nums">[7,8,9]</param><param name="exact">false</param></function>\nTail\n',
        [("get_weather", {"city": "北京"}), ("sum_values", {"nums": [7, 8, 9], "exact": False})],
        "Head\nTXT\nTail\n",
    ),
    ('<function name="noop"></function>\n', [("noop", {})], ""),
]


@pytest.mark.parametrize(("text", "want", "content"), MINICPM_FIXTURES)
def test_minicpm4_fixtures(text: str, want: list, content: str) -> None:
    parsed = parse_response(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == want
    assert parsed.content == content
    assert {c.format for c in parsed.tool_calls} == {"minicpm4"}


def test_minicpm4_call_without_closer_is_read_only_when_its_last_value_is_whole() -> None:
    # fixture: SGLang drops a call missing </function>; UTP reads one cut right after a whole
    # value, as it does a JSON call (the rule and its length-limit exception: test_output_stopped_inside_a_call.py)
    parsed = parse_response('<function name="get_weather"><param name="city">北京</param>')
    assert [(c.name, c.arguments, c.repairs) for c in parsed.tool_calls] == [("get_weather", {"city": "北京"}, ["output ended before </function>"])]
    parsed = parse_response('<function name="get_weather"><param name="city">北')
    assert parsed.tool_calls == []
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.TRUNCATED]


def test_minicpm4_values_trimmed_typed_and_cdata_verbatim() -> None:
    text = '<function name="f"><param name="n"> 42 </param><param name="s">  00123 </param><param name="c"><![CDATA[  a</param>b ]]></param></function>'
    assert calls(text, tools=typed("f", n="integer", s="string", c="string")) == [("f", {"n": 42, "s": "00123", "c": "  a</param>b "})]
    single = "<function name='f'>\n  <param name='q'>x</param>\n</function>"
    assert calls(single) == [("f", {"q": "x"})]


@pytest.mark.parametrize(
    ("text", "want", "repaired"),
    [
        # Claude's parameter element inside MiniCPM's function element (a leaked-markup shape other
        # projects' scrubbers test for: <function name="execute"><parameter name="command">…)
        ('<function name="execute">\n<parameter name="command">ls -la</parameter>\n</function>', [("execute", {"command": "ls -la"})], False),
        ('<function name="f"><param name="a">1</param><parameter name="b">x</parameter></function>', [("f", {"a": 1, "b": "x"})], False),
        ('<function name="get_weather">{"city": "Paris"}</function>', [("get_weather", {"city": "Paris"})], False),
        ('<function name="get_weather">\n{"city": "Paris",}\n</function>', [("get_weather", {"city": "Paris"})], True),
    ],
)
def test_minicpm4_drifted_bodies(text: str, want: list, repaired: bool) -> None:
    parsed = parse_response(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == want
    assert parsed.content == "" and bool(parsed.tool_calls[0].repairs) == repaired


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('<function name="get_weather">{"city": "Par', DiagnosticKind.TRUNCATED),
        ('<function name="get_weather">{"city": "Paris"} and then</function>', DiagnosticKind.UNPARSEABLE),
    ],
)
def test_minicpm4_json_body_that_cannot_run_is_reported(text: str, kind: DiagnosticKind) -> None:
    parsed = parse_response(text)
    assert parsed.tool_calls == [] and [d.kind for d in parsed.diagnostics] == [kind]


@pytest.mark.parametrize(
    "text",
    [
        'Run it.\n<function name="execute">\n<parameter name="command">ls -la</parameter>\n</function>\nDone.',
        'Sure: <function name="get_weather">{"city": "Paris"}</function> ok',
        '<invoke name="get_weather">{"city": "Paris"}</invoke>\nthen',
    ],
)
def test_drifted_xml_bodies_stream_like_one_shot(text: str) -> None:
    assert_every_cut_matches(text, None, step=5)


def test_claude_invoke_with_a_json_body() -> None:
    """Claude's invoke tag with JSON arguments inside: the arguments, not an empty call."""
    for text in ('<invoke name="get_weather">{"city": "Paris"}</invoke>', '<function_calls>\n<invoke name="get_weather">\n{"city": "Paris"}\n</invoke>\n</function_calls>'):
        parsed = parse_response(text)
        assert [(c.name, c.arguments, c.repairs) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"}, [])]
        assert parsed.content == ""


@pytest.mark.parametrize(
    "text",
    [
        'In HTML-ish docs, <function name="x"> introduces a function.',
        '<function name="x">plain text</function>',
        "<function> tags are not used here.",
        "<function=get_weather>",  # Qwen3-Coder / Functionary's spelling: not this family
    ],
)
def test_minicpm4_prose_stays_content(text: str) -> None:
    parsed = parse_response(text)
    assert parsed.tool_calls == [] and "minicpm4" not in {d.family for d in parsed.diagnostics}
    assert parsed.content == text.strip() or parsed.diagnostics


def test_qwen3_coder_function_tag_unaffected() -> None:
    text = "<tool_call>\n<function=get_weather>\n<parameter=city>\nTokyo\n</parameter>\n</function>\n</tool_call>"
    assert formats(text) == {"qwen3_coder"} and calls(text) == [("get_weather", {"city": "Tokyo"})]


# ---------------------------------------------------------------- Step-3 (deepseek family)

# fixture: vllm-project/vllm tests/tool_parsers/test_step3_tool_parser.py
STEP3_FIXTURES = [
    (
        '<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="get_weather"><steptml:parameter name="city">Tokyo'
        "</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
        [("get_weather", {"city": "Tokyo"})],
        "",
    ),
    (
        '<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="get_weather"><steptml:parameter name="city">Tokyo'
        '</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_sep｜><｜tool_call_begin｜><steptml:invoke name="get_time">'
        '<steptml:parameter name="timezone">Asia/Tokyo</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>',
        [("get_weather", {"city": "Tokyo"}), ("get_time", {"timezone": "Asia/Tokyo"})],
        "",
    ),
    (
        '<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="refresh"></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>',
        [("refresh", {})],
        "",
    ),
    (
        'Let me check the weather for you.\n\n<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="get_weather">'
        '<steptml:parameter name="city">Tokyo</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>\n\n'
        "I'll get that information.",
        [("get_weather", {"city": "Tokyo"})],
        "Let me check the weather for you.\nI'll get that information.",
    ),
    (
        '<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="test_function"><steptml:parameter name="quoted">'
        'He said "hello"</steptml:parameter><steptml:parameter name="path">C:\\Users\\file.txt</steptml:parameter>'
        '<steptml:parameter name="newline">line1\nline2</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>',
        [("test_function", {"quoted": 'He said "hello"', "path": "C:\\Users\\file.txt", "newline": "line1\nline2"})],
        "",
    ),
]


@pytest.mark.parametrize(("text", "want", "content"), STEP3_FIXTURES)
def test_step3_fixtures(text: str, want: list, content: str) -> None:
    parsed = parse_response(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == want
    assert parsed.content == content
    assert parsed.diagnostics == []


def test_step3_function_sep_name_line_and_schema_types() -> None:
    # fixture: the "function<｜tool_sep｜>NAME\n<steptml:invoke ...>" variant, int/bool typed by schema
    text = (
        '<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>edit_file\n<steptml:invoke name="edit_file">'
        '<steptml:parameter name="old_string">    if x:</steptml:parameter><steptml:parameter name="indent"> 4 </steptml:parameter>'
        '<steptml:parameter name="enabled"> true </steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>'
    )
    tools = typed("edit_file", old_string="string", indent="integer", enabled="boolean")
    assert calls(text, tools=tools) == [("edit_file", {"old_string": "    if x:", "indent": 4, "enabled": True})]


def test_step3_canonical_template_spelling() -> None:
    # the chat template's form (vLLM step3 parser docstring): function<｜tool_sep｜> then the invoke, newlines between
    text = (
        "Let me help you.\n<｜tool_calls_begin｜>\n<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"search\">\n"
        '<steptml:parameter name="query">rust programming</steptml:parameter>\n<steptml:parameter name="limit">10</steptml:parameter>\n'
        "</steptml:invoke><｜tool_call_end｜>\n<｜tool_calls_end｜>\nHere are the results..."
    )
    parsed = parse_response(text, tools=typed("search", query="string", limit="integer"))
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("search", {"query": "rust programming", "limit": 10})]
    assert parsed.content == "Let me help you.\nHere are the results..."


def test_step3_truncated_and_broken() -> None:
    assert kinds('<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="f"><steptml:parameter name="a">1') != []
    assert calls('<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="f"><steptml:parameter name="a">1') == []


def test_deepseek_json_calls_unchanged() -> None:
    text = (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Tokyo\"}\n```"
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    )
    assert calls(text) == [("get_weather", {"city": "Tokyo"})]
    assert calls('<｜tool▁call▁begin｜>f<｜tool▁sep｜>{"a": 1}<｜tool▁call▁end｜>') == [("f", {"a": 1})]


# ---------------------------------------------------------------- streaming, heads, rendering

STREAM_TEXTS = [
    *(t for t, _, _ in K2V3_FIXTURES),
    *(t for t, _, _ in MINICPM_FIXTURES),
    *(t for t, _, _ in STEP3_FIXTURES),
    'Docs: <function name="x"> opens it. More prose follows here, long enough to settle.',
    "<ifm|tool_call><b>x</b></ifm|tool_call> and more",
    "<ifm|tool_calls> nothing",
]


@pytest.mark.parametrize("text", STREAM_TEXTS)
def test_streaming_equals_one_shot(text: str) -> None:
    assert_stream_matches(text)


def test_minicpm4_prose_streams_before_the_end() -> None:
    text = 'Docs: <function name="x"> opens a function element in that dialect.'
    released = "".join(e.text for e in StreamParser().feed(text) if isinstance(e, ContentDelta))
    assert "opens a function" in released


HEADED = [
    ("k2_v3", "<ifm|tool_call>"),
    ("k2_v3", "<ifm|tool_calls>"),
    ("minicpm4", "<function "),
    ("minicpm4", "<function\n"),
    ("deepseek", "<｜tool_call_begin｜>"),
    ("deepseek", "<|tool_call_begin|>"),
]
BODIES = [
    "", " ", "\n", "x", "{", "[", "<", '"x"', "<ifm|tool_call>", "\n<ifm|tool_call>x</ifm|tool_call>", "f<ifm|arg_key>",
    'name="f">', 'name="f"><param name="k">v</param></function>', "name='f'>\n</function>", 'name="f"> text', 'name = "f" >',
    'name="f" x="1">', "<steptml:invoke name=\"f\"></steptml:invoke>", "\n<steptml:invoke ", "function<｜tool_sep｜>f\n<steptml:invoke name=\"f\">",
    "<｜tool_call_end｜>", "\u00a0x", "\u2028<",
]


@pytest.mark.parametrize("which", HEADED)
@pytest.mark.parametrize("body", BODIES)
def test_head_is_necessary_for_extract(which: tuple[str, str], body: str) -> None:
    family, trigger = which
    for prefix in ("", "ok ", "`"):
        text = prefix + trigger + body
        pos = len(prefix)
        if re.compile(FAMILIES[family].trigger_heads[trigger]).match(text, pos + len(trigger)) is None:
            for ctx in CONTEXTS:
                assert FAMILIES[family].extract(text, pos, trigger, ctx) is None, (family, text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parts=st.lists(
        st.sampled_from([t for _, t in HEADED] + BODIES + ["</ifm|tool_call>", "</ifm|tool_calls>", "<｜tool_calls_begin｜>", " prose "]),
        max_size=10,
    )
)
def test_filtered_scan_equals_literal_scan(parts: list[str]) -> None:
    text = "".join(parts)
    for ctx in CONTEXTS:
        _same_scan(text, ctx)


@pytest.mark.parametrize("family", ["k2_v3", "minicpm4"])
def test_render_round_trips(family: str) -> None:
    want = [ToolCall("get_weather", {"city": " Tokyo <b>", "n": [1, {"x": None}]}), ToolCall("f", {})]
    rendered = get_family(family).render(want)
    tools = [Tool("get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}, "n": {"type": "array"}}}), Tool("f")]
    assert calls(rendered, tools=tools) == [(c.name, c.arguments) for c in want]
    assert parse_response(rendered, tools=tools).content == ""
