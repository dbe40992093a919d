"""The XML, token and pythonic call families, from each family's published definition.

Examples follow the model cards / reference parsers (Qwen3-Coder, Claude XML,
GLM-4.5/4.7, gpt-oss Harmony, FunctionGemma / Gemma 4, Functionary v3.1/v3.2,
Llama 3.2 / LFM2 / OLMo-3 pythonic, seed 004's command lines), plus every
corpus record of the qwen3_coder_xml, pythonic and harmony families.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from utp.parsers import get_family, parse_response
from utp.parsers.base import ParseContext
from utp.parsers.pyliteral import LiteralError, parse_calls, parse_literal, repair_brace_assignments
from utp.parsers.typedvalues import typed_value
from utp.types import DiagnosticKind, ToolCall

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "annotated_outputs.jsonl"
if not CORPUS.exists():  # the checkout may sit elsewhere; the shared data does not move
    CORPUS = Path("/work/shared/corpus/annotated_outputs.jsonl")

#: the schema the corpus note for "ollama-q3c-body-typed" says the expectation needs
CALCULATE = {
    "name": "calculate",
    "parameters": {
        "type": "object",
        "properties": {
            "x": {"type": "number"},
            "y": {"type": "integer"},
            "enabled": {"type": "boolean"},
            "items": {"type": "array"},
        },
    },
}


def tool(name: str, **properties: dict) -> dict:
    return {"name": name, "parameters": {"type": "object", "properties": properties, "required": list(properties)[:1]}}


def calls_of(parsed) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parsed.tool_calls]


def kinds(parsed) -> list[DiagnosticKind]:
    return [d.kind for d in parsed.diagnostics]


def _corpus_records() -> list[dict]:
    families = {"qwen3_coder_xml", "pythonic", "harmony"}
    with CORPUS.open(encoding="utf-8") as handle:
        return [r for r in map(json.loads, handle) if r["format_family"] in families]


@pytest.mark.parametrize("record", _corpus_records(), ids=lambda r: r["id"])
def test_corpus_records_give_the_expected_calls(record: dict) -> None:
    tools = [CALCULATE] if record["id"] == "ollama-q3c-body-typed" else None
    parsed = parse_response(record["raw"], tools=tools)
    assert [{"name": c.name, "arguments": c.arguments} for c in parsed.tool_calls] == record["expected_calls"]
    if record.get("expected_content") is not None:
        assert parsed.content == record["expected_content"]
    assert not parsed.unparsed


def test_corpus_has_the_families_this_file_covers() -> None:
    ids = {r["format_family"] for r in _corpus_records()}
    assert ids == {"qwen3_coder_xml", "pythonic", "harmony"}


# --- qwen3_coder --------------------------------------------------------------------


QWEN_CALL = (
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
    "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
)


def test_qwen3_coder_wrapped_call_between_prose_leaves_the_prose() -> None:
    parsed = parse_response(f"Let me check.\n{QWEN_CALL}\nDone.", tools=[tool("get_weather", city={"type": "string"}, days={"type": "integer"})])
    assert calls_of(parsed) == [("get_weather", {"city": "Paris", "days": 3})]
    assert parsed.tool_calls[0].format == "qwen3_coder"
    assert parsed.content == "Let me check.\nDone."


def test_qwen3_coder_value_with_no_type_is_json_when_it_reads_as_json() -> None:
    """No schema says what a value is: the format's reference parsers take the JSON value it spells, else the text."""
    assert calls_of(parse_response(QWEN_CALL)) == [("get_weather", {"city": "Paris", "days": 3})]
    text = (
        "<tool_call>\n<function=f>\n<parameter=cmd>\nls -la && echo 1\n</parameter>\n"
        "<parameter=opts>\n  {\"deep\": [1, 2.5]}\n</parameter>\n<parameter=keep>\nnull\n</parameter>\n"
        "<parameter=word>\ntrue story\n</parameter>\n</function>\n</tool_call>"
    )
    expected = {"cmd": "ls -la && echo 1", "opts": {"deep": [1, 2.5]}, "keep": None, "word": "true story"}
    assert calls_of(parse_response(text)) == [("f", expected)]
    untyped = [tool("f", cmd={"type": "string"}, opts={}, keep={"description": "anything"}, word={})]
    assert calls_of(parse_response(text, tools=untyped)) == [("f", expected)]
    typed = [tool("f", cmd={"type": "string"}, opts={"type": "string"}, keep={"type": "string"}, word={"type": "string"})]
    assert calls_of(parse_response(text, tools=typed))[0][1]["keep"] == "null"


def test_qwen3_coder_value_typed_by_no_known_type_reads_python_containers_too() -> None:
    """A type name no JSON Schema reader knows says nothing: the value is read as an untyped one."""
    text = (
        "<tool_call>\n<function=f>\n<parameter=opts>\n{'depth': 3, 'tags': ['a']}\n</parameter>\n"
        "<parameter=title>\n[WIP] fix the parser\n</parameter>\n<parameter=spec>\n{a=1}\n</parameter>\n"
        "<parameter=n>\n7\n</parameter>\n</function>\n</tool_call>"
    )
    expected = {"opts": {"depth": 3, "tags": ["a"]}, "title": "[WIP] fix the parser", "spec": "{a=1}", "n": 7}
    assert calls_of(parse_response(text)) == [("f", expected)]
    odd = [tool("f", opts={"type": "mapping"}, title={"type": "text_block"}, spec={}, n={"type": "other_type"})]
    assert calls_of(parse_response(text, tools=odd)) == [("f", expected)]


def test_qwen3_coder_several_calls_in_blocks_and_in_one_block() -> None:
    two_blocks = QWEN_CALL + "\n" + QWEN_CALL.replace("Paris", "Lyon")
    assert [a["city"] for _, a in calls_of(parse_response(two_blocks))] == ["Paris", "Lyon"]
    one_block = "<tool_call>\n<function=a>\n</function>\n<function=b>\n<parameter=k>\nv\n</parameter>\n</function>\n</tool_call>"
    assert calls_of(parse_response(one_block)) == [("a", {}), ("b", {"k": "v"})]


def test_qwen3_coder_values_typed_by_schema_including_unions() -> None:
    tools = [
        tool(
            "f",
            n={"type": ["integer", "null"]},
            m={"anyOf": [{"type": "null"}, {"type": "number"}]},
            o={"type": "object"},
            s={"type": "string"},
            b={"type": "boolean"},
            p={"type": "array"},
        )
    ]
    text = (
        "<tool_call>\n<function=f>\n<parameter=n>\nnull\n</parameter>\n<parameter=m>\n2.5\n</parameter>\n"
        "<parameter=o>\n{'a': True}\n</parameter>\n<parameter=s>\n42\n</parameter>\n"
        "<parameter=b>\nFalse\n</parameter>\n<parameter=p>\n[1, \"x\"]\n</parameter>\n</function>\n</tool_call>"
    )
    assert calls_of(parse_response(text, tools=tools)) == [
        ("f", {"n": None, "m": 2.5, "o": {"a": True}, "s": "42", "b": False, "p": [1, "x"]})
    ]


def test_qwen3_coder_value_the_schema_rejects_stays_text_for_validation_to_report() -> None:
    parsed = parse_response(QWEN_CALL.replace("\n3\n", "\nthree\n"), tools=[tool("get_weather", city={"type": "string"}, days={"type": "integer"})])
    assert calls_of(parsed) == [("get_weather", {"city": "Paris", "days": "three"})]


def test_qwen3_coder_missing_parameter_close_is_tolerated_and_reported() -> None:
    text = "<tool_call>\n<function=f>\n<parameter=a>\n1\n<parameter=b>\n2\n</function>\n</tool_call>"
    parsed = parse_response(text)
    assert calls_of(parsed) == [("f", {"a": 1, "b": 2})]
    assert DiagnosticKind.REPAIRED in kinds(parsed)
    assert any("missing </parameter>" in r for r in parsed.tool_calls[0].repairs)


def test_qwen3_coder_value_cut_by_dropped_closing_tags_loses_their_line_breaks() -> None:
    """vLLM issue #21571 (Qwen3-Coder): both closing tags dropped, the value ran on to </tool_call>."""
    text = "<tool_call>\n<function=square_the_number>\n<parameter=input_num>\n1024\n\n\n</tool_call>"
    as_text = parse_response(text, tools=[tool("square_the_number", input_num={"type": "string"})])
    assert calls_of(as_text) == [("square_the_number", {"input_num": "1024"})]
    typed = parse_response(text, tools=[tool("square_the_number", input_num={"type": "integer"})])
    assert calls_of(typed) == [("square_the_number", {"input_num": 1024})]


def test_qwen3_coder_missing_opening_tag_leaves_no_stray_close_in_content() -> None:
    text = "Sure.\n<function=f>\n<parameter=a>\nx\n</parameter>\n</function>\n</tool_call>"
    parsed = parse_response(text)
    assert calls_of(parsed) == [("f", {"a": "x"})]
    assert parsed.content == "Sure."


def test_qwen3_coder_passes_on_hermes_and_functionary_bodies() -> None:
    family = get_family("qwen3_coder")
    ctx = ParseContext()
    hermes = '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    assert family.extract(hermes, 0, "<tool_call>", ctx) is None
    functionary = '<function=f>{"a": 1}</function>'
    assert family.extract(functionary, 0, "<function=", ctx) is None
    parsed = parse_response(functionary)
    assert calls_of(parsed) == [("f", {"a": 1})]
    assert parsed.tool_calls[0].format == "functionary"


@pytest.mark.parametrize("quote", ['"', "'", ""])
def test_qwen3_coder_with_claude_style_parameter_tags(quote: str) -> None:
    """Models mixing the two XML formats write ``<parameter name="k">`` inside ``<function=...>``:
    the value was once dropped, the call run with no arguments."""
    text = f"<tool_call>\n<function=f>\n<parameter name={quote}a{quote}>x</parameter>\n<parameter=b>\n2\n</parameter>\n</function>\n</tool_call>"
    parsed = parse_response(text)
    assert calls_of(parsed) == [("f", {"a": "x", "b": 2})]
    assert f"<parameter name={quote}a{quote}> for <parameter=a>" in parsed.tool_calls[0].repairs


def test_qwen3_coder_with_unquoted_claude_style_keys_streams_like_one_shot() -> None:
    """``<parameter name=path>`` (bog-agents' tests): the key was read as ``name=path``."""
    text = "Run this.\n<function=grep><parameter name=pattern>MAGIC</parameter><parameter name=path>/tmp</parameter></function>"
    parsed = parse_response(text)
    assert calls_of(parsed) == [("grep", {"pattern": "MAGIC", "path": "/tmp"})]
    assert parsed.content == "Run this."
    from .conftest import assert_every_cut_matches

    assert_every_cut_matches(text, None, step=11)


def test_qwen3_coder_value_that_mentions_a_parameters_tag_is_whole() -> None:
    parsed = parse_response("<tool_call>\n<function=f>\n<parameter=a>\nsee <parameters> below\n</parameter>\n</function>\n</tool_call>")
    assert calls_of(parsed) == [("f", {"a": "see <parameters> below"})]


def test_qwen3_coder_body_without_parameter_tags_is_reported_not_run_empty() -> None:
    parsed = parse_response("<tool_call>\n<function=f>\ncity: Paris\n</function>\n</tool_call>")
    assert parsed.tool_calls == []
    assert kinds(parsed) == [DiagnosticKind.UNPARSEABLE]
    assert "no <parameter=...> tag" in parsed.diagnostics[0].reason


def test_minicpm4_elements_inside_a_tool_call_block_leave_no_stray_tags() -> None:
    text = 'Checking.\n<tool_call>\n<function name="f">\n<parameter name="a">x</parameter>\n</function>\n<function name="g"></function>\n</tool_call>\nDone.'
    parsed = parse_response(text)
    assert calls_of(parsed) == [("f", {"a": "x"}), ("g", {})]
    assert parsed.content == "Checking.\nDone."
    from .conftest import assert_every_cut_matches

    assert_every_cut_matches(text, None, step=13)


def test_qwen3_coder_truncated_call_is_reported_not_run() -> None:
    parsed = parse_response("Checking.\n<tool_call>\n<function=f>\n<parameter=a>\nhal")
    assert parsed.tool_calls == []
    assert kinds(parsed) == [DiagnosticKind.TRUNCATED]
    assert parsed.content == "Checking."


def test_qwen3_coder_renders_the_template_layout() -> None:
    text = get_family("qwen3_coder").render([ToolCall("f", {"a": "x y", "n": 2})])
    assert text == "<tool_call>\n<function=f>\n<parameter=a>\nx y\n</parameter>\n<parameter=n>\n2\n</parameter>\n</function>\n</tool_call>"


# --- anthropic_xml ------------------------------------------------------------------

NS = "antml" + ":"


def test_minimax_m2_tool_call_block_is_read_and_removed() -> None:
    """MiniMax-M2's template wraps Claude-style invokes in <minimax:tool_call> (MiniMax-M2 tool-calling guide)."""
    text = (
        "Let me look that up.\n<minimax:tool_call>\n<invoke name=\"search_web\">\n"
        '<parameter name="query_tag">["technology", "events"]</parameter>\n'
        '<parameter name="query_list">["OpenAI latest release"]</parameter>\n'
        "</invoke>\n<invoke name=\"get_time\">\n</invoke>\n</minimax:tool_call>"
    )
    parsed = parse_response(text)
    assert calls_of(parsed) == [
        ("search_web", {"query_tag": ["technology", "events"], "query_list": ["OpenAI latest release"]}),
        ("get_time", {}),
    ]
    assert parsed.content == "Let me look that up."
    assert parse_response("The block opens with <minimax:tool_call> and then invokes.").tool_calls == []


def test_anthropic_xml_two_invokes_typed_by_schema() -> None:
    text = (
        "I'll look both up.\n<function_calls>\n<invoke name=\"get_weather\">\n"
        "<parameter name=\"city\">Paris & <Lyon></parameter>\n<parameter name=\"days\">2</parameter>\n"
        "</invoke>\n<invoke name=\"ping\">\n</invoke>\n</function_calls>"
    )
    tools = [tool("get_weather", city={"type": "string"}, days={"type": "integer"}), tool("ping")]
    parsed = parse_response(text, tools=tools)
    assert calls_of(parsed) == [("get_weather", {"city": "Paris & <Lyon>", "days": 2}), ("ping", {})]
    assert parsed.content == "I'll look both up."
    assert {c.format for c in parsed.tool_calls} == {"anthropic_xml"}


def test_anthropic_xml_without_schema_reads_json_looking_values() -> None:
    text = '<function_calls><invoke name="f"><parameter name="o">{"a": [1, 2]}</parameter><parameter name="s">plain text</parameter></invoke></function_calls>'
    assert calls_of(parse_response(text)) == [("f", {"o": {"a": [1, 2]}, "s": "plain text"})]


def test_anthropic_xml_namespaced_tags() -> None:
    text = f'<{NS}function_calls><{NS}invoke name="f"><{NS}parameter name="k">v</{NS}parameter></{NS}invoke></{NS}function_calls>'
    parsed = parse_response(text)
    assert calls_of(parsed) == [("f", {"k": "v"})]
    assert parsed.content == ""


def test_function_calls_mentioned_in_prose_is_not_a_call() -> None:
    text = "Claude wraps calls in <function_calls> blocks."
    parsed = parse_response(text)
    assert parsed.tool_calls == [] and not parsed.diagnostics
    assert parsed.content == text


def test_anthropic_xml_passes_a_pythonic_body_to_pythonic() -> None:
    assert get_family("anthropic_xml").extract("<function_calls>f(a=1)</function_calls>", 0, "<function_calls>", ParseContext()) is None
    parsed = parse_response("<function_calls>f(a=1)</function_calls>")
    assert [c.format for c in parsed.tool_calls] == ["pythonic"]


def test_anthropic_xml_unclosed_parameter_is_truncated() -> None:
    parsed = parse_response('<function_calls><invoke name="f"><parameter name="k">v')
    assert parsed.tool_calls == []
    assert kinds(parsed) == [DiagnosticKind.TRUNCATED]


#: Claude 2.1's legacy tool use, as its system prompt taught it (Anthropic's anthropic-tools
#: prompt construction: "<invoke><tool_name>$TOOL_NAME</tool_name><parameters>
#: <$PARAMETER_NAME>$PARAMETER_VALUE</$PARAMETER_NAME>...</parameters></invoke>")
LEGACY = (
    "Checking.\n<function_calls>\n<invoke>\n<tool_name>get_weather</tool_name>\n<parameters>\n"
    "<city>Paris</city>\n<days>2</days>\n</parameters>\n</invoke>\n"
    "<invoke>\n<tool_name>ping</tool_name>\n</invoke>\n</function_calls>\nDone."
)


def test_anthropic_xml_claude21_invokes_with_element_arguments() -> None:
    tools = [tool("get_weather", city={"type": "string"}, days={"type": "integer"}), tool("ping")]
    parsed = parse_response(LEGACY, tools=tools)
    assert calls_of(parsed) == [("get_weather", {"city": "Paris", "days": 2}), ("ping", {})]
    assert parsed.content == "Checking.\nDone."
    assert not parsed.diagnostics


def test_anthropic_xml_claude21_streams_like_one_shot() -> None:
    from tests.parsers.conftest import assert_every_cut_matches

    assert_every_cut_matches(LEGACY, [tool("get_weather", city={"type": "string"}, days={"type": "integer"}), tool("ping")], step=29)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("<function_calls>\n<invoke>\n<tool_name>f</tool_name>\n<parameters>\n<k>v", DiagnosticKind.TRUNCATED),
        ("<function_calls>\n<invoke>\n<tool_name>f</tool_name>\nsome text\n</invoke>\n</function_calls>", DiagnosticKind.UNPARSEABLE),
        ("<function_calls>\n<invoke>\n<tool_name>f</tool_name>\n<parameters><k>v</parameters>\n</invoke>", DiagnosticKind.UNPARSEABLE),
    ],
    ids=["cut off", "not parameters", "unclosed element"],
)
def test_anthropic_xml_claude21_broken_invokes_are_reported(text: str, kind: DiagnosticKind) -> None:
    parsed = parse_response(text)
    assert parsed.tool_calls == []
    assert kinds(parsed) == [kind]


def test_a_claude21_invoke_without_the_wrapper_is_read_as_the_hermes_tags_are() -> None:
    """Not as Claude 2.1's markup (that needs ``<function_calls>``): a bare ``<invoke>`` holding a name
    element is a call tag as ``<tool>`` is (beamclaw's prompt asks for ``<invoke><name>…``)."""
    text = "<invoke>\n<tool_name>f</tool_name>\n</invoke>"
    assert [(c.name, c.format) for c in parse_response(text).tool_calls] == [("f", "hermes")]


def test_anthropic_xml_render() -> None:
    assert get_family("anthropic_xml").render([ToolCall("f", {"k": "v", "n": 1})]) == (
        '<function_calls>\n<invoke name="f">\n<parameter name="k">v</parameter>\n<parameter name="n">1</parameter>\n</invoke>\n</function_calls>'
    )


# --- glm ----------------------------------------------------------------------------


#: GLM-4 (glm-4-9b-chat): the tool's name on the answer's first line, its JSON arguments after
GLM4_TOOLS = [tool("get_weather", city={"type": "string"}), tool("search", query={"type": "string"})]


@pytest.mark.parametrize("text", ['get_weather\n{"city": "Paris"}', '<think>weather first</think>\nget_weather\n{"city": "Paris"}\n'])
def test_glm4_name_line_then_json_answer(text: str) -> None:
    parsed = parse_response(text, tools=GLM4_TOOLS)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"}, "glm")]
    assert parsed.content == ""


@pytest.mark.parametrize("text", [
    'get_weather\n{"city": "Paris"}\nThat is the call I would make.',  # more than the call
    'I would use get_weather\n{"city": "Paris"}\nThen I would read it.',  # not the answer's start, prose after
    "search\nThis is about search.",  # no JSON after the name
])
def test_glm4_name_line_only_as_the_whole_answer(text: str) -> None:
    assert parse_response(text, tools=GLM4_TOOLS).tool_calls == []
    assert parse_response('get_weather\n{"city": "Paris"}').tool_calls == []  # not offered: prose


def test_glm4_name_line_streams_like_one_shot() -> None:
    from tests.parsers.conftest import assert_every_cut_matches

    assert_every_cut_matches('get_weather\n{"city": "Paris"}', GLM4_TOOLS, step=5)


def test_glm45_layout_with_newlines() -> None:
    text = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>"
    parsed = parse_response(text, tools=[tool("get_weather", city={"type": "string"}, days={"type": "integer"})])
    assert calls_of(parsed) == [("get_weather", {"city": "Beijing", "days": 2})]
    assert parsed.tool_calls[0].format == "glm"


def test_glm47_layout_without_newlines_and_json_values() -> None:
    text = '<tool_call>f<arg_key>o</arg_key><arg_value>{"a": 1}</arg_value><arg_key>s</arg_key><arg_value>x</arg_value></tool_call>'
    assert calls_of(parse_response(text)) == [("f", {"o": {"a": 1}, "s": "x"})]


def test_glm_no_argument_call_and_spaces_around_pairs() -> None:
    assert calls_of(parse_response("<tool_call>list_files</tool_call>")) == [("list_files", {})]
    spaced = "Let me search: <tool_call>ls <arg_key>dirPath</arg_key> <arg_value>backend</arg_value> </tool_call>"
    parsed = parse_response(spaced)
    assert calls_of(parsed) == [("ls", {"dirPath": "backend"})]
    assert parsed.content == "Let me search:"


def test_glm_string_schema_keeps_numeric_text() -> None:
    text = "<tool_call>f<arg_key>code</arg_key><arg_value>007</arg_value></tool_call>"
    assert calls_of(parse_response(text, tools=[tool("f", code={"type": "string"})])) == [("f", {"code": "007"})]


def test_glm_key_closer_written_twice_is_a_recorded_repair() -> None:
    """The production symptom in vllm-project/vllm#54971 (GLM-4.7): ``</arg_key>`` doubled before the value."""
    text = "<tool_call>list_dir<arg_key>path</arg_key></arg_key><arg_value>/Users/user/project</arg_value></tool_call>"
    parsed = parse_response(text)
    assert calls_of(parsed) == [("list_dir", {"path": "/Users/user/project"})]
    assert parsed.tool_calls[0].repairs == ["ignored a repeated </arg_key> after 'path'"]


def test_glm_passes_on_hermes_json_bodies() -> None:
    assert get_family("glm").extract('<tool_call>{"name": "f"}</tool_call>', 0, "<tool_call>", ParseContext()) is None


def test_glm_render_round_trips() -> None:
    family = get_family("glm")
    text = family.render([ToolCall("f", {"a": "x"})])
    assert text == "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>x</arg_value>\n</tool_call>"
    assert calls_of(parse_response(text, format="glm")) == [("f", {"a": "x"})]


# --- harmony ------------------------------------------------------------------------


def test_harmony_recipient_in_role_position() -> None:
    text = '<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Oslo"}<|call|>'
    assert calls_of(parse_response(text)) == [("get_weather", {"city": "Oslo"})]


def test_harmony_final_channel_is_content_and_analysis_is_thinking() -> None:
    text = "<|channel|>analysis<|message|>Just greet.<|end|><|start|>assistant<|channel|>final<|message|>Hello there!<|return|>"
    parsed = parse_response(text)
    assert parsed.tool_calls == []
    assert parsed.content == "Hello there!"
    assert parsed.thinking == "Just greet."


def test_harmony_tool_reply_message_is_not_a_call() -> None:
    text = '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>{"sunny": true}<|end|>'
    parsed = parse_response(text)
    assert parsed.tool_calls == []
    assert "sunny" not in parsed.content


def test_harmony_identifier_safe_name_maps_back_to_the_offered_tool() -> None:
    text = '<|channel|>commentary to=functions.get_current_weather <|constrain|>json<|message|>{}<|call|>'
    parsed = parse_response(text, tools=[tool("get-current.weather")])
    assert [c.name for c in parsed.tool_calls] == ["get-current.weather"]
    assert parsed.tool_calls[0].known is True


def test_harmony_non_json_arguments_are_unparseable() -> None:
    parsed = parse_response("<|channel|>commentary to=functions.f <|constrain|>json<|message|>city=Oslo<|call|>")
    assert parsed.tool_calls == []
    assert kinds(parsed) == [DiagnosticKind.UNPARSEABLE]


def test_harmony_arguments_may_name_many_other_special_tokens() -> None:
    """Only body-ending tokens bound the JSON read: other markup in a string, however much, stays text."""
    arguments = {"note": "<|call|>" + "<|action_start|><|interpreter|>" * 6, "x": 1}
    text = get_family("harmony").render([ToolCall("f", arguments)])
    parsed = parse_response(text, tools=[{"name": "f"}], format="harmony")
    assert [(c.name, c.arguments, c.repairs) for c in parsed.tool_calls] == [("f", arguments, [])]


def test_harmony_json_constraint_glued_to_the_recipient_is_split_only_for_an_offered_tool() -> None:
    """llama.cpp #15102: gpt-oss writes ``to=functions.shelljson`` when ``<|constrain|>`` goes missing."""
    text = '<|channel|>commentary to=functions.shelljson<|message|>{"cmd": ["ls"]}<|call|>'
    parsed = parse_response(text, tools=[{"name": "shell"}])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("shell", {"cmd": ["ls"]})]
    assert parsed.tool_calls[0].repairs == ["split 'json' glued to the recipient"]
    assert [c.name for c in parse_response(text).tool_calls] == ["shelljson"]  # no tools: nothing to split against
    assert [c.name for c in parse_response(text, tools=[{"name": "shelljson"}]).tool_calls] == ["shelljson"]


def test_harmony_render_matches_gpt_oss_output() -> None:
    text = get_family("harmony").render([ToolCall("f", {"a": 1}), ToolCall("g", {})])
    assert text == (
        '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": 1}<|call|>'
        "<|start|>assistant<|channel|>commentary to=functions.g <|constrain|>json<|message|>{}<|call|>"
    )


# --- functiongemma ------------------------------------------------------------------


def test_functiongemma_escape_strings_and_bare_scalars() -> None:
    text = "<start_function_call>call:get_weather{city:<escape>Paris, {France}<escape>,days:3,metric:true,extra:null}<end_function_call>"
    parsed = parse_response(text)
    assert calls_of(parsed) == [("get_weather", {"city": "Paris, {France}", "days": 3, "metric": True, "extra": None})]
    assert parsed.tool_calls[0].format == "functiongemma"


def test_gemma4_quote_token_nested_values_and_several_calls() -> None:
    text = (
        'Sure.<|tool_call>call:f{xs:[1,<|"|>a,b<|"|>],o:{k:<|"|>v<|"|>,n:-2.5}}<tool_call|>'
        "<|tool_call>call:g{}<tool_call|>"
    )
    parsed = parse_response(text)
    assert calls_of(parsed) == [("f", {"xs": [1, "a,b"], "o": {"k": "v", "n": -2.5}}), ("g", {})]
    assert parsed.content == "Sure."


def test_functiongemma_unclosed_string_is_truncated() -> None:
    parsed = parse_response("<start_function_call>call:f{a:<escape>never closed")
    assert parsed.tool_calls == []
    assert kinds(parsed) == [DiagnosticKind.TRUNCATED]


def test_functiongemma_render() -> None:
    text = get_family("functiongemma").render([ToolCall("f", {"s": "x", "n": 1, "l": [True, None], "o": {"a b": "c"}})])
    assert text == "<start_function_call>call:f{s:<escape>x<escape>,n:1,l:[true,null],o:{<escape>a b<escape>:<escape>c<escape>}}<end_function_call>"


# --- functionary --------------------------------------------------------------------


def test_functionary_v31_function_tags() -> None:
    parsed = parse_response('<function=get_weather>{"city": "Rome"}</function>')
    assert calls_of(parsed) == [("get_weather", {"city": "Rome"})]


def test_functionary_v32_recipients_and_all_is_prose() -> None:
    text = '>>>all\nLet me check both.>>>get_weather\n{"city": "Rome"}>>>get_weather\n{"city": "Pisa"}'
    parsed = parse_response(text)
    assert calls_of(parsed) == [("get_weather", {"city": "Rome"}), ("get_weather", {"city": "Pisa"})]
    assert parsed.content == "Let me check both."


def test_functionary_leaves_python_repl_prompts_alone() -> None:
    text = "In the REPL:\n>>> print(1)\n1"
    parsed = parse_response(text)
    assert parsed.tool_calls == []
    assert parsed.content == text


def test_functionary_render() -> None:
    assert get_family("functionary").render([ToolCall("f", {"a": 1})]) == '<function=f>{"a": 1}</function>'


# --- pythonic -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "prose",
    [
        "[1] See the docs (page 2).",
        "Read [the guide](https://example.com/guide) first.",
        "Use the form [name(args)] in notes.",
        "Arrays like [x, y] are fine.",
    ],
)
def test_pythonic_prose_with_brackets_is_not_a_call(prose: str) -> None:
    parsed = parse_response(prose, tools=[tool("get_weather")])
    assert parsed.tool_calls == []
    assert parsed.content == prose


def test_pythonic_list_later_in_text_counts_only_when_it_names_offered_tools() -> None:
    text = 'I will call it: [get_weather(city="Paris")]'
    assert parse_response(text).tool_calls == []
    parsed = parse_response(text, tools=[tool("get_weather", city={"type": "string"})])
    assert calls_of(parsed) == [("get_weather", {"city": "Paris"})]
    assert parsed.content == "I will call it:"


def test_pythonic_misspelt_offered_name_is_accepted_and_corrected_by_the_composite() -> None:
    parsed = parse_response('Calling [get_wether(city="Paris")]', tools=[tool("get_weather", city={"type": "string"})])
    assert [c.name for c in parsed.tool_calls] == ["get_weather"]


def test_pythonic_never_evaluates_anything() -> None:
    hostile = "[f(a=__import__('os').system('echo pwned'))]"
    parsed = parse_response(hostile)
    assert parsed.tool_calls == []  # not literal: leading prose-like text stays content
    parsed = parse_response(hostile, tools=[tool("f")])
    assert parsed.tool_calls == []
    assert kinds(parsed) == [DiagnosticKind.UNPARSEABLE]


def test_pythonic_positional_arguments_follow_the_schema_order() -> None:
    parsed = parse_response('[move("a.txt", "b.txt", overwrite=True)]', tools=[tool("move", src={"type": "string"}, dst={"type": "string"}, overwrite={"type": "boolean"})])
    assert calls_of(parsed) == [("move", {"overwrite": True, "src": "a.txt", "dst": "b.txt"})]
    assert DiagnosticKind.REPAIRED in kinds(parsed)


def test_pythonic_positional_without_a_known_tool_is_kept_and_reported() -> None:
    parsed = parse_response('[move("a.txt")]')
    assert calls_of(parsed) == [("move", {"arg0": "a.txt"})]
    assert any("positional" in r for r in parsed.tool_calls[0].repairs)


def test_pythonic_dotted_names_and_json_words() -> None:
    parsed = parse_response("[files.read(path='a', strict=false, limit=null), ping()]")
    assert calls_of(parsed) == [("files.read", {"path": "a", "strict": False, "limit": None}), ("ping", {})]


def test_pythonic_unclosed_list_of_an_offered_tool_is_truncated() -> None:
    parsed = parse_response('Now [get_weather(city="Par', tools=[tool("get_weather")])
    assert parsed.tool_calls == []
    assert kinds(parsed) == [DiagnosticKind.TRUNCATED]


def test_pythonic_oversized_list_is_refused_without_parsing() -> None:
    from utp.parsers.pythoncalls import MAX_SPAN

    text = "[f(a=[" + "1," * (MAX_SPAN // 2) + "1])]"
    parsed = parse_response(text)
    assert parsed.tool_calls == []
    assert kinds(parsed) == [DiagnosticKind.UNPARSEABLE]
    assert "longer than" in parsed.diagnostics[0].reason


def test_pythonic_render() -> None:
    text = get_family("pythonic").render([ToolCall("f", {"a": 1, "b": "x", "c": True, "d": None, "e": {"k": [1.5]}}), ToolCall("g", {})])
    assert text == '[f(a=1, b="x", c=True, d=None, e={"k": [1.5]}), g()]'


# --- bash ---------------------------------------------------------------------------

SEARCH = tool("search", query={"type": "string"}, path={"type": "string"}, type={"type": "string"}, limit={"type": "integer"}, regex={"type": "boolean"})
FILE = tool("file", path={"type": "string"})


def test_bash_is_opt_in() -> None:
    text = "```bash\nfile pkg/recurrence/generator.go\n```"
    assert parse_response(text, tools=[FILE]).tool_calls == []
    parsed = parse_response(text, tools=[FILE], allow_bash=True)
    assert calls_of(parsed) == [("file", {"path": "pkg/recurrence/generator.go"})]
    assert parsed.tool_calls[0].format == "bash"
    assert parsed.content == ""


def test_bash_flags_positionals_and_types() -> None:
    text = 'Searching:\n```sh\nsearch -t func --limit=5 --regex "Generate Instances" pkg/\nfile a.go\n```'
    parsed = parse_response(text, tools=[SEARCH, FILE], allow_bash=True)
    assert calls_of(parsed) == [
        ("search", {"type": "func", "limit": 5, "regex": True, "query": "Generate Instances", "path": "pkg/"}),
        ("file", {"path": "a.go"}),
    ]
    assert parsed.content == "Searching:"


def test_bash_block_with_a_non_tool_command_is_not_a_call() -> None:
    text = "```bash\ncd src && file a.go\n```"
    parsed = parse_response(text, tools=[FILE], allow_bash=True)
    assert parsed.tool_calls == []
    assert parsed.content == text


def test_bash_needs_offered_tools() -> None:
    assert parse_response("```bash\nfile a.go\n```", format="bash").tool_calls == []


def test_bash_render_round_trips_awkward_values() -> None:
    call = ToolCall("search", {"query": "it's -x \"q\"\nline2", "limit": 3, "regex": False})
    text = get_family("bash").render([call])
    assert text.startswith("```bash\nsearch ") and text.endswith("\n```")
    assert calls_of(parse_response(text, tools=[SEARCH], format="bash")) == [("search", call.arguments)]


# --- pyliteral ----------------------------------------------------------------------


def test_brace_assignments_are_rewritten_only_inside_braces() -> None:
    assert repair_brace_assignments('f(a=1, b={c=2, d="x=y"})') == 'f(a=1, b={"c":2, "d":"x=y"})'
    assert repair_brace_assignments("f(a=1)") is None
    assert repair_brace_assignments("{a == b}") is None
    assert repair_brace_assignments('f(x={\n  key\t= 1,\n  other =2})') == 'f(x={\n  "key": 1,\n  "other":2})'


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{},=( )\t\n"\'abc_19', max_size=40))
def test_brace_assignment_prefilter_never_skips_a_rewrite(source: str) -> None:
    """The regex pre-check is a necessary condition: turning it off changes no answer."""
    import utp.parsers.pyliteral as pyliteral

    answer = repair_brace_assignments(source)
    with patch.object(pyliteral, "_ASSIGNMENT_SHAPE", re.compile("")):
        assert repair_brace_assignments(source) == answer


def test_parse_literal_accepts_json_and_python_and_refuses_names() -> None:
    assert parse_literal("{'a': (1, 2), 'b': None}") == ({"a": [1, 2], "b": None}, [])
    assert parse_literal('{"a": true}') == ({"a": True}, [])
    with pytest.raises(LiteralError, match="not a literal"):
        parse_literal("{'a': os}")


def test_parse_calls_refuses_unpacking_and_statements() -> None:
    with pytest.raises(LiteralError, match="unpacking"):
        parse_calls("[f(**kw)]")
    with pytest.raises(LiteralError, match="statement"):
        parse_calls("import os", one_per_line=True)


@pytest.mark.parametrize(
    ("raw", "schema", "expected"),
    [
        ("3.0", {"type": "integer"}, 3),
        ("1_000", {"type": "number"}, "1_000"),
        ("nan", {"type": "number"}, "nan"),
        ("TRUE", {"type": "boolean"}, True),
        ("x", {"type": ["integer", "string"]}, "x"),
        ("[1]", {"type": "object"}, "[1]"),
        ("b", {"enum": ["a", "b"]}, "b"),
        ("5", None, "5"),
    ],
)
def test_typed_value(raw: str, schema: dict | None, expected: object) -> None:
    assert typed_value(raw, schema) == expected


# --- details found while testing --------------------------------------------------------


def test_qwen3_coder_tool_call_close_inside_a_value_does_not_end_the_call() -> None:
    text = "<tool_call>\n<function=f>\n<parameter=o>\n{\"x\": \"</tool_call>\"}\n</parameter>\n</function>\n</tool_call>"
    assert calls_of(parse_response(text, tools=[tool("f", o={"type": "object"})])) == [("f", {"o": {"x": "</tool_call>"}})]


def test_harmony_call_from_the_analysis_channel_is_still_a_call() -> None:
    text = '<|channel|>analysis to=functions.lookup <|constrain|>json<|message|>{"q": "x"}<|call|>'
    assert calls_of(parse_response(text)) == [("lookup", {"q": "x"})]


def test_functiongemma_keeps_complete_calls_before_a_broken_one() -> None:
    parsed = parse_response("<start_function_call>call:a{k:1}call:b{k:<escape>open")
    assert calls_of(parsed) == [("a", {"k": 1})]
    assert kinds(parsed) == [DiagnosticKind.TRUNCATED]


# --- streaming: families say early when a trigger turned out to be prose ----------------


@pytest.mark.parametrize(
    ("prose", "tools"),
    [
        ("See [the docs](http://example.com) and [1] for details, then carry on writing. " * 3, None),
        ("In the REPL:\n>>> print(1)\nprints one, which is what we expected to see here. " * 3, None),
        ("The tag <function=f> is how it starts, and more text follows it here. " * 3, None),
        ("The <start_function_call> token opens a call; the rest of this sentence is plain. " * 3, None),
        ("Claude writes <function_calls> blocks, OLMo too; both are described in the docs here. " * 3, None),
        ("Here ```bashrc is not a shell fence\nand the text goes on for a while longer. " * 3, [FILE]),
    ],
)
def test_streamed_prose_with_trigger_lookalikes_is_released_before_the_end(prose: str, tools: list | None) -> None:
    from utp.parsers.streaming import ContentDelta, StreamParser

    stream = StreamParser(tools=tools, allow_bash=True)
    released = ""
    for i in range(0, len(prose), 5):
        released += "".join(e.text for e in stream.feed(prose[i : i + 5]) if isinstance(e, ContentDelta))
    assert len(released) > len(prose) // 2, released
    tail = "".join(e.text for e in stream.close() if isinstance(e, ContentDelta))
    assert (released + tail).strip() == prose.strip()
    assert stream.result().tool_calls == []


def test_shared_tool_call_trigger_is_settled_by_the_xml_families_once_the_body_shows() -> None:
    qwen, glm = get_family("qwen3_coder"), get_family("glm")
    assert qwen.settled("<tool_call>{", 0, "<tool_call>") and glm.settled("<tool_call>{", 0, "<tool_call>")
    assert not qwen.settled("<tool_call>\n<func", 0, "<tool_call>")
    assert not glm.settled("<tool_call>get_wea", 0, "<tool_call>")


# ---------------------------------------------------------------- Gemma's tool_code fences


def test_gemma_tool_code_fence_one_call_per_line_between_prose() -> None:
    text = 'I will check.\n```tool_code\nget_weather(city="Paris")\nget_time(tz="CET")\n```\nDone.'
    parsed = parse_response(text, tools=[{"name": "get_weather"}, {"name": "get_time"}])
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [
        ("get_weather", {"city": "Paris"}, "pythonic"),
        ("get_time", {"tz": "CET"}, "pythonic"),
    ]
    assert parsed.content == "I will check.\nDone."


def test_tool_call_fence_with_a_call_list() -> None:
    parsed = parse_response('```tool_call\n[get_weather(city="Paris")]\n```')
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"})]


def test_tool_code_fence_with_json_is_left_to_the_fenced_family() -> None:
    parsed = parse_response('```tool_code\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```')
    assert [(c.name, c.format) for c in parsed.tool_calls] == [("get_weather", "fenced")]


def test_tool_code_fence_with_code_that_is_not_a_literal_call_is_reported_not_run() -> None:
    parsed = parse_response('```tool_code\nlog(get_weather(city="Paris"))\n```')
    assert parsed.tool_calls == [] and parsed.unparsed


def test_a_python_fence_of_other_code_is_a_code_sample_not_a_call() -> None:
    text = '```python\nweather = get_weather(city="Paris")\nprint(weather.upper())\n```'  # calls alone: test_code_fence_calls.py
    parsed = parse_response(text, tools=[{"name": "get_weather"}])
    assert parsed.tool_calls == [] and parsed.content == text


# ---------------------------------------------------------------- unquoted attribute values

#: real: a MiniMax parser test of Modular's MAX server, names written without quotes as HTML allows
UNQUOTED_MINIMAX = "<minimax:tool_call>\n<invoke name=get_random_fact>\n<parameter name=category>science</parameter>\n</invoke>\n</minimax:tool_call>"


@pytest.mark.parametrize(
    "text",
    [
        UNQUOTED_MINIMAX,
        '<function_calls>\n<invoke name="get_random_fact"><parameter name=category>science</parameter></invoke>\n</function_calls>',
        "<function_calls><invoke name=get_random_fact>\n<parameter name=category>science</parameter>\n</invoke></function_calls>",
    ],
)
def test_unquoted_invoke_and_parameter_names_inside_a_wrapper(text: str) -> None:
    """The unquoted name was not read at all (the block passed as prose), the unquoted key dropped."""
    parsed = parse_response(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_random_fact", {"category": "science"})]
    assert parsed.diagnostics == [] and parsed.content == ""
    from .conftest import assert_stream_matches

    assert_stream_matches(text)


@pytest.mark.parametrize("text", ["Use <invoke name=x> in html.", "In XML write <invoke name=get_weather></invoke> to call."])
def test_an_unquoted_invoke_outside_a_wrapper_stays_prose(text: str) -> None:
    parsed = parse_response(text, tools=[{"name": "get_weather"}, {"name": "x"}])
    assert parsed.tool_calls == [] and parsed.content == text
