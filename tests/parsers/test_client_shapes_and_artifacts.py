"""Shapes clients ask their models for, and what clients leave in a reply.

* mcp-client-for-ollama's ``{"thoughts": ..., "tool_request": {call}}`` and its
  wrapper-less ``<tool_name>`` / ``<arguments>`` elements (``name_element``);
* ``{"action": {"name": NAME}, "arguments": {...}}``: the name one level down;
* ``undefined`` glued to a call by a JavaScript client (``String(undefined)``);
* a long string written as ``"piece" +`` newline ``"piece"`` (llama3.1 through Ollama);
* JSON calls a line each in a fence, each line ending in a comment;
* a Hermes-style body whose name element is bent toward ``<function=NAME>``.

Each shape with the prose or data that must stay what it is.
"""

from __future__ import annotations

from typing import Any

import pytest

from utp.parsers import parse_response
from utp.types import DiagnosticKind

from .conftest import assert_stream_matches


def _tool(tool_name: str, **properties: str) -> dict[str, Any]:
    return {"name": tool_name, "parameters": {"type": "object", "properties": {k: {"type": t} for k, t in properties.items()}}}


FILES = [_tool("list_files", path="string"), _tool("read_file", path="string"), _tool("write_file", path="string", content="string")]
DONE = [_tool("task_complete", result="string"), _tool("search", query="string")]


def _calls(text: str, tools: list[dict[str, Any]] | None) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


# --------------------------------------------------------------------------- tool_request


@pytest.mark.parametrize("tools", [FILES, None])
def test_a_call_under_tool_request_beside_the_thoughts(tools: list | None) -> None:
    text = '```json\n{\n  "thoughts": "List the home directory first.",\n  "tool_request": {"name": "list_files", "parameters": {"path": "/root"}}\n}\n```'
    assert _calls(text, tools) == [("list_files", {"path": "/root"})]
    assert _calls('{"tool_request": {"name": "read_file", "arguments": {"path": "a.txt"}}}', tools) == [("read_file", {"path": "a.txt"})]


def test_tool_request_holding_no_call_is_data() -> None:
    assert _calls('{"tool_request": {"status": "pending", "id": 4}}', FILES) == []
    assert _calls("Send a tool_request with the tool's name and parameters.", FILES) == []


# --------------------------------------------------------------------------- the name one level down


def test_the_name_under_action_as_an_object_and_the_arguments_beside_it() -> None:
    assert _calls('{"action": {"name": "task_complete"}, "arguments": {"result": "Done"}}', DONE) == [("task_complete", {"result": "Done"})]
    # no arguments under ``arguments`` itself is a call without arguments
    assert _calls('{   "action": {     "name": "task_complete"   },   "arguments": {} }', DONE) == [("task_complete", {})]


def test_the_name_object_names_an_offered_tool_or_it_is_data() -> None:
    assert _calls('{"action": {"name": "celebrate"}, "arguments": {}}', DONE) == []
    assert _calls('{"action": {"name": "task_complete", "at": 3}, "arguments": {}}', DONE) == []
    assert _calls('{"action": {"name": "task_complete"}, "arguments": {"colour": "red"}}', DONE) == []


# --------------------------------------------------------------------------- a client's glued undefined


def test_undefined_glued_to_a_call_is_the_clients_word() -> None:
    text = 'I need to complete this task.\n\n{"name": "task_complete", "arguments": {"result": "ok"}}undefined\n\nThe task is now done.'
    parsed = parse_response(text, tools=DONE)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("task_complete", {"result": "ok"})]
    assert "undefined" not in parsed.content
    assert_stream_matches(text)


def test_two_calls_each_followed_by_undefined() -> None:
    text = ('First I\'ll do this:\n{   "action": {     "name": "search"   },   "arguments": {"query": "test"} }\n\n'
            'Then I\'ll complete:\n{"name": "task_complete", "arguments": {"result": "Done"}}undefined')
    assert _calls(text, DONE) == [("search", {"query": "test"}), ("task_complete", {"result": "Done"})]


def test_undefined_as_a_word_of_prose_stays() -> None:
    parsed = parse_response('The value was undefined when {"name": "x"} ran.', tools=DONE)
    assert parsed.tool_calls == [] and "undefined" in parsed.content


# --------------------------------------------------------------------------- "a" + "b"


def test_a_string_written_as_pieces_joined_with_plus() -> None:
    text = ('{"name": "write_file", "parameters": {"path": "/tmp/sysinfo.sh", "content": "echo \\"Host: $(hostname)\\"\\n" +\n'
            '"df -h /\\n" +\n"top -bn 3 | head\\n"}}')
    parsed = parse_response(text, tools=FILES)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [
        ("write_file", {"path": "/tmp/sysinfo.sh", "content": 'echo "Host: $(hostname)"\ndf -h /\ntop -bn 3 | head\n'})]
    assert any("joined string pieces" in d.reason for d in parsed.diagnostics)


def test_a_plus_inside_a_quoted_value_is_the_values_text() -> None:
    text = '{"name": "write_file", "arguments": {"path": "a.py", "content": "print("a" + "b")"}}'
    assert _calls(text, FILES) == [("write_file", {"path": "a.py", "content": 'print("a" + "b")'})]


# --------------------------------------------------------------------------- JSON lines with comments


def test_json_lines_in_a_fence_each_with_a_comment() -> None:
    text = ('```json\n{"name": "read_file", "parameters": {"path": "a.txt"}}  # read it first\n'
            '{"name": "write_file", "parameters": {"path": "b.txt", "content": "x"}} // then copy\n```')
    assert _calls(text, FILES) == [("read_file", {"path": "a.txt"}), ("write_file", {"path": "b.txt", "content": "x"})]


def test_a_suggested_sequence_naming_a_tool_nobody_offered_is_no_call_at_all() -> None:
    """llama3.1 shows the user how they "could modify" a plan, one step a tool it was never given:
    reading the steps it could (once only the first) would run part of a plan it did not make."""
    text = ("Here's how you could modify your original command to achieve this:\n\n```\n"
            '{"name": "write_file", "parameters": {"content": "echo hi", "path": "/tmp/s.sh"}}\n'
            '{"name": "wait_for_file", "parameters": {"path": "/tmp/s.sh"}} # Wait for it to be created\n'
            '{"name": "read_file", "parameters": {"path": "/tmp/s.sh"}}  # And finally read it\n```\n\n'
            "This will ensure that the file is created first.")
    assert _calls(text, FILES) == []


# --------------------------------------------------------------------------- <name=NAME


@pytest.mark.parametrize("name_element", ["<name=read_file</name>", "<name=read_file>", "<function=read_file</function>"])
def test_a_name_element_bent_toward_function_equals(name_element: str) -> None:
    text = f'<tool>\n{name_element}\n<arguments>{{"path": "./Cargo.toml"}}</arguments>\n</tool>'
    parsed = parse_response(text, tools=FILES)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("read_file", {"path": "./Cargo.toml"})]
    assert any("<name=NAME>" in d.reason for d in parsed.diagnostics)


def test_qwen3_coder_function_equals_inside_the_block_is_still_its_own() -> None:
    parsed = parse_response("<tool_call>\n<function=read_file>\n<parameter=path>\na.txt\n</parameter>\n</function>\n</tool_call>", tools=FILES)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [("read_file", {"path": "a.txt"}, "qwen3_coder")]


# --------------------------------------------------------------------------- name_element


def test_name_and_arguments_elements_after_prose_json_then_elements() -> None:
    text = ("First call:\n<tool_name>list_files</tool_name>\n<arguments>{\"path\": \"/root\"}</arguments>\n\n"
            "Then another call:\n<tool_name>read_file</tool_name>\n<arguments>\n  <path>/root/README.md</path>\n</arguments>")
    parsed = parse_response(text, tools=FILES)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [
        ("list_files", {"path": "/root"}, "name_element"), ("read_file", {"path": "/root/README.md"}, "name_element")]
    assert parsed.content.split() == ["First", "call:", "Then", "another", "call:"]


def test_element_values_are_decoded_when_json() -> None:
    text = "<tool_name>math.calculate</tool_name>\n<arguments>\n  <a>5</a>\n  <precision>2.5</precision>\n  <on>true</on>\n</arguments>"
    assert _calls(text, None) == [("math.calculate", {"a": 5, "precision": 2.5, "on": True})]


def test_a_name_element_alone_is_a_call_only_for_an_offered_tool() -> None:
    assert _calls("<tool_name>list_files</tool_name>", FILES) == [("list_files", {})]
    assert _calls("<tool_name>list_files</tool_name>", None) == []
    assert _calls("<tool_name>celebrate</tool_name>", FILES) == []


def test_a_name_element_in_a_sentence_is_prose() -> None:
    text = 'Write <tool_name>list_files</tool_name> then <arguments>{"path": "/"}</arguments> to call it.'
    assert _calls(text, FILES) == []


def test_arguments_the_output_ends_inside_are_reported_not_run() -> None:
    parsed = parse_response('<tool_name>read_file</tool_name>\n<arguments>{"path": "/root/RE', tools=FILES)
    assert parsed.tool_calls == []
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.TRUNCATED]


def test_a_result_the_model_made_up_names_a_tool_without_calling_it() -> None:
    """qwen2.5-coder-0.5b under the Anthropic XML prompt writes its own ``<function_results>``."""
    text = ("<function_results>\n<result>\n<tool_name>read_file</tool_name>\n<stdout>\n# Shopping\n- eggs\n</stdout>\n</result>\n"
            "<result>\n<tool_name>write_file</tool_name>\n<error>\nERROR (tier_violation): needs RUN\n</error>\n</result>\n</function_results>")
    assert _calls(text, FILES) == []
    assert _calls("<tool_name>read_file</tool_name>\n<stdout>\nx\n</stdout>", FILES) == []


# --------------------------------------------------------------------------- DeepSeek without its separator


@pytest.mark.parametrize(("begin", "end"), [
    ("<|tool_calls_begin|><|tool_call_begin|>", "<|tool_call_end|><|tool_calls_end|>"),
    ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>", "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
])
def test_deepseek_function_and_name_on_lines_of_their_own(begin: str, end: str) -> None:
    parsed = parse_response(f'{begin}function\nget_weather\n{{"city": "Berlin"}}{end}', tools=None)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("get_weather", {"city": "Berlin"})]
    assert any("<｜tool▁sep｜> belongs" in d.reason for d in parsed.diagnostics)
    assert _calls(f"{begin}function\nlist_items\n{end}", None) == [("list_items", {})]


def test_deepseek_without_separator_or_function_line_is_still_reported() -> None:
    parsed = parse_response('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather\n{"city": "Berlin"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>', tools=None)
    assert parsed.tool_calls == [] and [d.kind for d in parsed.diagnostics] == [DiagnosticKind.UNPARSEABLE]


# --------------------------------------------------------------------------- a tool's element holding its call again


def test_a_tool_element_holding_the_whole_call_object_is_unwrapped() -> None:
    hangup = [_tool("hangup_call", farewell_message="string")]
    text = '<hangup_call>\n{"name":"hangup_call","arguments":{"farewell_message":"Bye"}}\n</hangup_call>\nBye'
    parsed = parse_response(text, tools=hangup)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("hangup_call", {"farewell_message": "Bye"})]
    assert any("unwrapped to its arguments" in d.reason for d in parsed.diagnostics)
    # a tool that takes a ``name`` gets the object as its arguments' values, not unwrapped
    named = [_tool("rename", name="string", arguments="object")]
    assert _calls('<rename>{"name": "rename", "arguments": {"to": "b"}}</rename>', named) == [("rename", {"name": "rename", "arguments": {"to": "b"}})]


# --------------------------------------------------------------------------- a list with one unreadable call


def test_a_list_starting_the_answer_keeps_its_readable_calls() -> None:
    text = ('[\n  {"type":"function","function":{"name":"read_file","arguments":{"path":"README.md"}}},\n'
            '  {"type":"function","function":{"name":123,"arguments":{}}},\n'
            '  {"type":"function","function":{"name":"list_files","arguments":{"path":"."}}}\n]')
    parsed = parse_response(text, tools=FILES)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("read_file", {"path": "README.md"}), ("list_files", {"path": "."})]
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.UNPARSEABLE]


def test_a_list_mixing_records_and_calls_stays_data() -> None:
    assert _calls('[{"name": "Alice", "age": 3}, {"name": "read_file", "arguments": {"path": "a"}}]', FILES) == []
    # and without tools nothing vouches for the readable ones
    assert _calls('[{"name": "read_file", "arguments": {"path": "a"}}, {"name": 5, "arguments": {}}]', None) == []


# --------------------------------------------------------------------------- another element's closer


@pytest.mark.parametrize("parameter", ['<｜DSML｜parameter name="path" string="true">', '<｜DSML｜parameter name="path">'])
def test_a_dsml_value_closed_by_another_elements_closer(parameter: str) -> None:
    text = f'<｜DSML｜tool_calls>\n<｜DSML｜invoke name="read_file">\n{parameter}/tmp/a.txt</content>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>'
    parsed = parse_response(text, tools=FILES)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("read_file", {"path": "/tmp/a.txt"})]
    assert any("written as </content>" in d.reason for d in parsed.diagnostics)


def test_a_value_holding_an_element_keeps_its_closer() -> None:
    text = '<function_calls>\n<invoke name="write_file">\n<parameter name="content"><b>bold</b>\n</invoke>\n</function_calls>'
    assert _calls(text, FILES) == [("write_file", {"content": "<b>bold</b>"})]


# --------------------------------------------------------------------------- <tool_call name="f"> and a fence


@pytest.mark.parametrize("fence", ["```json\n", "```\n"])
def test_a_tag_naming_its_tool_with_the_arguments_fenced(fence: str) -> None:
    text = f'Here\'s the weather: <tool_call name="read_file">\n{fence}{{\n  "path": "a.txt"\n}}\n```\n</tool_call> Hope that helps!'
    parsed = parse_response(text, tools=FILES)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("read_file", {"path": "a.txt"})]
    assert parsed.content.split() == ["Here's", "the", "weather:", "Hope", "that", "helps!"]
    assert_stream_matches(text)


def test_two_named_tags_each_fenced_glued_together() -> None:
    text = '<tool_call name="list_files">```json\n{}\n```</tool_call><tool_call name="read_file">```json\n{"path": "b"}\n```</tool_call>'
    assert _calls(text, FILES) == [("list_files", {}), ("read_file", {"path": "b"})]


def test_a_named_tag_before_a_fence_of_prose_is_shown_not_used() -> None:
    assert _calls('<tool_call name="read_file">```text\nsee the docs\n```</tool_call>', FILES) == []


def test_a_sign_apart_from_its_digits() -> None:
    text = '<tool_call>\n{"name": "write_file", "arguments": {"path": "fix bug", "content": - 5}}\n</tool_call>'
    assert _calls(text, [_tool("write_file", path="string", content="integer")]) == [("write_file", {"path": "fix bug", "content": -5})]


# --------------------------------------------------------------------------- the arguments element's names


@pytest.mark.parametrize("element", ["tool_arguments", "params", "tool_args"])
def test_arguments_elements_named_as_json_names_its_arguments_key(element: str) -> None:
    text = f'<tool_call>\n  <tool_name>read_file</tool_name>\n  <{element}>{{"path": "a.txt"}}</{element}>\n</tool_call>'
    assert _calls(text, FILES) == [("read_file", {"path": "a.txt"})]
    assert_stream_matches(text)


def test_arguments_quoted_as_cdata_and_an_empty_arguments_element() -> None:
    cdata = '<tool_call>\n  <tool_name>read_file</tool_name>\n  <tool_arguments><![CDATA[{"path":"a&b.txt"}]]></tool_arguments>\n</tool_call>'
    assert _calls(cdata, FILES) == [("read_file", {"path": "a&b.txt"})]
    empty = "<tool_call>\n  <tool_name>list_files</tool_name>\n  <tool_arguments></tool_arguments>\n</tool_call>"
    assert _calls(empty, FILES) == [("list_files", {})]
