"""A capital label before a call object, a JSON body under a name attribute, and names under a namespace.

Sources (transcribed outside the repository, see docs/accuracy.md):

* nos-coding/holmium's ``TOOL_CALL: {"tool": …, "params": {…}}`` protocol, two calls a blank line apart;
* a Chinese agent's ``<tool name="read_json">{"file_path": "test.json"}</tool>`` (stored file 58113987522);
* a Gemma namespaced call ``<|tool_call>call:attest.list_notes(path="")<tool_call|>`` (59130430014);
* swift-lm-response-parser's InternLM case ``<|action_start|> <|plugin|>{…}``.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.types import Tool

from .conftest import assert_every_cut_matches

A, B = Tool("a"), Tool("b")
READ_JSON = Tool("read_json", parameters={"type": "object", "properties": {"file_path": {"type": "string"}}})
MODIFY_JSON = Tool("modify_json", parameters={"type": "object", "properties": {"file_path": {"type": "string"}, "path": {"type": "string"}}})
LIST_NOTES = Tool("list_notes", parameters={"type": "object", "properties": {"path": {"type": "string"}}})


def _calls(text: str, tools: list[Tool] | None) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


# --- a label in capitals before a call object ------------------------------------------------------


def test_a_label_in_capitals_marks_each_call_line_as_a_bracket_does() -> None:
    """The first ``TOOL_CALL:`` line was a lead-in ending in a colon, so only the last call was read."""
    text = 'TOOL_CALL: {"tool": "a", "params": {}}\n\nTOOL_CALL: {"tool": "b", "params": {}}'
    assert _calls(text, [A, B]) == [("a", {}), ("b", {})]
    assert_every_cut_matches(text, [A, B], step=3)


@pytest.mark.parametrize(
    "text",
    [
        'NOTE: {"tool": "zz", "params": {}}\nok',  # a tool nobody offered
        'Tool call: {"tool": "a", "params": {}}\nThen I will wait.',  # a sentence's lead-in, not a label in capitals
    ],
)
def test_what_a_capital_label_does_not_make_a_call(text: str) -> None:
    assert _calls(text, [A, B]) == []


# --- a JSON body under a name attribute -------------------------------------------------------------


def test_a_tool_element_named_by_attribute_holding_a_json_object() -> None:
    """Only element bodies were read under ``<tool name="…">``."""
    text = '<tool name="read_json">{"file_path": "a.json"}</tool> 然后修改 <tool name="modify_json">{"file_path":"b.json","path":"title"}</tool>'
    assert _calls(text, [READ_JSON, MODIFY_JSON]) == [("read_json", {"file_path": "a.json"}), ("modify_json", {"file_path": "b.json", "path": "title"})]
    assert _calls("<tool name='read_json'>{}</tool>", [READ_JSON]) == [("read_json", {})]
    assert_every_cut_matches(text, [READ_JSON, MODIFY_JSON], step=5)


@pytest.mark.parametrize(
    "text",
    [
        '<tool name="read_json">{"file_path": </tool>',  # not JSON as written
        '<tool name="nobody">{"file_path": "a"}</tool>',  # a tool nobody offered
        '<tool name="read_json">["a.json"]</tool>',  # not an object
    ],
)
def test_a_named_tool_element_whose_json_body_is_no_call(text: str) -> None:
    assert _calls(text, [READ_JSON]) == []


# --- a name under a namespace of the model's own, inside call markup ------------------------------


def test_a_gemma_call_under_a_namespace_names_the_offered_tool_after_it() -> None:
    text = '<|tool_call>call:attest.list_notes(path="")<tool_call|>'
    parsed = parse_response(text, tools=[LIST_NOTES])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("list_notes", {"path": ""})]
    assert any("namespace 'attest.'" in repair for repair in parsed.tool_calls[0].repairs)
    assert_every_cut_matches(text, [LIST_NOTES], step=3)


def test_a_namespaced_name_an_offered_tool_has_whole_stays_whole() -> None:
    whole = Tool("attest.list_notes", parameters=LIST_NOTES.parameters)
    assert _calls('<|tool_call>call:attest.list_notes(path="")<tool_call|>', [whole, LIST_NOTES]) == [("attest.list_notes", {"path": ""})]


def test_a_method_in_a_code_sample_is_not_a_tool_under_a_namespace() -> None:
    sample = "```js\nreturn Promise.all([\n    t.test('run', { only: true }),\n  ]);\n```"
    assert _calls(sample, [Tool("test", parameters={"type": "object", "properties": {"path": {"type": "string"}}})]) == []


# --- InternLM's tokens with a blank between -----------------------------------------------------


def test_internlm_s_plugin_tokens_with_a_blank_between() -> None:
    text = '<|action_start|><|plugin|>{"name": "a", "parameters": {}}<|action_end|><|action_start|> <|plugin|>{"name": "b", "parameters": {}}<|action_end|>'
    assert _calls(text, [A, B]) == [("a", {}), ("b", {})]
    assert_every_cut_matches(text, [A, B], step=5)


# --- DeepSeek's DSML token spelt with doubled bars before and a spaced one after -------------------


def test_dsml_doubled_bars_then_one_spaced_bar() -> None:
    """deepseek-v4-flash's reply recorded in rust_tools' tests: ``<｜｜DSML ｜ invoke`` was no DSML mark."""
    text = '<｜｜DSML ｜ tool_calls>\n<｜｜DSML ｜ invoke name="mcp_browser_get_text">\n\n</｜｜DSML ｜ invoke>\n</｜｜DSML ｜ tool_calls>'
    tool = Tool("mcp_browser_get_text")
    assert _calls(text, [tool]) == [("mcp_browser_get_text", {})]
    assert_every_cut_matches(text, [tool], step=3)


def test_without_tools_a_label_in_capitals_still_leads_into_the_answer_s_call() -> None:
    """The label made the line a marker line, and a marker marks only offered tools' calls: with no
    tools the call after it, the whole answer, was lost (it read before the label was a marker)."""
    assert _calls('TOOL_CALL: {"tool": "read_file", "params": {"path": "a"}}', None) == [("read_file", {"path": "a"})]


# --- Gemma 4 12B's captures in Inferpal; a Swift app's fenced arguments under a name line ------------

RUN_TESTS = Tool("run_tests", parameters={"type": "object", "properties": {"filter": {"type": "string"}, "timeout_seconds": {"type": "integer"}}})
LIST_FILES = Tool("list_files", parameters={"type": "object", "properties": {"path": {"type": "string"}}})
SEARCH_IN_FILES = Tool("search_in_files", parameters={"type": "object", "properties": {"path": {"type": "string"}, "pattern": {"type": "string"}}})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('<tool_call>{"name":"run_tests","filter":"Pricing","timeout_seconds":60}</tool_call>', [("run_tests", {"filter": "Pricing", "timeout_seconds": 60})]),
        ('<tool_call>{"id":"call_1","type":"function","name":"list_files","path":"src"}</tool_call>', [("list_files", {"path": "src"})]),
    ],
)
def test_an_offered_tool_s_arguments_beside_its_name_inside_a_call_tag(text: str, expected: list) -> None:
    """Bare, such an object was a call; inside ``<tool_call>`` it was not."""
    assert _calls(text, [RUN_TESTS, LIST_FILES]) == expected
    assert_every_cut_matches(text, [RUN_TESTS, LIST_FILES], step=5)


def test_arguments_beside_a_name_inside_a_call_tag_must_be_the_tool_s_parameters() -> None:
    assert _calls('<tool_call>{"name":"run_tests","colour":"red"}</tool_call>', [RUN_TESTS]) == []


def test_hermes_json_written_inside_gemma_s_call_tokens() -> None:
    text = '<|tool_call>call:tool_call>\n{"name": "search_in_files", "arguments": {"path": "/ws", "pattern": "ApplyDiscount"}}\n</tool_call>'
    parsed = parse_response(text, tools=[SEARCH_IN_FILES])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("search_in_files", {"path": "/ws", "pattern": "ApplyDiscount"})]
    assert parsed.content == ""
    assert_every_cut_matches(text, [SEARCH_IN_FILES], step=3)


def test_a_name_line_then_its_arguments_in_a_fence_inside_the_tag() -> None:
    first, second = Tool("first"), Tool("second")
    text = 'I will check. <tool_call>first\n```\n{"q":"a"}\n```</tool_call><tool_call>second\n```json\n{"q":"b"}\n```</tool_call>'
    assert _calls(text, [first, second]) == [("first", {"q": "a"}), ("second", {"q": "b"})]
    assert_every_cut_matches(text, [first, second], step=3)


# --- BFCL prompt-mode replies and UI-TARS' Tarko engine --------------------------------------------

HOTEL = Tool("find_hotel", parameters={"type": "object", "properties": {"location": {"type": "string"}, "pet_friendly": {"type": "boolean"}}})
ADD = Tool("add", parameters={"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}})


def test_a_list_of_calls_each_written_as_a_string() -> None:
    """``['find_hotel(…)']`` (2024 models' BFCL replies): the list's items are strings, so no call was read."""
    text = "['find_hotel(location=\"Miami\", pet_friendly=True)', \"find_hotel(location='Oslo')\"]"
    parsed = parse_response(text, tools=[HOTEL])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [
        ("find_hotel", {"location": "Miami", "pet_friendly": True}), ("find_hotel", {"location": "Oslo"}),
    ]
    assert parsed.content == ""
    assert_every_cut_matches(text, [HOTEL], step=3)


@pytest.mark.parametrize(
    ("text", "tools"),
    [
        ("['find_hotel(location=\"Miami\")', 'a note']", [HOTEL]),  # an item that is no call
        ("['nobody(location=\"Miami\")']", [HOTEL]),  # a tool nobody offered
        ("['find_hotel(location=\"Miami\")']", None),  # no tools: a list of strings is data
        ("Options: ['find_hotel(location=\"Miami\")']", [HOTEL]),  # not the whole answer
        ("['find_hotel(location=\"Miami\")'] is what I would send", [HOTEL]),
    ],
)
def test_lists_of_strings_that_are_not_calls(text: str, tools: list | None) -> None:
    assert _calls(text, tools) == []


def test_a_tool_call_under_tarko_s_camel_case_key_beside_what_the_model_says() -> None:
    text = '{"content": "Calculating the sum of two numbers", "toolCall": {"name": "add", "args": {"x": 1, "y": 2}}}'
    assert _calls(text, [ADD]) == [("add", {"x": 1, "y": 2})]
    assert _calls(text, None) == [("add", {"x": 1, "y": 2})]
