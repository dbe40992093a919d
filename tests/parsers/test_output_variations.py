"""The same call written with the variations real outputs carry: Windows line breaks, a line of
preamble, an end-of-turn token a server left in, several calls in one fence.

Each case is a call the parser already read in its plain form; the variation must not change
the reading (and, for the fence, must not drop the calls after the first).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from utp.parsers import parse_response
from utp.types import Tool

from .conftest import assert_every_cut_matches

READ_FILE = Tool("read_file", parameters={"type": "object", "properties": {"path": {"type": "string"}}})
WEATHER = Tool("get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}})
PYTHON = Tool("python", parameters={"type": "object", "properties": {"code": {"type": "string"}}})
TOOLS = [READ_FILE, WEATHER, PYTHON]


def _calls(text: str, tools: list[Tool] = TOOLS) -> list[tuple]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


# -- Windows line breaks: a break written "\r\n" is the template's break, not a value's "\r"

QWEN_XML = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"


def test_qwen3_coder_values_between_crlf_breaks_are_the_values() -> None:
    text = QWEN_XML.replace("\n", "\r\n")
    assert _calls(text) == [("get_weather", {"city": "Paris", "days": 3})]
    assert_every_cut_matches(text, TOOLS, 7)


def test_a_crlf_inside_a_qwen3_coder_value_is_the_values_own() -> None:
    text = "<tool_call>\r\n<function=python>\r\n<parameter=code>\r\nx = 1\r\nprint(x)\r\n</parameter>\r\n</function>\r\n</tool_call>"
    assert _calls(text) == [("python", {"code": "x = 1\r\nprint(x)"})]


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="<>&"), min_size=1, max_size=30).filter(lambda v: v.strip() == v))
def test_crlf_and_lf_breaks_read_the_same_qwen3_coder_call(value: str) -> None:
    text = f"<tool_call>\n<function=read_file>\n<parameter=path>\n{value}\n</parameter>\n</function>\n</tool_call>"
    assert _calls(text.replace("\n", "\r\n")) == _calls(text) == [("read_file", {"path": value})]


def test_deepseek_r1_code_fence_with_crlf_breaks() -> None:
    text = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>python\r\n```python\r\nprint(1)\r\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    assert _calls(text, [PYTHON]) == [("python", {"code": "print(1)"})]


def test_glm_name_line_with_crlf_and_stripped_tokens() -> None:
    text = "get_weather\r\n<arg_key>city</arg_key>\r\n<arg_value>Paris</arg_value>"
    assert _calls(text) == [("get_weather", {"city": "Paris"})]
    assert_every_cut_matches(text, TOOLS, 7)


# -- a line of preamble before the call

LLAMA_CALL = '{"type": "function", "name": "get_weather", "parameters": {"city": "Paris"}}'


@pytest.mark.parametrize("preamble", ["", "Sure, I'll check.\n\n", "Checking the weather.\n"])
def test_llama32_call_object_after_a_preamble(preamble: str) -> None:
    """Llama 3.2 writes ``{"type": "function", "name": ...}``; its ``"function"`` value once hid the name."""
    text = preamble + LLAMA_CALL
    assert _calls(text) == [("get_weather", {"city": "Paris"})]
    assert_every_cut_matches(text, TOOLS, 7)


def test_a_type_function_object_naming_no_offered_tool_after_prose_stays_prose() -> None:
    text = 'The schema is below.\n{"type": "function", "name": "jeff", "parameters": {"city": "Paris"}}'
    assert _calls(text) == []


def test_a_mislabelled_fence_after_a_preamble_is_a_call_when_it_ends_the_answer() -> None:
    text = 'Sure.\n\n```xml\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```'
    assert _calls(text) == [("read_file", {"path": "a.py"})]
    assert_every_cut_matches(text, TOOLS, 7)


@pytest.mark.parametrize(
    "text",
    [
        'Example:\n```xml\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```\nThat is the shape.',  # text follows
        'Sure.\n\n```xml\n{"name": "write_file", "arguments": {"path": "a.py"}}\n```',  # not an offered tool
    ],
)
def test_a_mislabelled_fence_that_is_shown_stays_content(text: str) -> None:
    assert _calls(text) == []


# -- an end-of-turn token a server did not strip


@pytest.mark.parametrize("token", ["</s>", "<|eot_id|>", "<|im_end|>", "<|eom_id|><|start_header_id|>assistant<|end_header_id|>\n\nDone."])
def test_a_call_on_its_own_line_before_an_end_of_turn_token(token: str) -> None:
    text = 'Let me look.\n[{"name": "read_file", "arguments": {"path": "a.py"}}]' + token
    assert _calls(text) == [("read_file", {"path": "a.py"})]
    assert_every_cut_matches(text, TOOLS, 7)


def test_other_markup_after_a_call_on_its_own_line_still_makes_it_a_sample() -> None:
    text = 'Let me look.\n{"name": "read_file", "arguments": {"path": "a.py"}}<br> and so on'
    assert _calls(text) == []


# -- several calls in one fence


@pytest.mark.parametrize("between", ["\n", ";", "; ", ",\n", "\n\n"])
def test_every_call_object_in_one_fence_is_read(between: str) -> None:
    first = '{"name": "read_file", "arguments": {"path": "a.py"}}'
    second = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    text = f"I'll do both.\n```json\n{first}{between}{second}\n```"
    assert _calls(text) == [("read_file", {"path": "a.py"}), ("get_weather", {"city": "Paris"})]
    assert_every_cut_matches(text, TOOLS, 9)


def test_a_fence_whose_second_value_is_not_a_call_keeps_the_first() -> None:
    text = '```json\n{"name": "read_file", "arguments": {"path": "a.py"}}\n{"note": "x"}\n```'
    assert _calls(text) == [("read_file", {"path": "a.py"})]


# -- braces written doubled: a template escaping them for str.format shows the call so (Qwen2.5's GGUF)

DOUBLED = [
    ('{{"name": "get_weather", "arguments": {"city": "Paris"}}}', [("get_weather", {"city": "Paris"})]),  # qwen2.5-coder-1.5b, recorded
    ('{{"name": "get_weather", "arguments": {{"city": "Paris"}}}}', [("get_weather", {"city": "Paris"})]),  # every brace doubled
    ('Checking.\n{{"name": "get_weather", "arguments": {"city": "Paris"}}}\n{{"name": "get_weather", "arguments": {"city": "Rome"}}}',
     [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})]),
    ('{{"name": "get_weather", "arguments": {"city": "Paris"}}', [("get_weather", {"city": "Paris"})]),  # the closer left single, recorded too
    ('<tool_call>\n{{"name": "get_weather", "arguments": {"city": "Paris"}}}\n</tool_call>', [("get_weather", {"city": "Paris"})]),
    ('<tool_call>\n{{"name": "get_weather", "arguments": {{"city": "Paris"}}}}\n</tool_call>', [("get_weather", {"city": "Paris"})]),
]


@pytest.mark.parametrize("text, expected", DOUBLED)
def test_a_call_written_with_doubled_braces(text: str, expected: list[tuple]) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == expected
    assert all("doubled" in " ".join(c.repairs) for c in parsed.tool_calls)
    assert "{" not in parsed.content
    assert_every_cut_matches(text, TOOLS, 9)


@pytest.mark.parametrize(
    "text",
    [
        'A Jinja sample: {{"name": "get_weather", "arguments": {"city": "Paris"}}} renders the call.',  # inside a sentence
        '{{ "name" }} and {{ city }}',  # template placeholders
    ],
)
def test_doubled_braces_that_are_not_a_call(text: str) -> None:
    assert _calls(text) == []


# -- prose after Llama's python-style calls when no end-of-turn token ends them

CALC = Tool("calculate", parameters={"type": "object", "properties": {"expression": {"type": "string"}}})


def test_python_tag_calls_end_at_a_blank_line_before_prose() -> None:
    text = '<|python_tag|>calculate(expression="2 + 2")\ncalculate(expression="3")\n\nLet me know if you need more.'
    parsed = parse_response(text, tools=[CALC])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("calculate", {"expression": "2 + 2"}), ("calculate", {"expression": "3"})]
    assert parsed.content == "Let me know if you need more."
    assert_every_cut_matches(text, [CALC], 9)


def test_python_tag_code_with_a_blank_line_is_not_a_call_of_an_unoffered_name() -> None:
    assert _calls('<|python_tag|>helper(x=1)\n\nprint(helper)', [CALC]) == []


def test_an_openai_call_item_after_a_preamble() -> None:
    text = 'Sure.\n\n{"type": "function", "function": {"name": "read_file", "arguments": "{\\"path\\": \\"a.py\\"}"}}'
    assert _calls(text) == [("read_file", {"path": "a.py"})]


def test_an_echoed_definition_cut_off_is_not_reported_as_a_broken_call() -> None:
    """A small model echoing its prompt: the tool's definition, cut off by the token limit."""
    text = 'You can call these tools:\n\n<tools>\n{"type": "function", "function": {"name": "read_file", "description": "Read a file.", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}, "arguments": {"path": "README.md"}}\n</tools>\n\nTo call a tool'
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == []
    assert parsed.diagnostics == []


# -- a python-style call list whose "]" the model never wrote

WRITE = Tool("write_file", parameters={"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}})


@pytest.mark.parametrize(
    "text, expected",
    [
        ('[write_file(path="a.txt", content="hi")', [("write_file", {"path": "a.txt", "content": "hi"})]),  # qwen2.5-coder-0.5b, recorded
        ('[write_file(path="a", content="1"), write_file(path="b", content="2")\n', [("write_file", {"path": "a", "content": "1"}), ("write_file", {"path": "b", "content": "2"})]),
    ],
)
def test_a_call_list_missing_its_closer_after_a_whole_call(text: str, expected: list[tuple]) -> None:
    parsed = parse_response(text, tools=[WRITE])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == expected
    assert_every_cut_matches(text, [WRITE], 7)


@pytest.mark.parametrize("text", ['[write_file(path="a", content="hi', '[write_file(path="a", content="x)', '[write_file(path="a", content="1"), write_file(path="b"'])
def test_a_call_list_the_output_stopped_inside_a_call_is_reported(text: str) -> None:
    parsed = parse_response(text, tools=[WRITE])
    assert parsed.tool_calls == []
    assert [d.kind.value for d in parsed.diagnostics] == ["truncated"]


def test_a_call_list_missing_its_closer_at_the_length_limit_is_not_run() -> None:
    response = {"message": {"role": "assistant", "content": '[write_file(path="a", content="hi")'}, "done_reason": "length"}
    parsed = parse_response(response, tools=[WRITE])
    assert parsed.tool_calls == []
    assert any(d.kind.value == "truncated" for d in parsed.diagnostics)


def test_a_tagged_call_whose_opening_brace_alone_is_doubled() -> None:
    text = '<tool_call>\n{{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    assert _calls(text) == [("get_weather", {"city": "Paris"})]
