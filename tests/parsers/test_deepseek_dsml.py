"""DeepSeek V3.2 / V4 / V4.1 DSML calls (family ``deepseek_dsml``).

The format, from DeepSeek's reference encoders:
- V3.2 ``encoding/encoding_dsv32.py`` (huggingface.co/deepseek-ai/DeepSeek-V3.2): ``dsml_token = "｜DSML｜"``,
  block ``<{dsml}function_calls>``, ``<{dsml}invoke name="{name}">``,
  ``<{dsml}parameter name="{key}" string="{true|false}">{value}</{dsml}parameter>``; a string value is
  written as is, anything else as JSON.
- V4 ``encoding/encoding_dsv4.py``: the same with the block named ``tool_calls``.
- V4.1 ``encoding/encoding.py`` (DeepSeek-V4.1-Flash): ``tool_calls_block_name = " calls"``,
  ``tool_call_tag_name = " invoke"``, ``tool_parameter_tag_name = " parameter"`` (spaced tags).
Variants real outputs contain, from the reference parsers and their bug reports: ASCII bars
(vLLM "legacy direct" DSML, local-inference-lab/vllm#417), doubled bars ``<｜｜DSML｜｜`` (outputs quoted
in AppsGanin/ai-free-vscode#17 and diegosouzapw/OmniRoute#13930), bare invokes without the block
(sgl-project/sglang#40236), misspelled blocks ``toolcalls`` / ``tool`` (vLLM #56141, DeepSeek-V4-Flash
with DSpark), and a JSON object straight inside the invoke (SGLang's DeepSeekV32Detector, "format 2").
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp.parsers import get_family, parse_response
from utp.parsers.base import ParseContext, registered_families
from utp.parsers.scanloop import scan_text
from utp.parsers.families import anthropic_xml, deepseek_dsml
from utp.parsers.streaming import CallReady, ContentDelta, stream_parse
from utp.types import DiagnosticKind, Tool, ToolCall

from .test_scan_filter import CONTEXTS, SCANNER, _outcome, _same_scan

FAMILY = registered_families()["deepseek_dsml"]
D = "\uff5cDSML\uff5c"  # the token the tokenizer writes (U+FF5C bars)
WEATHER = {
    "name": "get_weather",
    "parameters": {
        "type": "object",
        "properties": {"location": {"type": "string"}, "date": {"type": "string"}, "days": {"type": "integer"}},
    },
}


def calls_of(text: str, **kw: object) -> list[tuple[str, dict, str]]:
    return [(c.name, c.arguments, c.format) for c in parse_response(text, **kw).tool_calls]


# ---------------------------------------------------------------- the definition


def test_v32_function_calls_block() -> None:
    # the example in vLLM's DeepSeekV32ToolParser docstring, as encoding_dsv32.py lays it out
    text = (
        f"<{D}function_calls>\n"
        f'<{D}invoke name="get_weather">\n'
        f'<{D}parameter name="location" string="true">杭州</{D}parameter>\n'
        f'<{D}parameter name="date" string="true">2024-01-16</{D}parameter>\n'
        f"</{D}invoke>\n"
        f'<{D}invoke name="get_weather">\n'
        f'<{D}parameter name="location" string="true">北京</{D}parameter>\n'
        f'<{D}parameter name="date" string="true">2024-01-16</{D}parameter>\n'
        f"</{D}invoke>\n"
        f"</{D}function_calls>"
    )
    parsed = parse_response(text, tools=[WEATHER])
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [
        ("get_weather", {"location": "杭州", "date": "2024-01-16"}, "deepseek_dsml"),
        ("get_weather", {"location": "北京", "date": "2024-01-16"}, "deepseek_dsml"),
    ]
    assert parsed.content == "" and parsed.diagnostics == []


def test_v4_tool_calls_block_with_json_values() -> None:
    # encoding_dsv4.py TOOLS_TEMPLATE: string="false" values are JSON (numbers, booleans, arrays, objects)
    text = (
        "Let me check.\n\n"
        f"<{D}tool_calls>\n"
        f'<{D}invoke name="f">\n'
        f'<{D}parameter name="n" string="false">3</{D}parameter>\n'
        f'<{D}parameter name="ok" string="false">true</{D}parameter>\n'
        f'<{D}parameter name="xs" string="false">[1, "a"]</{D}parameter>\n'
        f'<{D}parameter name="o" string="false">{{"k": null}}</{D}parameter>\n'
        f'<{D}parameter name="s" string="true">  two  spaces </{D}parameter>\n'
        f"</{D}invoke>\n"
        f"</{D}tool_calls>"
    )
    parsed = parse_response(text)
    assert calls_of(text) == [
        ("f", {"n": 3, "ok": True, "xs": [1, "a"], "o": {"k": None}, "s": "  two  spaces "}, "deepseek_dsml")
    ]
    assert parsed.content == "Let me check."


def test_string_true_is_text_unless_the_schema_types_it_otherwise() -> None:
    # string="true" says the text was written raw; the tool's schema still decides its type
    # (vLLM's DeepSeek V3.2 parser coerces "42" for an integer parameter too)
    text = f'<{D}tool_calls><{D}invoke name="get_weather"><{D}parameter name="days" string="true">42</{D}parameter></{D}invoke></{D}tool_calls>'
    assert calls_of(text, tools=[WEATHER])[0][1] == {"days": 42}
    assert calls_of(text)[0][1] == {"days": "42"}  # no schema: the text as written


def test_no_string_attribute_reads_like_claude_values() -> None:
    # no attribute: typed by the schema, else JSON when the text is JSON (anthropic_xml's rule)
    body = f'<{D}parameter name="days">5</{D}parameter><{D}parameter name="location">7</{D}parameter>'
    text = f'<{D}tool_calls><{D}invoke name="get_weather">{body}</{D}invoke></{D}tool_calls>'
    assert calls_of(text, tools=[WEATHER])[0][1] == {"days": 5, "location": "7"}
    assert calls_of(text)[0][1] == {"days": 5, "location": 7}


def test_v41_spaced_tags() -> None:
    # DeepSeek-V4.1-Flash encoding.py: "<｜DSML｜ calls>", "<｜DSML｜ invoke ...>", "<｜DSML｜ parameter ...>"
    text = (
        f"<{D} calls>\n<{D} invoke name=\"Bash\">\n"
        f'<{D} parameter name="command" string="true">ls -la</{D} parameter>\n'
        f'<{D} parameter name="timeout" string="false">30</{D} parameter>\n'
        f"</{D} invoke>\n</{D} calls>"
    )
    parsed = parse_response(text)
    assert calls_of(text) == [("Bash", {"command": "ls -la", "timeout": 30}, "deepseek_dsml")]
    assert parsed.content == ""


@pytest.mark.parametrize("mark", ["|DSML|", "\uff5c\uff5cDSML\uff5c\uff5c", "||DSML||"])
def test_other_bar_spellings(mark: str) -> None:
    # ASCII bars (vLLM's legacy spelling), doubled bars (chat.deepseek.com outputs, e.g. ai-free-vscode#17:
    # <｜｜DSML｜｜tool_calls> <｜｜DSML｜｜invoke name="grep_search"> ... string="false">false</｜｜DSML｜｜parameter>)
    text = (
        f'<{mark}tool_calls> <{mark}invoke name="grep_search"> '
        f'<{mark}parameter name="query" string="true">riskCRUD</{mark}parameter> '
        f'<{mark}parameter name="isRegexp" string="false">false</{mark}parameter> '
        f"</{mark}invoke> </{mark}tool_calls>"
    )
    parsed = parse_response(text)
    assert calls_of(text) == [("grep_search", {"query": "riskCRUD", "isRegexp": False}, "deepseek_dsml")]
    assert parsed.content == ""


def test_string_attribute_before_name_and_single_quotes() -> None:
    text = f"<{D}tool_calls><{D}invoke name='f'><{D}parameter string='false' name='days'>2</{D}parameter></{D}invoke></{D}tool_calls>"
    assert calls_of(text) == [("f", {"days": 2}, "deepseek_dsml")]


def test_json_object_inside_the_invoke() -> None:
    # SGLang DeepSeekV32Detector "Format 2 - Direct JSON"; also what SGLang's V4.1 structural tag emits
    text = f'<{D}function_calls>\n<{D}invoke name="get_weather">\n{{"location": "San Francisco", "note": "</{D}invoke> inside"}}\n</{D}invoke>\n</{D}function_calls>'
    parsed = parse_response(text)
    assert calls_of(text) == [
        ("get_weather", {"location": "San Francisco", "note": f"</{D}invoke> inside"}, "deepseek_dsml")
    ]
    assert parsed.content == "" and parsed.diagnostics == []


@pytest.mark.parametrize("opener", ["toolcalls", "tool"])
def test_misspelled_block_token(opener: str) -> None:
    # vLLM #56141: DeepSeek-V4-Flash (DSpark) writes <｜DSML｜toolcalls> / <｜DSML｜tool> and still closes tool_calls
    text = f'Ok.\n<{D}{opener}>\n<{D}invoke name="get_weather">\n<{D}parameter name="location" string="true">Seoul</{D}parameter>\n</{D}invoke>\n</{D}tool_calls>\nDone.'
    parsed = parse_response(text)
    assert calls_of(text) == [("get_weather", {"location": "Seoul"}, "deepseek_dsml")]
    assert parsed.content == "Ok.\nDone."


def test_bare_invokes_without_the_block() -> None:
    # sglang#40236 / local-inference-lab/vllm#417: the model leaves out the block token; a stray closer goes too
    text = f'Reading.\n<{D}invoke name="a">\n</{D}invoke>\n<{D}invoke name="b">\n<{D}parameter name="x" string="true">1</{D}parameter>\n</{D}invoke>\n</{D}tool_calls>'
    parsed = parse_response(text)
    assert calls_of(text) == [("a", {}, "deepseek_dsml"), ("b", {"x": "1"}, "deepseek_dsml")]
    assert parsed.content == "Reading."


def test_aliases() -> None:
    for alias in ("dsml", "deepseek_v32", "deepseek_v4", "deepseek_v41"):
        assert get_family(alias) is FAMILY


def test_render_is_the_v4_encoder_layout() -> None:
    # encoding_dsv4.py: "<{dsml}tool_calls>\n{invokes joined by \n}\n</{dsml}tool_calls>",
    # '<{dsml}invoke name="{name}">\n{parameters joined by \n}\n</{dsml}invoke>'
    text = FAMILY.render([ToolCall("get_weather", {"city": "Paris", "days": 3}), ToolCall("now", {})])
    assert text == (
        f"<{D}tool_calls>\n"
        f'<{D}invoke name="get_weather">\n'
        f'<{D}parameter name="city" string="true">Paris</{D}parameter>\n'
        f'<{D}parameter name="days" string="false">3</{D}parameter>\n'
        f"</{D}invoke>\n"
        f'<{D}invoke name="now">\n\n'
        f"</{D}invoke>\n"
        f"</{D}tool_calls>"
    )
    assert calls_of(text) == [("get_weather", {"city": "Paris", "days": 3}, "deepseek_dsml"), ("now", {}, "deepseek_dsml")]


# ---------------------------------------------------------------- real outputs


def test_real_deepseek_v4_sglang_output() -> None:
    # https://github.com/sgl-project/sglang/issues/35736 (DeepSeek-V4 on SGLang; /tmp/realprobe case 26)
    raw = (
        "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"Bash\">\n"
        "<｜DSML｜parameter name=\"command\" string=\"true\">pwd</｜DSML｜parameter>\n"
        "</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
    )
    for tools in (None, [{"name": "Bash"}]):
        parsed = parse_response(raw, tools=tools)
        assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [("Bash", {"command": "pwd"}, "deepseek_dsml")]
        assert parsed.content == "" and parsed.diagnostics == []


def test_real_malformed_toolcall_token_is_not_read() -> None:
    # https://github.com/vllm-project/vllm-ascend/issues/13794 (DeepSeek-V4-Flash-0731; /tmp/realprobe case 27).
    # "<｜DSML｜toolcall>Read" and a fenced JSON object is not DSML: no invoke, no parameter tags, no closer;
    # it is DeepSeek-V3's "NAME\n```json" call body behind a truncated block token. The definition gives
    # no reading of it, so it stays content (and no other family claims it).
    raw = (
        "我来调整逐日预测明细表格的宽度，使其更美观。先查看当前表格的宽度设置。\n\n"
        "当前逐日明细表宽度为5300 DXA（列宽1300+2000+2000），相对于A4内容宽度（约9026 DXA）偏窄。让我将表格加宽，并优化列宽比例。\n\n"
        "<｜DSML｜toolcall>Read\n\n```json\n{\"file_path\":\"/tmp/gen_report.js\",\"offset\":100,\"limit\":20}\n``` \n\n"
    )
    parsed = parse_response(raw, tools=[{"name": "Read"}])
    assert parsed.tool_calls == []
    assert "<｜DSML｜toolcall>Read" in parsed.content
    assert FAMILY.extract(raw, raw.index("<｜DSML｜"), "<｜DSML｜", ParseContext()) is None


# ---------------------------------------------------------------- repairs and reports


def test_string_false_value_that_is_not_json_is_kept_as_text_with_a_repair() -> None:
    text = f'<{D}tool_calls><{D}invoke name="f"><{D}parameter name="q" string="false">hello world</{D}parameter></{D}invoke></{D}tool_calls>'
    parsed = parse_response(text)
    (call,) = parsed.tool_calls
    assert call.arguments == {"q": "hello world"}
    assert call.repairs and "not JSON" in call.repairs[0]
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.REPAIRED]


def test_string_false_value_read_after_json_repair() -> None:
    text = f"<{D}tool_calls><{D}invoke name=\"f\"><{D}parameter name=\"o\" string=\"false\">{{'a': [1, 2,]}}</{D}parameter></{D}invoke></{D}tool_calls>"
    (call,) = parse_response(text).tool_calls
    assert call.arguments == {"o": {"a": [1, 2]}}
    assert call.repairs and "after repair" in call.repairs[0]


def test_missing_parameter_closer_is_repaired() -> None:
    text = f'<{D}tool_calls><{D}invoke name="f"><{D}parameter name="a" string="true">x</{D}invoke></{D}tool_calls>'
    (call,) = parse_response(text).tool_calls
    assert call.arguments == {"a": "x"}
    assert call.repairs == [f"missing </{D}parameter> after parameter 'a'"]


@pytest.mark.parametrize(
    "text",
    [
        f'<{D}tool_calls>\n<{D}invoke name="f">\n<{D}parameter name="a" string="true">x',
        f'<{D}invoke name="f">',
    ],
)
def test_output_cut_inside_a_call_is_reported_truncated(text: str) -> None:
    parsed = parse_response("Before.\n" + text)
    assert parsed.tool_calls == []
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.TRUNCATED]
    assert parsed.content == "Before."


# ---------------------------------------------------------------- what stays content


@pytest.mark.parametrize(
    "text",
    [
        # prose and docs quoting the markup (these sentences are from the bug reports cited above)
        "The output shows unparsed, raw DSML tags `<｜DSML｜tool_calls>`, and the agent does not call any tools.",
        "DeepSeek 3.2 outputs internal markup <｜DSML｜function_calls as raw text in the chat.",
        "Start markers use the <｜DSML｜tool_calls prefix; the V4.1 block is <｜DSML｜ calls> instead.",
        "Both <｜DSML｜invoke> and <|DSML|parameter> are tags, <||DSML||x> is not.",
        # code samples
        "self.invoke_begin_regex = r'<｜DSML｜invoke\\s+name=\"([^\"]+)\"\\s*>'\n",
        "tool_calls_template = \"<{dsml_token}function_calls>\\n{tool_calls}\\n</{dsml_token}function_calls>\"",
        "```python\nFUNCTION_CALLS_START = \"<｜DSML｜function_calls>\"\nprint(FUNCTION_CALLS_START)\n```",
        # JSON examples
        '{"bot_token": "<｜DSML｜function_calls>", "eot_token": "</｜DSML｜function_calls>"}',
        '{"invoke": "<｜DSML｜invoke name=\\"f\\">"}',
        # a block token followed by prose, a nameless invoke, a lookalike angle quote
        "<｜DSML｜tool_calls>\nI will now list the files.",
        '<｜DSML｜invoke>\n<｜DSML｜parameter name="a" string="true">1</｜DSML｜parameter>',
        '‹｜DSML｜tool_calls>\n‹｜DSML｜invoke name="f">\n</｜DSML｜invoke>',
    ],
)
def test_prose_code_and_json_stay_content(text: str) -> None:
    for tools in (None, [{"name": "f"}]):
        parsed = parse_response(text, tools=tools)
        assert parsed.tool_calls == [], text
        assert not [d for d in parsed.diagnostics if d.format == "deepseek_dsml"], text
        assert parsed.content.strip() == text.strip()


# ---------------------------------------------------------------- the scan heads

TRIGGERS = FAMILY.triggers
BODIES = [
    'invoke name="f">', " invoke name='f'>", "invoke  name = \"f\" >", 'invoke name="f"', 'invoke name="', "invoke", "inv", " ",
    "tool_calls>", "function_calls>", " calls>", "toolcalls>", "tool>", "toolcall>Read", "invoke>", "parameter>", "x" * 33 + ">",
    "x" * 32 + ">", "\n", " " * 256, " " * 257, "\t", "tool_calls", "<", "</", f"</{D}tool_calls>", f"</{D}invoke>",
    f'<{D}invoke name="f">', f'<|DSML|invoke name="f">', f'<{D} invoke name="f">', f'<{D}parameter name="a" string="true">1',
    f"</{D}parameter>", '{"a": 1}', 'name="f">', 'name="' + "a" * 257 + '">', 'name="a\nb">', "é", "INVOKE name=\"f\">",
]
PREFIXES = ["", " ", "\n", "x", "`", "Here:\n"]


@st.composite
def dsml_texts(draw) -> str:
    parts = [draw(st.sampled_from(PREFIXES))]
    for _ in range(draw(st.integers(1, 4))):
        parts.append(draw(st.sampled_from(TRIGGERS)))
        parts.extend(draw(st.lists(st.sampled_from(BODIES) | st.text(max_size=3), max_size=4)))
        parts.append(draw(st.sampled_from(["", "\n", " then ", f"</{D}invoke>", f"</{D}tool_calls>", "</invoke>"])))
    return "".join(parts)


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=dsml_texts())
def test_head_is_necessary_for_extract(text: str) -> None:
    head = re.compile(deepseek_dsml.HEAD)
    for trigger in TRIGGERS:
        for start in [m.start() for m in re.finditer(re.escape(trigger), text)]:
            if head.match(text, start + len(trigger)) is None:
                for ctx in CONTEXTS:
                    assert FAMILY.extract(text, start, trigger, ctx) is None, text


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=dsml_texts(), with_tools=st.booleans())
def test_filtered_scan_equals_literal_scan(text: str, with_tools: bool) -> None:
    _same_scan(text, CONTEXTS[with_tools])


_INVOKE_SCAN = re.compile(rf"<{deepseek_dsml._MARK}\x20?invoke\s" + anthropic_xml._INVOKE_TAIL)


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from([f"<{D}invoke", f"<{D} invoke", "<|DSML|invoke", " ", "\n", "name", "=", '"', "'", "f", "a" * 100, ">", "<", "é"]), max_size=10))
def test_head_invoke_part_matches_the_invoke_pattern(pieces: list[str]) -> None:
    tail = "".join(pieces)
    assert bool(_INVOKE_SCAN.match(tail)) == bool(deepseek_dsml._INVOKE.match(tail))


@pytest.mark.parametrize("trigger", TRIGGERS)
@pytest.mark.parametrize("junk", ["", "\n", " ", "tool_calls>", "tool_calls>\n", "invoke ", "x"])
def test_flood_of_a_bare_opener_is_never_visited(trigger: str, junk: str) -> None:
    text = (trigger + junk) * 1000
    spots = {m.start() for m in SCANNER.filtered_call_pattern.finditer(text)} | {m.start() for m in SCANNER.filtered_pattern.finditer(text)}
    assert not [s for s in spots if text.startswith(trigger, s)]
    assert scan_text(text, SCANNER, CONTEXTS[1]).calls == []


def test_heads_let_real_calls_through() -> None:
    for text in (
        f'<{D}tool_calls>\n<{D}invoke name="f">\n</{D}invoke>\n</{D}tool_calls>',
        f'<{D} calls>\n<{D} invoke name="f">\n</{D} invoke>\n</{D} calls>',
        f'<{D}invoke name="f"></{D}invoke>',
        f'<{D}tool_calls>\n<{D}invoke name="f">',
    ):
        for ctx in CONTEXTS:
            _same_scan(text, ctx)
        assert SCANNER.filtered_call_pattern.search(text) is not None


# ---------------------------------------------------------------- streaming

STREAMED = [
    "Sure.\n\n" + FAMILY.render([ToolCall("get_weather", {"location": "Paris", "days": 2})]) + "\nDone.",
    f'<{D} calls>\n<{D} invoke name="f">\n<{D} parameter name="a" string="true">x < y</{D} parameter>\n</{D} invoke>\n</{D} calls>',
    f'Quote `<{D}tool_calls>` and <{D}toolcall>Read\n```json\n{{"a": 1}}\n```',
    f'<{D}invoke name="a">{{"k": [1, 2]}}</{D}invoke> then <|DSML|invoke name="b"></|DSML|invoke>',
    f'<{D}tool_calls>\n<{D}invoke name="f">\n<{D}parameter name="a" string="true">cut',
]


@pytest.mark.parametrize("text", STREAMED)
def test_streaming_equals_one_shot_at_every_cut(text: str) -> None:
    want = parse_response(text)
    for cut in range(1, len(text)):
        events, _ = stream_parse([text[:cut], text[cut:]])
        content = "".join(e.text for e in events if isinstance(e, ContentDelta))
        calls = [(e.call.name, e.call.arguments) for e in events if isinstance(e, CallReady)]
        assert calls == [(c.name, c.arguments) for c in want.tool_calls], (cut, text)
        assert content.strip() == want.content.strip(), (cut, text)


@pytest.mark.parametrize("text", STREAMED + ["<｜DSML｜tool_calls>\nprose", f'<{D}tool_calls>' + " " * 256 + f'<{D}invoke name="f">'])
def test_settled_is_only_said_of_final_declines(text: str) -> None:
    """Where ``settled`` says a decline is final, no longer text makes ``extract`` read a call there."""
    for trigger in TRIGGERS:
        for start in [m.start() for m in re.finditer(re.escape(trigger), text)]:
            for cut in range(start + len(trigger), len(text) + 1):
                prefix = text[:cut]
                if FAMILY.extract(prefix, start, trigger, ParseContext()) is None and FAMILY.settled(prefix, start, trigger):
                    for longer in range(cut + 1, len(text) + 1):
                        assert FAMILY.extract(text[:longer], start, trigger, ParseContext()) is None, (prefix, longer)


def test_round_trip_through_auto_mode() -> None:
    calls = [ToolCall("a", {"s": "x\ny", "n": 1.5, "l": [True, None]}), ToolCall("b", {"k'q": "v"})]
    text = FAMILY.render(calls)
    parsed = parse_response(text, tools=[Tool("a"), Tool("b")])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [(c.name, c.arguments) for c in calls]
    assert json.dumps([c.format for c in parsed.tool_calls]) == json.dumps(["deepseek_dsml"] * 2)
