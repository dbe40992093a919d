"""Each JSON-bodied family against its published syntax, and against prose that only looks like it.

Syntax references: Hermes/Qwen chat templates (``<tool_call>``), Meta's Llama
3.1/3.2 prompt format (``<|python_tag|>``, JSON with ``parameters``), Mistral
tokenizer v3/v11 templates (``[TOOL_CALLS]``), IBM Granite 3 (``<|tool_call|>``),
AI21 Jamba (``<tool_calls>``), Cohere Command R/R+/A (``Action:``, ``<|START_ACTION|>``),
Phi-4-mini/FireFunction (``functools[``), DeepSeek V3/R1/V3.1 model cards,
Kimi K2 (``<|tool_calls_section_begin|>``), InternLM2 (``<|action_start|><|plugin|>``).
"""

from __future__ import annotations

import json

import pytest

from utp.parsers import get_family, parse_response
from utp.types import DiagnosticKind, ToolCall

from .conftest import assert_stream_matches, names_args

WEATHER = {"name": "get_weather", "arguments": {"city": "Paris"}}
TOOLS = [
    {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
    {"name": "get_time", "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}}},
]


def calls_of(text: str, **kw: object) -> list[tuple[str, str]]:
    return names_args(parse_response(text, **kw).tool_calls)


def one(name: str, **arguments: object) -> list[tuple[str, str]]:
    return names_args([{"name": name, "arguments": arguments}])


# ---------------------------------------------------------------- hermes


class TestHermes:
    def test_sdd_p0_qwen_modelfile_case(self) -> None:
        parsed = parse_response('<tools>\n{"name": "search_code", "arguments": {"query": "authentication"}}\n</tools>')
        assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [
            ("search_code", {"query": "authentication"}, "hermes")
        ]
        assert parsed.content == ""
        assert parsed.finish_reason == "tool_calls"

    @pytest.mark.parametrize("tag", ["tool_call", "tools", "function_call", "tool_use", "tool", "functioncall", "response"])
    def test_every_tag_variant(self, tag: str) -> None:
        text = f'Checking. <{tag}>{json.dumps(WEATHER)}</{tag}>'
        parsed = parse_response(text)
        assert names_args(parsed.tool_calls) == one("get_weather", city="Paris")
        assert parsed.content == "Checking."

    def test_parallel_blocks(self) -> None:
        text = '<tool_call>{"name": "a", "arguments": {}}</tool_call>\n<tool_call>{"name": "b", "arguments": {"x": 1}}</tool_call>'
        assert [c.name for c in parse_response(text).tool_calls] == ["a", "b"]

    def test_json_array_inside_the_wrapper(self) -> None:
        text = '<tool_call>[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]</tool_call>'
        assert [c.name for c in parse_response(text).tool_calls] == ["a", "b"]

    def test_missing_closing_tag_at_the_end(self) -> None:
        assert calls_of('<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}') == one("get_weather", city="Paris")

    def test_parameters_key_and_string_arguments(self) -> None:
        assert calls_of('<tool_call>{"name": "f", "parameters": {"a": 1}}</tool_call>') == one("f", a=1)
        assert calls_of('<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>') == one("f", a=1)

    def test_child_elements_with_json_arguments(self) -> None:
        text = '<tool_use><name>read_file</name><arguments>{"path": "a.py"}</arguments></tool_use>'
        assert calls_of(text) == one("read_file", path="a.py")

    def test_child_elements_per_argument(self) -> None:
        text = "<tool_call><name>get_weather</name><parameters><city>Paris</city><days>3</days></parameters></tool_call>"
        assert calls_of(text) == one("get_weather", city="Paris", days=3)

    @pytest.mark.parametrize("child", ["function_name", "invoke_name"])
    def test_child_elements_under_other_name_elements(self, child: str) -> None:
        """DeepSeek-V4 served without its parser wrote ``<invoke_name>``; ``<function_name>`` is the same idea."""
        text = f"<function_call>\n<{child}>read</{child}>\n<parameters>\n<path>/tmp/a.go</path>\n</parameters>\n</function_call>"
        assert calls_of(text) == one("read", path="/tmp/a.go")

    def test_a_call_in_its_definition_s_shape_is_a_call(self) -> None:
        """Arguments that are values, not a schema, beside the definition's description: the model called the tool."""
        text = json.dumps({"type": "function", "function": {"name": "list_directory", "description": "Lists files.", "parameters": {"path": "/home"}}})
        assert calls_of(text) == one("list_directory", path="/home")

    def test_a_definition_shaped_line_among_echoed_definitions_is_no_call(self) -> None:
        """A tiny model echoing its prompt garbles one definition's schema into values (gemma3-270m's
        recorded replies): among the other definitions it is an echo, not the answer's call."""
        good = json.dumps({"name": "search_code", "description": "Search.", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}})
        garbled = json.dumps({"name": "read_file", "description": "Read a file.", "parameters": {"path": "src/server.py"}})
        assert parse_response(f"# Tools\n\nYou can call these tools:\n\n{good}\n{garbled}\n").tool_calls == []
        nested = json.dumps({"name": "set_temperature", "description": "Set it.", "parameters": {"room": {"type": "string", "enum": ["kitchen"]}}})
        assert parse_response(nested).tool_calls == []  # values that are schemas: a garbled definition

    @pytest.mark.parametrize("parameters", [{"type": "object", "properties": {"path": {"type": "string"}}}, {}, {"required": ["path"]}])
    def test_a_definition_with_a_schema_or_nothing_is_no_call(self, parameters: dict) -> None:
        text = json.dumps({"name": "list_directory", "description": "Lists files.", "parameters": parameters})
        assert parse_response(text).tool_calls == []

    def test_name_line_then_json(self) -> None:
        assert calls_of('<tool_call>\nget_weather\n{"city": "Paris"}\n</tool_call>') == one("get_weather", city="Paris")

    def test_echoed_tool_definitions_are_not_calls(self) -> None:
        definitions = json.dumps([{"type": "function", "function": {"name": "get_weather", "description": "d", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}])
        parsed = parse_response(f"You have these tools:\n<tools>\n{definitions}\n</tools>\nAsk me anything.")
        assert parsed.tool_calls == []
        assert "<tools>" in parsed.content

    @pytest.mark.parametrize("tag", ["tools", "tool", "response"])
    def test_weak_tag_around_json_without_a_name_key_is_content(self, tag: str) -> None:
        text = f'<{tag}>{{"answer": 42, "unit": "km"}}</{tag}>'
        parsed = parse_response(text)
        assert parsed.tool_calls == [] and parsed.content == text and not parsed.diagnostics

    @pytest.mark.parametrize("key", ["name", "Name", "tool_name", "function", "TOOL"])
    def test_weak_tag_call_named_by_any_name_key_spelling(self, key: str) -> None:
        text = f'<tools>{{"{key}": "get_weather", "arguments": {{"city": "Paris"}}}}</tools>'
        assert calls_of(text) == one("get_weather", city="Paris")

    def test_weak_tag_name_key_after_a_tag_inside_a_string(self) -> None:
        """``<`` before the name key that does not reopen the tag: the family reads the JSON."""
        text = '<tools>{"arguments": {"html": "<b>hi</b>"}, "name": "post"}</tools>'
        assert calls_of(text) == one("post", html="<b>hi</b>")

    def test_weak_tag_name_key_only_after_the_tag_reopens_is_not_its_call(self) -> None:
        """A weak tag's call names itself before the tag opens again (the scan checks the same)."""
        text = '<tools>{"text": "see <tools>", "name": "f", "arguments": {}}</tools>'
        assert parse_response(text).tool_calls == []

    def test_several_call_objects_in_one_block(self) -> None:
        text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n{"name": "get_time", "arguments": {"tz": "CET"}}\n</tool_call>'
        assert names_args(parse_response(text).tool_calls) == sorted(one("get_weather", city="Paris") + one("get_time", tz="CET"))

    def test_several_call_objects_one_needing_repair(self) -> None:
        text = '<tool_call>{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": 1,}}\n{"name": "c", "arguments": {}}</tool_call>'
        parsed = parse_response(text)
        assert [c.name for c in parsed.tool_calls] == ["a", "b", "c"]
        assert parsed.tool_calls[1].repairs

    def test_a_block_of_many_broken_values_is_read_in_part_and_reported(self) -> None:
        text = "<tool_call>" + '{"name": "a", "arguments": {"x": 1,}}\n' * 50 + "</tool_call>"
        parsed = parse_response(text)
        assert 1 < len(parsed.tool_calls) < 50
        assert any("not read" in d.reason for d in parsed.diagnostics)

    def test_fenced_json_inside_a_call_tag(self) -> None:
        parsed = parse_response('<tool_call>\n```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```\n</tool_call> Done.')
        assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"}, "hermes")]
        assert parsed.content == "Done."

    def test_a_code_fence_inside_a_call_tag_that_holds_no_json_is_not_a_call(self) -> None:
        text = "<tool_call>```python\nprint(1)\n```</tool_call>"
        assert parse_response(text).tool_calls == []

    def test_tags_in_prose_are_content(self) -> None:
        text = "Models often wrap calls in `<tool_call>` tags, like <tools> in Qwen templates."
        parsed = parse_response(text)
        assert parsed.tool_calls == [] and parsed.content == text

    def test_unreadable_json_in_a_call_tag_is_reported(self) -> None:
        parsed = parse_response("<tool_call>{not: json: at all}</tool_call>")
        assert parsed.tool_calls == []
        assert parsed.unparsed

    def test_render_round_trip(self) -> None:
        calls = [ToolCall("get_weather", {"city": "Paris"}), ToolCall("x", {})]
        assert names_args(parse_response(get_family("hermes").render(calls)).tool_calls) == names_args(calls)


# ---------------------------------------------------------------- json


class TestJson:
    def test_whole_content_call(self) -> None:
        assert calls_of('{"name": "get_weather", "parameters": {"city": "Paris"}}') == one("get_weather", city="Paris")

    def test_xlam_list(self) -> None:
        text = '[{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}]'
        assert [c.name for c in parse_response(text).tool_calls] == ["a", "b"]

    def test_semicolon_separated_llama32_calls(self) -> None:
        text = '{"name": "a", "parameters": {}}; {"name": "b", "parameters": {"y": 2}}'
        assert [c.name for c in parse_response(text).tool_calls] == ["a", "b"]

    def test_function_wrapper_and_tool_args_variants(self) -> None:
        assert calls_of('{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}') == one("f", a=1)
        assert calls_of('{"tool": "f", "args": {"a": 1}}') == one("f", a=1)

    def test_after_a_lead_in_on_the_same_line(self) -> None:
        parsed = parse_response('Here is the function call: {"name": "f", "parameters": {"a": "b"}}')
        assert names_args(parsed.tool_calls) == one("f", a="b")
        assert parsed.content == "Here is the function call:"

    def test_after_a_lead_in_on_the_same_line_but_prose_follows_is_not_a_call(self) -> None:
        assert parse_response('The format is: {"name": "f", "arguments": {}} and then you wait.').tool_calls == []

    def test_xlam_v1_thought_and_tool_calls_wrapper(self) -> None:
        text = '{"thought": "I need the weather.", "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}'
        assert calls_of(text) == one("get_weather", city="Paris")

    def test_openai_message_echoed_as_content(self) -> None:
        text = json.dumps({"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]})
        parsed = parse_response(text)
        assert names_args(parsed.tool_calls) == one("get_weather", city="Paris")
        assert parsed.tool_calls[0].id == "call_1"

    def test_openai_message_echoed_without_its_role(self) -> None:
        """Its first key, "content", is no call key: the object was never read (zeroclaw's tests)."""
        text = json.dumps({"content": "Let me check that for you.", "tool_calls": [
            {"type": "function", "function": {"name": "shell", "arguments": '{"command": "ls -la"}'}}]})
        assert calls_of(text) == one("shell", command="ls -la")
        assert calls_of('{"content": "hello"}') == [] and calls_of('{"content": "x", "tool_calls": []}') == []

    @pytest.mark.parametrize("text", [
        json.dumps({"role": "assistant", "content": None, "function_call": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}),
        json.dumps({"function_call": {"name": "get_weather", "arguments": {"city": "Paris"}}}),
        json.dumps({"tool_call": {"name": "get_weather", "arguments": {"city": "Paris"}}}),
    ], ids=["openai legacy message", "function_call alone", "tool_call alone"])
    def test_a_single_call_wrapper_echoed_as_content(self, text: str) -> None:
        """OpenAI's legacy ``function_call`` message field, written into the content by a model
        trained on such transcripts, and the singular ``tool_call`` some write instead."""
        assert calls_of(text) == one("get_weather", city="Paris")

    @pytest.mark.parametrize("text", [
        '{"thought": "It is sunny.", "answer": "Paris"}',
        '{"function_call": "auto"}',
        '{"function_call": {"name": "f", "arguments": {}}, "result": 3}',
        '{"tool_calls": [], "content": "nothing to call"}',
        '{"tool_calls": [{"name": "f", "arguments": {}}], "result": 3}',
        '{"role": "user", "content": "hi"}',
    ])
    def test_objects_that_only_resemble_a_call_wrapper_are_not_calls(self, text: str) -> None:
        assert parse_response(text).tool_calls == []

    def test_after_a_lead_in_ending_the_prose(self) -> None:
        text = 'I apologize for the error. Here is the revised tool call:\n\n{"name": "f", "parameters": {"a": "b"}}'
        parsed = parse_response(text)
        assert names_args(parsed.tool_calls) == one("f", a="b")
        assert parsed.content == "I apologize for the error. Here is the revised tool call:"

    def test_json_example_inside_an_explanation_is_not_a_call(self) -> None:
        text = 'To call a tool, write:\n{"name": "get_weather", "arguments": {"city": "Paris"}}\nand the runtime will answer.'
        assert parse_response(text).tool_calls == []

    def test_inline_json_in_a_sentence_is_not_a_call(self) -> None:
        text = 'The payload {"name": "get_weather", "arguments": {}} is what the API expects.'
        assert parse_response(text).tool_calls == []

    @pytest.mark.parametrize(
        "text",
        [
            '{"message": "Hello, world!", "type": "hello_world"}',
            '{"status": 400, "error_messages": [{"target": "/location"}]}',
            '{"order_id": "ORD789", "status": "processing"}',
            '{"name": "jeff"}',
            "[special delivery]",
            "[1, 2, 3]",
            "for { fmt.Println(1) }",
        ],
    )
    def test_json_that_is_not_a_call(self, text: str) -> None:
        parsed = parse_response(text)
        assert parsed.tool_calls == [] and parsed.content == text

    def test_name_only_object_counts_when_the_name_is_offered(self) -> None:
        assert calls_of('{"name": "get_time"}', tools=TOOLS) == one("get_time")

    def test_offered_tool_on_its_own_line_after_prose(self) -> None:
        text = 'Let me look that up.\n{"name": "get_weather", "arguments": {"city": "Paris"}}'
        assert calls_of(text, tools=TOOLS) == one("get_weather", city="Paris")
        assert calls_of(text) == []  # without tools, prose then JSON is only a call after a lead-in

    def test_call_after_reasoning(self) -> None:
        parsed = parse_response('<think>user wants weather</think>\n\n{"name": "get_weather", "arguments": {"city": "Paris"}}')
        assert names_args(parsed.tool_calls) == one("get_weather", city="Paris")
        assert parsed.thinking == "user wants weather"

    def test_broken_call_json_is_reported_not_shown(self) -> None:
        parsed = parse_response('{"name":"get_weather","parameters{"key"]="Tokyo"}}')
        assert parsed.tool_calls == [] and parsed.unparsed

    def test_render_round_trip(self) -> None:
        calls = [ToolCall("a", {"x": [1, {"y": None}]}), ToolCall("b", {})]
        assert names_args(parse_response(get_family("json").render(calls)).tool_calls) == names_args(calls)


# ---------------------------------------------------------------- fenced


class TestFenced:
    def test_json_fence_is_a_call_when_it_is_the_response(self) -> None:
        parsed = parse_response('```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```')
        assert names_args(parsed.tool_calls) == one("get_weather", city="Paris")
        assert parsed.content == ""

    def test_call_labels_and_lists(self) -> None:
        text = 'Calling now.\n```tool_call\n[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]\n```\nMore prose.'
        assert [c.name for c in parse_response(text).tool_calls] == ["a", "b"]

    def test_code_sample_in_an_answer_is_not_a_call(self) -> None:
        text = 'The API takes:\n```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```\nThen it returns the forecast.'
        assert parse_response(text).tool_calls == []

    def test_other_languages_are_never_calls(self) -> None:
        text = '```python\nprint({"name": "x", "arguments": {}})\n```'
        assert parse_response(text).tool_calls == []

    def test_render_round_trip(self) -> None:
        calls = [ToolCall("a", {"q": "```"})]
        rendered = get_family("fenced").render(calls)
        assert rendered.startswith("```json\n")
        assert names_args(parse_response(rendered).tool_calls) == names_args(calls)


# ---------------------------------------------------------------- llama


class TestLlama:
    def test_python_tag_json(self) -> None:
        parsed = parse_response('<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eom_id|>')
        assert names_args(parsed.tool_calls) == one("get_weather", city="Paris")
        assert parsed.content == ""
        assert parsed.tool_calls[0].format == "llama"

    def test_builtin_call_parsed_as_literals(self) -> None:
        parsed = parse_response('<|python_tag|>brave_search.call(query="latest llama release")<|eom_id|>')
        assert names_args(parsed.tool_calls) == one("brave_search", query="latest llama release")

    def test_builtin_call_never_evaluates(self) -> None:
        parsed = parse_response('<|python_tag|>brave_search.call(query=__import__("os").system("echo x"))')
        assert parsed.tool_calls == []

    @pytest.mark.parametrize(
        "text",
        [
            '<|python_tag|>import webbrowser\n\nwebbrowser.open("https://example.com")',
            '<|python_tag|>{"message": "Hello, world!", "type": "hello_world"}',
            '<|python_tag|>robot.parse("hello", lang="python")',
        ],
    )
    def test_code_and_answers_after_the_tag_are_not_calls(self, text: str) -> None:
        assert parse_response(text).tool_calls == []

    def test_code_interpreter_when_offered(self) -> None:
        tools = [{"name": "code_interpreter", "parameters": {"type": "object", "properties": {"code": {"type": "string"}}}}]
        parsed = parse_response("<|python_tag|>print(1 + 1)<|eom_id|>", tools=tools)
        assert names_args(parsed.tool_calls) == one("code_interpreter", code="print(1 + 1)")

    def test_end_of_turn_tokens_are_removed(self) -> None:
        assert parse_response("The answer is 4.<|eot_id|>").content == "The answer is 4."


# ---------------------------------------------------------------- mistral


class TestMistral:
    def test_v3_list_with_close_tag(self) -> None:
        text = '[TOOL_CALLS] [{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}][/TOOL_CALLS]'
        parsed = parse_response(text)
        assert [c.name for c in parsed.tool_calls] == ["a", "b"] and parsed.content == ""

    def test_v3_lists_each_behind_its_own_tag(self) -> None:
        # the tag starts like a JSON list: it ends the first list's block instead of being read as one
        for joint in ("", "\n", " "):
            text = f'[TOOL_CALLS] [{{"name": "a", "arguments": {{"x": 1}}}}]{joint}[TOOL_CALLS] [{{"name": "b", "arguments": {{}}}}] done'
            parsed = parse_response(text)
            assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("a", {"x": 1}), ("b", {})]
            assert parsed.content == "done" and parsed.diagnostics == []
            assert_stream_matches(text)

    def test_v11_name_args_repeated(self) -> None:
        text = '[TOOL_CALLS]get_weather[ARGS]{"location": "NYC"}[TOOL_CALLS]get_time[ARGS]{"timezone": "EST"}'
        assert [c.name for c in parse_response(text).tool_calls] == ["get_weather", "get_time"]

    def test_name_then_json_without_args_token_and_call_id(self) -> None:
        assert calls_of('[TOOL_CALLS]f{"a": 1}') == one("f", a=1)
        parsed = parse_response('[TOOL_CALLS]f[CALL_ID]abc123XYZ[ARGS]{"a": 1}')
        assert parsed.tool_calls[0].id == "abc123XYZ"

    def test_braces_and_quotes_inside_strings(self) -> None:
        assert calls_of('[TOOL_CALLS]format[ARGS]{"template": "Hello {name}! \\"x\\""}') == one("format", template='Hello {name}! "x"')

    def test_content_around_the_call(self) -> None:
        parsed = parse_response('content\u00a0[TOOL_CALLS]test[ARGS]{"a": 1}some content after')
        assert parsed.content == "content\nsome content after"

    def test_partial_tag_is_content(self) -> None:
        parsed = parse_response("abc[TOOL not a tag")
        assert parsed.tool_calls == [] and parsed.content == "abc[TOOL not a tag"

    def test_truncated_after_the_tag(self) -> None:
        parsed = parse_response("Sure.[TOOL_CALLS]get_wea")
        assert parsed.tool_calls == []
        assert any(d.kind is DiagnosticKind.TRUNCATED for d in parsed.diagnostics)


# ---------------------------------------------------------------- small tagged families


@pytest.mark.parametrize(
    ("text", "family"),
    [
        ('<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]', "granite"),
        ('<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]<|/tool_call|>', "granite"),  # Phi-4-mini
        ('<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_calls>', "jamba"),
        ('<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</TOOLCALL>', "jamba"),  # Llama-Nemotron
        ('<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|>', "kimi_k2"),
        ('<|python_tag|>get_weather(city="Paris")<|eom_id|>', "llama"),
        ('<|python_tag|>[get_weather(city="Paris")]', "llama"),
        ('<|START_ACTION|>[{"tool_name": "get_weather", "parameters": {"city": "Paris"}}]<|END_ACTION|>', "command_r"),
        ('Action: ```json\n[{"tool_name": "get_weather", "parameters": {"city": "Paris"}}]\n```', "command_r"),
        ('functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]', "functools"),
        ('<|action_start|><|plugin|>\n{"name": "get_weather", "parameters": {"city": "Paris"}}<|action_end|>', "internlm"),
        (
            '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Paris"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
            "deepseek",
        ),
        ('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>', "deepseek"),
        ('<|tool▁calls▁begin|><|tool▁call▁begin|>function<|tool▁sep|>get_weather\n```json\n{"city": "Paris"}\n```<|tool▁call▁end|><|tool▁calls▁end|>', "deepseek"),
        (
            '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>',
            "kimi_k2",
        ),
    ],
)
def test_tagged_family_reads_its_published_syntax(text: str, family: str) -> None:
    parsed = parse_response("Let me check. " + text)
    assert names_args(parsed.tool_calls) == one("get_weather", city="Paris")
    assert parsed.tool_calls[0].format == family
    assert parsed.content == "Let me check."


def test_python_tag_with_code_is_not_a_tool_call() -> None:
    """Llama's code-interpreter mode: builtins without tools, unoffered names with tools."""
    assert parse_response('<|python_tag|>print("hello")<|eom_id|>').tool_calls == []
    assert parse_response('<|python_tag|>compute(x=1)', tools=[{"name": "get_weather"}]).tool_calls == []


def test_kimi_keeps_the_call_id() -> None:
    text = '<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_call_begin|>functions.b:1<|tool_call_argument_begin|>{"x": 1}<|tool_call_end|><|tool_calls_section_end|>'
    calls = parse_response(text).tool_calls
    assert [(c.name, c.id) for c in calls] == [("a", "functions.a:0"), ("b", "functions.b:1")]


def test_command_r_directly_answer_is_no_call() -> None:
    text = 'Action: ```json\n[{"tool_name": "directly_answer", "parameters": {}}]\n```'
    assert parse_response(text).tool_calls == []


def test_functools_inside_an_identifier_is_not_a_trigger() -> None:
    assert parse_response('x.functools[{"name": "a", "arguments": {}}]').tool_calls == []


def test_deepseek_several_calls_and_end_of_sentence() -> None:
    text = (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>a<｜tool▁sep｜>{}<｜tool▁call▁end｜>"
        '<｜tool▁call▁begin｜>b<｜tool▁sep｜>{"x": 1}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>'
    )
    parsed = parse_response(text)
    assert [c.name for c in parsed.tool_calls] == ["a", "b"] and parsed.content == ""


@pytest.mark.parametrize(
    "family", ["hermes", "json", "fenced", "llama", "mistral", "granite", "jamba", "command_r", "functools", "deepseek", "kimi_k2", "internlm"]
)
def test_render_then_parse_in_auto_mode(family: str) -> None:
    calls = [ToolCall("get_weather", {"city": "Paris", "days": [1, 2], "opts": {"u": None}}), ToolCall("ping", {})]
    parsed = parse_response("Here you go:\n" + get_family(family).render(calls), format=family)
    assert names_args(parsed.tool_calls) == names_args(calls)
    assert all(c.format == family for c in parsed.tool_calls)
    auto = parse_response(get_family(family).render(calls))
    assert names_args(auto.tool_calls) == names_args(calls)


@pytest.mark.parametrize(
    "family", ["hermes", "json", "fenced", "llama", "mistral", "granite", "jamba", "command_r", "functools", "deepseek", "kimi_k2", "internlm"]
)
def test_family_has_summary_and_never_raises_on_its_truncated_render(family: str) -> None:
    fam = get_family(family)
    assert fam.summary
    rendered = fam.render([ToolCall("get_weather", {"city": "Paris"})])
    for cut in range(len(rendered)):
        parse_response(rendered[:cut])  # must not raise


# ---------------------------------------------------------------- prose that only looks like calls

TOOL_PROSE = [
    'To call a tool, emit `<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>` in your reply.',
    'Example output:\n```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```\nThe model then waits for the result.',
    "See [1] and [2]. Also {braces} and [TOOL] stuff.",
    'Here is the data:\n{"city": "Paris", "temp": 21}',
    'The result was:\n{"name": "Paris", "population": 2100000}',
    "I will call get_weather now.",
    'Answer:\n[{"name": "Alice", "age": 3}, {"name": "Bob", "age": 4}]',
    '{"name": "Alice", "age": 30}',
    'Here is the JSON you asked for:\n{"name": "Alice", "arguments": "none"}',
    "Use `[TOOL_CALLS]` followed by the name, or `functools[...]` for Phi-4.",
]


@pytest.mark.parametrize("text", TOOL_PROSE)
@pytest.mark.parametrize("with_tools", [False, True])
def test_prose_about_tools_is_not_a_call(text: str, with_tools: bool) -> None:
    parsed = parse_response(text, tools=TOOLS if with_tools else None)
    assert parsed.tool_calls == []
    assert parsed.content == text


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}<tool_call>',
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n<tool_call>\n',
        '<tools>{"name": "get_weather", "arguments": {"city": "Paris"}}<tools>',
    ],
)
def test_the_opening_tag_written_again_as_the_last_closer_is_part_of_the_call(text: str) -> None:
    from .conftest import assert_every_cut_matches

    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert parsed.content == ""
    assert any("written for </" in r for r in parsed.tool_calls[0].repairs)
    assert_every_cut_matches(text, TOOLS, step=9)


def test_an_opening_tag_after_a_call_that_opens_another_call_stays_an_opener() -> None:
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}<tool_call>{"name": "get_time", "arguments": {}}</tool_call>'
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Paris"}), ("get_time", {})]
    assert all(not r.endswith("written for </tool_call>") for r in parsed.tool_calls[0].repairs)


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name":"write_file","arguments":{"content":"incomplete...</tool_call>',  # Ollama's qwen3 tests
        'Here is the code:\n<tool_call>{"name":"write_file","arguments":{"content":"...',
        '{"name": "write_file", "arguments": {"content": "half a fi',
        '[TOOL_CALLS]write_file[ARGS]{"content": "half',
    ],
)
def test_a_call_whose_argument_string_the_output_cut_off_is_reported_not_run(text: str) -> None:
    """Closing brackets is a repair with one meaning; finishing a cut string is not (half a file written)."""
    from .conftest import assert_every_cut_matches

    parsed = parse_response(text, tools=[{"name": "write_file"}])
    assert parsed.tool_calls == []
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.TRUNCATED]
    assert_every_cut_matches(text, [{"name": "write_file"}], step=11)
