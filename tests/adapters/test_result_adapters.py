"""Result adapters: the assistant turn kept in history and the result messages, per wire format."""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from utp.adapters import (
    AnthropicResultAdapter,
    OllamaResultAdapter,
    OpenAIResultAdapter,
    TextResultAdapter,
    get_result_adapter,
    result_adapter_names,
)
from utp.parsers import get_family, parse_response
from utp.protocols import ToolResultAdapter
from utp.types import ErrorKind, ParsedResponse, ToolCall, ToolResult


def _calls(*ids):
    return [
        ToolCall(name="get_weather", arguments={"city": "Tokyo"}, id=ids[0] if ids else None, format="hermes"),
        ToolCall(name="read_file", arguments={"path": "a.py"}, id=ids[1] if len(ids) > 1 else None, format="hermes"),
    ]


def _results(calls):
    return [
        ToolResult(call_id=calls[0].id, tool_name="get_weather", result={"temp_c": 11}, executed=True),
        ToolResult(
            call_id=calls[1].id,
            tool_name="read_file",
            error="read_file needs the 'walk' tier",
            error_kind=ErrorKind.TIER_VIOLATION,
        ),
    ]


# -- OpenAI -------------------------------------------------------------------


def test_openai_assistant_has_string_arguments_and_generated_ids():
    calls = _calls()
    message = OpenAIResultAdapter().format_assistant(ParsedResponse(content="Checking.", tool_calls=calls))
    assert message["role"] == "assistant"
    assert message["content"] == "Checking."
    first, second = message["tool_calls"]
    assert first == {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Tokyo"}'},
    }
    assert second["id"] == "call_2"
    assert json.loads(second["function"]["arguments"]) == {"path": "a.py"}


def test_openai_results_use_the_same_ids_as_the_assistant_turn():
    adapter = OpenAIResultAdapter()
    calls = _calls()
    assistant = adapter.format_assistant(ParsedResponse(content="", tool_calls=calls))
    messages = adapter.format_results(calls, _results(calls))
    assert [m["tool_call_id"] for m in messages] == [c["id"] for c in assistant["tool_calls"]]
    assert messages[0] == {"role": "tool", "tool_call_id": "call_1", "content": '{"temp_c": 11}'}
    assert json.loads(messages[1]["content"]) == {"error": "read_file needs the 'walk' tier", "kind": "tier_violation"}


def test_openai_keeps_model_ids_and_never_reuses_them():
    adapter = OpenAIResultAdapter()
    calls = [ToolCall(name="a", id="call_1"), ToolCall(name="b")]
    message = adapter.format_assistant(ParsedResponse(content="", tool_calls=calls))
    ids = [c["id"] for c in message["tool_calls"]]
    assert ids[0] == "call_1"
    assert ids[1] != "call_1"


def test_openai_ids_keep_counting_across_rounds():
    adapter = OpenAIResultAdapter()
    first = adapter.format_assistant(ParsedResponse(content="", tool_calls=[ToolCall(name="a")]))
    second = adapter.format_assistant(ParsedResponse(content="", tool_calls=[ToolCall(name="a")]))
    assert first["tool_calls"][0]["id"] != second["tool_calls"][0]["id"]


def test_openai_ids_are_deterministic_per_conversation():
    def run():
        adapter = OpenAIResultAdapter()
        return adapter.format_assistant(ParsedResponse(content="", tool_calls=_calls()))

    assert run() == run()


def test_openai_result_takes_the_id_the_result_carries_when_the_call_has_none():
    adapter = OpenAIResultAdapter()
    call = ToolCall(name="a")
    [message] = adapter.format_results([call], [ToolResult(call_id="call_x", tool_name="a", result="ok")])
    assert message["tool_call_id"] == "call_x"


def test_openai_turn_without_calls_has_no_tool_calls_field():
    message = OpenAIResultAdapter().format_assistant(ParsedResponse(content="Hello"))
    assert message == {"role": "assistant", "content": "Hello"}


# -- Ollama -------------------------------------------------------------------


def test_ollama_assistant_has_object_arguments_and_thinking():
    parsed = ParsedResponse(content="", tool_calls=_calls(), thinking="The user wants weather.")
    message = OllamaResultAdapter().format_assistant(parsed)
    assert message["thinking"] == "The user wants weather."
    assert message["tool_calls"][0] == {"function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}}


def test_ollama_sends_ids_only_when_the_model_gave_them():
    calls = _calls("call_abc")
    message = OllamaResultAdapter().format_assistant(ParsedResponse(content="", tool_calls=calls))
    assert message["tool_calls"][0]["id"] == "call_abc"
    assert "id" not in message["tool_calls"][1]
    results = OllamaResultAdapter().format_results(calls, _results(calls))
    assert results[0] == {"role": "tool", "tool_name": "get_weather", "content": '{"temp_c": 11}', "tool_call_id": "call_abc"}
    assert results[1]["tool_name"] == "read_file"
    assert "tool_call_id" not in results[1]


def test_ollama_without_thinking_has_no_thinking_field():
    message = OllamaResultAdapter().format_assistant(ParsedResponse(content="hi"))
    assert message == {"role": "assistant", "content": "hi"}


# -- Anthropic ----------------------------------------------------------------


def test_anthropic_assistant_is_text_then_tool_use_blocks():
    calls = _calls("toolu_a")
    message = AnthropicResultAdapter().format_assistant(ParsedResponse(content="Let me check.", tool_calls=calls))
    assert message["role"] == "assistant"
    text, use_a, use_b = message["content"]
    assert text == {"type": "text", "text": "Let me check."}
    assert use_a == {"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {"city": "Tokyo"}}
    assert use_b["type"] == "tool_use" and use_b["id"] and use_b["id"] != "toolu_a"


def test_anthropic_omits_empty_text_blocks():
    message = AnthropicResultAdapter().format_assistant(ParsedResponse(content="  ", tool_calls=_calls()))
    assert [b["type"] for b in message["content"]] == ["tool_use", "tool_use"]


def test_anthropic_results_are_one_user_message_of_tool_result_blocks():
    adapter = AnthropicResultAdapter()
    calls = _calls()
    assistant = adapter.format_assistant(ParsedResponse(content="", tool_calls=calls))
    [message] = adapter.format_results(calls, _results(calls))
    assert message["role"] == "user"
    ok, refused = message["content"]
    assert [ok["tool_use_id"], refused["tool_use_id"]] == [b["id"] for b in assistant["content"]]
    assert ok == {"type": "tool_result", "tool_use_id": ok["tool_use_id"], "content": '{"temp_c": 11}', "is_error": False}
    assert refused["is_error"] is True
    assert refused["content"] == "ERROR (tier_violation): read_file needs the 'walk' tier"


def test_anthropic_assistant_turn_parses_back_to_the_same_calls():
    calls = _calls("toolu_1", "toolu_2")
    message = AnthropicResultAdapter().format_assistant(ParsedResponse(content="x", tool_calls=calls))
    parsed = parse_response(message)
    assert [(c.name, c.arguments, c.id) for c in parsed.tool_calls] == [(c.name, c.arguments, c.id) for c in calls]


# -- pairing (all adapters) ------------------------------------------------------


@pytest.mark.parametrize("name", ["openai", "ollama", "anthropic", "text"])
def test_results_paired_by_id_when_given_out_of_order(name):
    adapter = get_result_adapter(name)
    calls = _calls("c1", "c2")
    results = list(reversed(_results(calls)))
    rendered = json.dumps(adapter.format_results(calls, results))
    assert rendered.index("temp_c") < rendered.index("walk")


@pytest.mark.parametrize("name", ["openai", "ollama", "anthropic", "text"])
def test_count_mismatch_is_a_clear_error(name):
    calls = _calls()
    with pytest.raises(ValueError, match="2 call.*1 result"):
        get_result_adapter(name).format_results(calls, _results(calls)[:1])


@pytest.mark.parametrize("name", ["openai", "ollama", "anthropic", "text"])
def test_no_calls_gives_no_messages(name):
    assert get_result_adapter(name).format_results([], []) == []


def test_every_result_adapter_satisfies_the_protocol():
    for name in result_adapter_names():
        assert isinstance(get_result_adapter(name), ToolResultAdapter)


# -- text (prompt-based formats) --------------------------------------------------


def test_text_assistant_is_the_raw_text_including_call_markup():
    raw = {"message": {"role": "assistant", "content": 'Sure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Tokyo"}}\n</tool_call>'}}
    parsed = parse_response(raw)
    message = TextResultAdapter("hermes").format_assistant(parsed)
    assert message == {"role": "assistant", "content": raw["message"]["content"]}


def test_text_assistant_drops_inline_reasoning():
    raw = "<think>weather tool</think>\n<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>"
    message = TextResultAdapter("hermes").format_assistant(parse_response(raw))
    assert message["content"].startswith("<tool_call>")


def test_text_assistant_rerenders_calls_when_raw_text_is_unavailable():
    calls = [ToolCall(name="get_weather", arguments={"city": "Tokyo"})]
    message = TextResultAdapter("hermes").format_assistant(ParsedResponse(content="On it.", tool_calls=calls))
    assert message["content"].startswith("On it.\n")
    assert message["content"].endswith(get_family("hermes").render(calls))
    reparsed = parse_response(message["content"], format="hermes")
    assert [(c.name, c.arguments) for c in reparsed.tool_calls] == [("get_weather", {"city": "Tokyo"})]


def test_text_assistant_adds_native_calls_missing_from_the_raw_text():
    raw = {"message": {"content": "Checking.", "tool_calls": [{"function": {"name": "a", "arguments": {"x": 1}}}]}}
    message = TextResultAdapter("hermes").format_assistant(parse_response(raw))
    assert message["content"].startswith("Checking.\n<tool_call>")


def test_text_assistant_without_a_family_renders_in_the_calls_own_family():
    calls = [ToolCall(name="a", arguments={"x": 1}, format="hermes")]
    message = TextResultAdapter().format_assistant(ParsedResponse(content="", tool_calls=calls))
    assert message["content"] == get_family("hermes").render(calls)


def test_text_results_plain_style_marks_errors():
    calls = _calls()
    [message] = TextResultAdapter("json").format_results(calls, _results(calls))
    assert message["role"] == "user"
    lines = message["content"].splitlines()
    assert lines[0] == "Tool results:"
    assert lines[1] == '[get_weather] {"temp_c": 11}'
    assert lines[2] == "[read_file] ERROR (tier_violation): read_file needs the 'walk' tier"
    # nothing after the list: small models echoed a trailing instruction as their answer
    assert len(lines) == 3


def test_text_results_hermes_style_wraps_each_result_in_tool_response():
    calls = _calls()
    [message] = TextResultAdapter("hermes").format_results(calls, _results(calls))
    blocks = message["content"].split("</tool_response>")
    assert message["content"].count("<tool_response>") == 2
    first = json.loads(blocks[0].split("<tool_response>")[1])
    assert first == {"name": "get_weather", "content": {"temp_c": 11}}
    second = json.loads(blocks[1].split("<tool_response>")[1])
    assert second["content"] == "ERROR (tier_violation): read_file needs the 'walk' tier"


def test_text_results_qwen3_coder_and_anthropic_xml_styles():
    calls = _calls()
    [coder] = TextResultAdapter("qwen3_coder").format_results(calls, _results(calls))
    assert coder["content"].startswith('<tool_response>\n{"temp_c": 11}\n</tool_response>')
    [xml] = TextResultAdapter("anthropic_xml").format_results(calls, _results(calls))
    assert xml["content"].startswith("<function_results>")
    assert "<tool_name>read_file</tool_name>\n<error>\nERROR (tier_violation)" in xml["content"]


@given(
    st.lists(
        st.tuples(
            st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True),
            st.one_of(st.text(alphabet=string.ascii_letters + ' .', max_size=30), st.dictionaries(st.text(alphabet=string.ascii_letters, max_size=5), st.integers(), max_size=3)),
            st.booleans(),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_text_results_name_every_call_in_order(entries):
    calls = [ToolCall(name=name) for name, _, _ in entries]
    results = [
        ToolResult(call_id=None, tool_name=name, result=value)
        if ok
        else ToolResult(call_id=None, tool_name=name, error="boom", error_kind=ErrorKind.EXECUTION_ERROR)
        for name, value, ok in entries
    ]
    [message] = TextResultAdapter().format_results(calls, results)
    text = message["content"]
    position = 0
    for name, _, ok in entries:
        position = text.index(f"[{name}] ", position)
        if not ok:
            assert text[position:].startswith(f"[{name}] ERROR (execution_error): boom")
        position += 1


def test_text_adapter_resolves_family_aliases():
    alias = next(a for a in get_family("hermes").aliases if get_family(a).name == "hermes")
    assert TextResultAdapter(alias).family == "hermes"
    calls = _calls()
    [message] = TextResultAdapter(alias).format_results(calls, _results(calls))
    assert message["content"].startswith("<tool_response>")
