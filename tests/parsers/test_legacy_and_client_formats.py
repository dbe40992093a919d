"""Formats read from their definitions: each shape is read, and prose that mentions it is not a call.

Functionary v1/v2 (MeetKai's prompt templates), Continue's tool code blocks
(Continue's system-message tool framework), Inkling's JSON messages,
Sarashina's Python-dict list, Hunyuan HY v3's JSON body, DeepSeek-R1
distills' calls opener, and XML-style values pretty-printed on their own
indented lines. The examples are written for these tests from each format's
definition.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.parsers.layout import unindented

from .conftest import assert_stream_matches

CODE_TOOL = {"name": "python", "parameters": {"type": "object", "properties": {"code": {"type": "string"}}}}
WEATHER = {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}
TOOLS = [CODE_TOOL, WEATHER]

POSITIVE = {
    "functionary v1": ('Checking.\n<|START_OF_FUNCTION_CALL|>get_weather:\n{\n  "city": "Oslo"\n}<|END_OF_FUNCTION_CALL|>', [("get_weather", {"city": "Oslo"})]),
    "functionary v2": (
        '<|from|>assistant\n<|recipient|>all\n<|content|>One moment\n<|from|>assistant\n<|recipient|>get_weather\n<|content|>{"city": "Oslo", "days": 2}<|stop|>',
        [("get_weather", {"city": "Oslo", "days": 2})],
    ),
    "functionary v2 raw body for a one-parameter tool": ("<|from|>assistant\n<|recipient|>python\n<|content|>print(1)\nprint(2)<|stop|>", [("python", {"code": "print(1)\nprint(2)"})]),
    "functionary v2.5 (llama 3)": ('Sure<|reserved_special_token_249|>get_weather\n{"city": "Oslo"}<|eot_id|>', [("get_weather", {"city": "Oslo"})]),
    "continue tool block": (
        "I'll look.\n```tool\nTOOL_NAME: get_weather\nBEGIN_ARG: city\nOslo\nEND_ARG\nBEGIN_ARG: days\n3\nEND_ARG\n```",
        [("get_weather", {"city": "Oslo", "days": 3})],
    ),
    "continue tool block, lower case markers": ("```TOOL\ntool_name: python\nbegin_arg: code\nif x:\n    y()\nend_arg\n```", [("python", {"code": "if x:\n    y()"})]),
    "continue tool block, title-case label": ("```Tool\nTOOL_NAME: get_weather\nBEGIN_ARG: city\nOslo\nEND_ARG\n```", [("get_weather", {"city": "Oslo"})]),
    "inkling": (
        '<|message_model|><|content_text|>Looking.<|end_message|><|message_model|>get_weather<|content_invoke_tool_json|>{"name":"get_weather","args":{"city":"Oslo"}}<|end_message|>',
        [("get_weather", {"city": "Oslo"})],
    ),
    "sarashina": ("<|tool_calls|>[{'name': 'get_weather', 'arguments': {'city': 'Oslo', 'days': 2}}]", [("get_weather", {"city": "Oslo", "days": 2})]),
    "hunyuan v3 json body": (
        '<tool_calls:opensource><tool_call:opensource>get_weather<tool_sep:opensource>{"city": "Oslo"}</tool_call:opensource></tool_calls:opensource>',
        [("get_weather", {"city": "Oslo"})],
    ),
    "deepseek-r1 distill opener": (
        '<｜tool▁calls｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Oslo"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        [("get_weather", {"city": "Oslo"})],
    ),
    "qwen3-coder value pretty-printed": (
        "<tool_call>\n  <function=get_weather>\n    <parameter=city>\n      Oslo\n    </parameter>\n    <parameter=days>\n      3\n    </parameter>\n  </function>\n</tool_call>",
        [("get_weather", {"city": "Oslo", "days": 3})],
    ),
    "qwen3-coder code pretty-printed keeps relative indentation": (
        "<tool_call>\n  <function=python>\n    <parameter=code>\n      if x:\n          y()\n    </parameter>\n  </function>\n</tool_call>",
        [("python", {"code": "if x:\n    y()"})],
    ),
    "claude-style parameter pretty-printed": (
        '<invoke name="get_weather">\n  <parameter name="city">\n    Oslo\n  </parameter>\n</invoke>',
        [("get_weather", {"city": "Oslo"})],
    ),
}

NEGATIVE = {
    "functionary v1 token named in prose": "Functionary v1 starts a call with <|START_OF_FUNCTION_CALL|> and the function's name.",
    "functionary v2 header in prose": "The header is <|recipient|>NAME followed by the body.",
    "functionary v2 message to the user": "<|from|>assistant\n<|recipient|>all\n<|content|>It is sunny in Oslo.<|stop|>",
    "continue block described": "Continue calls a tool with a ```tool block:\n```tool\nthe tool's name and arguments go here\n```",
    "a fence labelled tool with code": "```tool\nprint('hello')\n```",
    "inkling text message": "<|message_model|><|content_text|>Use <|content_invoke_tool_json|> for calls.<|end_message|>",
    "sarashina token in prose": "Sarashina writes <|tool_calls|> before its list of calls.",
    "sarashina token before a data list": "<|tool_calls|>[1, 2, 3]",
    "hunyuan separator in prose": "HY v3 writes NAME<tool_sep:opensource> and then JSON.",
    "deepseek distill opener alone": "The distills open with <｜tool▁calls｜> and nothing else here.",
}


@pytest.mark.parametrize("case", sorted(POSITIVE))
def test_shape_is_read(case: str) -> None:
    text, want = POSITIVE[case]
    parsed = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == want


@pytest.mark.parametrize("case", sorted(NEGATIVE))
def test_prose_mentioning_the_shape_is_not_a_call(case: str) -> None:
    for tools in (TOOLS, None):
        assert parse_response(NEGATIVE[case], tools=tools).tool_calls == [], case


@pytest.mark.parametrize("case", sorted(POSITIVE))
def test_stream_agrees_with_one_shot(case: str) -> None:
    assert_stream_matches(POSITIVE[case][0])


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("\n      laptops\n    ", "laptops"),  # pretty-printed: layout dropped
        ("\n    def f():\n        return 1\n", "\n    def f():\n        return 1\n"),  # closing tag at column 0: the format's own rule
        ("  x = 1\n", "  x = 1\n"),  # written straight after the tag: verbatim
        ("\n        a\n\n          b\n    ", "a\n\n  b"),  # relative indentation kept, blank lines stay blank
    ],
)
def test_only_pretty_printed_values_lose_their_layout(raw: str, value: str) -> None:
    assert unindented(raw) == value


def test_function_legacy_body_that_is_not_json_needs_a_one_parameter_tool() -> None:
    text = "<|from|>assistant\n<|recipient|>get_weather\n<|content|>Oslo tomorrow<|stop|>"
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == []
    assert any("not a JSON object" in d.reason for d in parsed.diagnostics)


def test_continue_block_cut_off_is_reported_not_run() -> None:
    parsed = parse_response("```tool\nTOOL_NAME: get_weather\nBEGIN_ARG: city\nOs", tools=TOOLS)
    assert parsed.tool_calls == []
    assert any(d.kind.value == "truncated" for d in parsed.diagnostics)


YAML_TOOLS = [
    {"name": "get_weather", "parameters": {"type": "object", "properties": {"location": {"type": "string"}, "days": {"type": "integer"}, "zip": {"type": "string"}}}},
    {"name": "get_location"},
]


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("<get_weather>\nlocation: Paris\ndays: 3\n</get_weather>", [("get_weather", {"location": "Paris", "days": 3})]),
        ("Checking.\n<get_weather>\n  location: Paris\n  zip: 75001\n</get_weather>\nDone.", [("get_weather", {"location": "Paris", "zip": "75001"})]),
        ("<get_weather>\nlocation: |\n  line one\n  line two\n</get_weather>", [("get_weather", {"location": "line one\nline two\n"})]),
        ("<get_location/>", [("get_location", {})]),
    ],
)
def test_yaml_body_in_a_tool_element(text: str, want: list) -> None:
    assert [(c.name, c.arguments) for c in parse_response(text, tools=YAML_TOOLS).tool_calls] == want


@pytest.mark.parametrize(
    "text",
    [
        "<get_weather>\nNote: the location is Paris.\n</get_weather>",  # a key that is no parameter: prose
        "<get_weather>\n- Paris\n- London\n</get_weather>",  # a list, not a mapping
        "<get_weather>\n[invalid: yaml: syntax:\n</get_weather>",
        "Write <get_weather> then the YAML, then </get_weather>.",
    ],
)
def test_yaml_lookalikes_are_not_calls(text: str) -> None:
    assert parse_response(text, tools=YAML_TOOLS).tool_calls == []


JSON_BODIES = {
    '<get_weather>{"location": "Paris", "days": 3}</get_weather>': [("get_weather", {"location": "Paris", "days": 3})],
    'Checking.\n<get_weather>\n{"location": "Paris"}\n</get_weather>\nDone.': [("get_weather", {"location": "Paris"})],
    '<get_weather>{"town": "Paris"}</get_weather>': [],  # a key the tool does not declare
    '<get_weather>{"location": "Paris"} is what I would send</get_weather>': [],  # prose after the object
    "<get_weather>{location: Paris, }</get_weather>": [],  # not JSON as written
    '<get_location>{"x": 1}</get_location>': [],  # a tool that declares no parameters: nothing to check the keys against
}


@pytest.mark.parametrize("text", sorted(JSON_BODIES))
def test_json_body_in_a_tool_element(text: str) -> None:
    """``<NAME>{json}</NAME>``: the element names the call, a JSON object of its declared parameters is its arguments."""
    from .conftest import assert_every_cut_matches

    assert [(c.name, c.arguments) for c in parse_response(text, tools=YAML_TOOLS).tool_calls] == JSON_BODIES[text]
    assert_every_cut_matches(text, YAML_TOOLS, step=7)


def test_a_self_closing_element_needs_the_tool_offered() -> None:
    assert parse_response("<get_location/>").tool_calls == []


@pytest.mark.parametrize("size", [1, 5, 64])
def test_yaml_body_streams_as_one_shot(size: int) -> None:
    from .conftest import assert_stream_matches_under

    for text in ("Checking.\n<get_weather>\nlocation: Paris\ndays: 3\n</get_weather>\nDone.", "<get_weather>\nNote: the location is Paris.\n</get_weather>"):
        assert_stream_matches_under(text, YAML_TOOLS, size)


ADD = {"name": "add", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}}


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ('[Calling tool: add({"a": 5, "b": 3})]', [("add", {"a": 5, "b": 3})]),
        ("Adding.\n[Calling tool: add(a=5, b=3)]\nDone.", [("add", {"a": 5, "b": 3})]),
    ],
)
def test_a_client_history_line_imitated_is_a_call(text: str, want: list) -> None:
    parsed = parse_response(text, tools=[ADD])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == want
    assert not parsed.tool_calls[0].repairs


@pytest.mark.parametrize(
    "text",
    [
        "The log shows [Calling tool: add] lines for each step.",
        '[Calling tool: add({"a": 5}) and then some prose',
        "[Calling tool: add(a=x + 1)]",  # an expression, not values: reported, not run
    ],
)
def test_history_line_lookalikes_are_not_calls(text: str) -> None:
    assert parse_response(text, tools=[ADD]).tool_calls == []


@pytest.mark.parametrize("size", [1, 6])
def test_history_line_streams_as_one_shot(size: int) -> None:
    from .conftest import assert_stream_matches_under

    for text in ("Adding.\n[Calling tool: add(a=5, b=3)]\nDone.", "The log shows [Calling tool: add] lines for each step."):
        assert_stream_matches_under(text, [ADD], size)


R1_CODE = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>python\n```python\nx = 1\nprint(x)\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"


def test_deepseek_r1_code_fence_goes_to_a_one_parameter_tool() -> None:
    parsed = parse_response(R1_CODE, tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("python", {"code": "x = 1\nprint(x)"})]


def test_deepseek_r1_code_fence_for_a_tool_of_several_parameters_is_reported() -> None:
    text = R1_CODE.replace("python\n```python", "get_weather\n```python")
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == [] and any(d.kind.value == "unparseable" for d in parsed.diagnostics)
