"""Arguments written where a template never puts them, read as the call the model meant.

* a call element whose arguments are an attribute holding JSON (Xiaomi MiMo without a template:
  ``<tool_invocation name="generate_image" arguments={"prompt": "a fox"} />``);
* GLM-4.7-Flash's arguments as ``<key="value"</key>`` after the name;
* FunctionGemma's ``,`` left out between two quoted values;
* the name glued to its JSON inside ``<tool_call>`` (GLM behind a gateway: ``<tool_call>fs.read{…}``), and a
  label word before a whole call object (``<tool_call>json`` then the call);
* Qwen3-Coder's ``<function=f>`` holding elements named by the keys (``<path>.</path>``);
* a flat call whose tool declares ``content`` (``{"tool": "fs.write", "path": …, "content": …}``).

Each with what must stay markup, data or prose.
"""

from __future__ import annotations

import time

import pytest

from utp.parsers import parse_response
from utp.types import Tool

from .conftest import assert_every_cut_matches


def _tool(name: str, **properties: str) -> Tool:
    return Tool(name, parameters={"type": "object", "properties": {k: {"type": t} for k, t in properties.items()}})


IMAGE = _tool("generate_image", prompt="string", height="integer", meta="object")
WEATHER = _tool("get_weather", location="string", unit="string")
CALCULATE = _tool("calculate", expression="string")
READ = _tool("fs.read", path="string", max_bytes="integer")
GREP = _tool("fs.grep", pattern="string", paths="array")
LIST = _tool("fs.list", path="string", depth="integer")
WRITE = _tool("fs.write", path="string", content="string")
TOOLS = [IMAGE, WEATHER, CALCULATE, READ, GREP, LIST, WRITE]


def _calls(text: str, tools: list | None = TOOLS) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


# --------------------------------------------------------------------------- arguments as an attribute


@pytest.mark.parametrize(
    ("text", "arguments"),
    [
        ('<tool_invocation name="generate_image" arguments={"prompt": "a red fox", "height": 1024} />', {"prompt": "a red fox", "height": 1024}),
        ('<tool_invocation display_name="Label" name="generate_image" arguments={"prompt": "a fox"} />', {"prompt": "a fox"}),
        (
            '<tool_invocation name="generate_image" arguments={"prompt": "a sign reading {SALE} >> <tool_invocation>", "meta": {"w": 1}} />',
            {"prompt": "a sign reading {SALE} >> <tool_invocation>", "meta": {"w": 1}},
        ),
        ("<tool_invocation name=\"generate_image\" arguments='{\"prompt\": \"a fox\"}'></tool_invocation>", {"prompt": "a fox"}),
        ('<tool_use name="generate_image" arguments={"prompt": "a fox"}></tool_use>', {"prompt": "a fox"}),
    ],
)
@pytest.mark.parametrize("tools", [TOOLS, None])
def test_a_call_element_with_its_arguments_as_an_attribute(text: str, arguments: dict, tools: list | None) -> None:
    result = parse_response(text, tools=tools)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("generate_image", arguments)]
    assert result.content == ""
    assert "arguments written as an attribute" in result.tool_calls[0].repairs
    assert_every_cut_matches(text, tools, step=7)


def test_prose_around_an_attribute_call_stays_content() -> None:
    result = parse_response('Sure, here it is. <tool_invocation name="generate_image" arguments={"prompt": "a red fox"} /> Done.', tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("generate_image", {"prompt": "a red fox"})]
    assert result.content == "Sure, here it is.\nDone."


@pytest.mark.parametrize(
    ("text", "tools"),
    [
        ('<Tool name="generate_image" arguments={args} />', TOOLS),  # JSX: an expression, not JSON
        ('<tool_invocation name="generate_image" arguments={"prompt": "a fox"', TOOLS),  # cut inside the object
        ('<tool_invocation name="unknown" arguments={"prompt": "a fox"} />', TOOLS),  # no offered tool
        ('<tool_invocation arguments={"prompt": "a fox"} />', TOOLS),  # no name
        ('<tool_invocation name="generate_image" title="x" />', TOOLS),  # no arguments
    ],
)
def test_attribute_markup_that_is_no_call_stays_content(text: str, tools: list | None) -> None:
    result = parse_response(text, tools=tools)
    assert result.tool_calls == []


# --------------------------------------------------------------------------- GLM's <key="value"</key>


def test_glm_arguments_written_as_bent_elements() -> None:
    text = (
        "Let me check both.<tool_call>get_weather<location=\"Rome, Italy\"</location><unit=\"celsius\"</unit>\n</tool_call>\n"
        'And here:<tool_call>calculate<expression="24 * 1.8 + 32"</expression>\n</tool_call>\nDone!'
    )
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [
        ("get_weather", {"location": "Rome, Italy", "unit": "celsius"}),
        ("calculate", {"expression": "24 * 1.8 + 32"}),
    ]
    assert result.content == "Let me check both.\nAnd here:\nDone!"
    assert_every_cut_matches(text, TOOLS, step=9)


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>get_weather<city="Rome"</city></tool_call>',  # not a parameter of the tool
        '<tool_call>get_weather<location="Rome"</location> and more</tool_call>',  # text after the elements
        '<tool_call>unknown<location="Rome"</location></tool_call>',
    ],
)
def test_bent_elements_that_are_no_call(text: str) -> None:
    assert _calls(text) == []


@pytest.mark.parametrize("element", ["function", "name"])
@pytest.mark.parametrize("tools", [TOOLS, None])
def test_glm_name_written_in_an_element_of_its_own(element: str, tools: list | None) -> None:
    """A vLLM fallback's test: GLM pairs after a Hermes-style ``<function>NAME</function>`` (was no call)."""
    text = (
        f"<tool_call>\n<{element}>fs.write</{element}>\n<arg_key>path</arg_key>\n<arg_value>/tmp/t.py</arg_value>\n"
        '<arg_key>content</arg_key>\n<arg_value>\nprint("hello")\n</arg_value>\n</tool_call>'
    )
    result = parse_response(text, tools=tools)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("fs.write", {"path": "/tmp/t.py", "content": 'print("hello")'})]
    assert result.tool_calls[0].repairs == ["the name written in an element of its own"]
    assert_every_cut_matches(text, tools, step=9)


def test_a_hermes_name_element_with_its_arguments_element_is_still_hermes() -> None:
    text = '<tool_call><function>fs.write</function><arguments>{"path": "a", "content": "b"}</arguments></tool_call>'
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments, c.format) for c in result.tool_calls] == [("fs.write", {"path": "a", "content": "b"}, "hermes")]


# --------------------------------------------------------------------------- FunctionGemma's missing ','


def test_a_comma_left_out_between_two_quoted_gemma_values() -> None:
    text = "<start_function_call>call:get_weather{location:<escape>Paris<escape>unit:<escape>metric<escape>}<end_function_call>"
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("get_weather", {"location": "Paris", "unit": "metric"})]
    assert "',' missing before key after 'location'" in result.tool_calls[0].repairs
    assert_every_cut_matches(text, TOOLS, step=6)


def test_a_bare_gemma_value_runs_on_to_the_separator() -> None:
    text = "<start_function_call>call:get_weather{location:Paris unit:metric}<end_function_call>"
    assert _calls(text) == [("get_weather", {"location": "Paris unit:metric"})]


# --------------------------------------------------------------------------- a name glued to its JSON in <tool_call>


def test_names_glued_to_their_json_in_unclosed_call_tags() -> None:
    text = '<tool_call>fs.grep{"pattern":"enum Command","paths":["cli.rs"]}<tool_call>fs.read{"path":"main.rs","max_bytes":30000}'
    for tools in (TOOLS, None):
        assert _calls(text, tools) == [("fs.grep", {"pattern": "enum Command", "paths": ["cli.rs"]}), ("fs.read", {"path": "main.rs", "max_bytes": 30000})]
    assert_every_cut_matches(text, TOOLS, step=8)


@pytest.mark.parametrize("text", ['<tool_call>json\n{"name": "fs.read", "arguments": {"path": "a"}}</tool_call>', '<tool_call>json {"name": "fs.read", "arguments": {"path": "a"}}</tool_call>'])
@pytest.mark.parametrize("tools", [TOOLS, None])
def test_a_label_before_a_whole_call_object_in_a_call_tag(text: str, tools: list | None) -> None:
    assert _calls(text, tools) == [("fs.read", {"path": "a"})]


def test_the_call_object_again_under_its_own_name_line() -> None:
    assert _calls('<tool_call>fs.read\n{"name": "fs.read", "arguments": {"path": "a"}}</tool_call>') == [("fs.read", {"path": "a"})]


def test_a_word_and_braces_in_a_call_tag_that_are_no_json_stay_content() -> None:
    assert _calls("<tool_call>Note {the thing}</tool_call>") == []


# --------------------------------------------------------------------------- Qwen3-Coder with key-named elements


def test_qwen3_coder_parameters_written_as_key_named_elements() -> None:
    text = "<tool_call>\n<function=fs.list>\n<path>.</path><depth>2</depth>\n</function>\n</tool_call>"
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("fs.list", {"path": ".", "depth": 2})]
    assert_every_cut_matches(text, TOOLS, step=7)


@pytest.mark.parametrize(
    ("text", "call"),
    [
        # Qwen2.5-Coder-7B, seen live by another agent's adapter: no <tool_call> around the call
        ("<function=fs.list>\n<path>src</path>\n<depth>2</depth>\n</function>", ("fs.list", {"path": "src", "depth": 2})),
        (
            "Writing it.\n<function=fs.write>\n<path>Info.plist</path>\n<content>\n<plist>\n<dict/>\n</plist>\n</content>\n</function>",
            ("fs.write", {"path": "Info.plist", "content": "<plist>\n<dict/>\n</plist>"}),
        ),
    ],
)
def test_a_bare_qwen3_coder_call_with_key_named_elements(text: str, call: tuple) -> None:
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [call]
    assert result.tool_calls[0].repairs == ["arguments written as elements named by their keys, not <parameter=...> tags"]
    assert_every_cut_matches(text, TOOLS, step=7)


@pytest.mark.parametrize(
    "text",
    [
        "<function=fs.list>\n<p>hello</p> world\n</function>",
        "<function=fs.list>\n<b>path</b>\n</function>",  # not one of its parameters
        "<function=nope>\n<path>src</path>\n</function>",  # no such tool
    ],
)
def test_qwen3_coder_body_of_markup_and_prose_is_not_arguments(text: str) -> None:
    assert parse_response(text, tools=TOOLS).tool_calls == []
    assert parse_response("<function=fs.list>\n<path>src</path>\n</function>").tool_calls == []  # nothing offered


# --------------------------------------------------------------------------- a flat call with a declared content


@pytest.mark.parametrize("text", ['I will create it now.\n{"tool":"fs.write","path":"test.md","content":"test"}', '{"tool":"fs.write","path":"test.md","content":"test"}'])
def test_a_flat_call_whose_tool_declares_content(text: str) -> None:
    assert _calls(text) == [("fs.write", {"path": "test.md", "content": "test"})]


@pytest.mark.parametrize("kind", ['"action":"tool"', '"action":"tool_call"', '"type":"function"'])
def test_a_flat_calls_kind_beside_its_name_is_no_argument(kind: str) -> None:
    """wazir's protocol: ``{"action": "tool", "tool": "glob", …}`` (the kind was read as an argument: no call)."""
    assert _calls('{' + kind + ',"tool":"fs.write","path":"test.md","content":"test"}') == [("fs.write", {"path": "test.md", "content": "test"})]


def test_an_action_that_is_no_tool_call_keeps_the_object_data() -> None:
    assert _calls('{"action":"plan","tool":"fs.write","path":"test.md","content":"test"}') == []


@pytest.mark.parametrize(
    "text",
    [
        '{"name":"fs.write","path":"test.md","content":"test"}',  # the shape results are fed back in
        '<tool_response>{"tool":"fs.write","content":"done"}',  # a result the model made up
        '{"tool":"fs.read","path":"a","content":"x"}',  # content is no parameter of fs.read
    ],
)
def test_result_shaped_objects_stay_data(text: str) -> None:
    assert _calls(text) == []


# --------------------------------------------------------------------------- floods of the new shapes


def _cpu(text: str) -> float:
    """CPU time of the fastest of three parses (other load on a shared machine only ever adds time)."""
    times = []
    for _ in range(3):
        start = time.process_time()
        parse_response(text, tools=TOOLS)
        times.append(time.process_time() - start)
    return min(times)


@pytest.mark.parametrize(
    "unit",
    [
        "<tool_call>fs.read{",
        '<tool_invocation name="generate_image" arguments={',
        '<tool name="x" arguments={"a": "',
        # a call line under a call whose parenthesis never closes: its scan stops at the tag written again
        "<tool_call>f(a=1)\nx(",
    ],
)
def test_a_flood_of_unfinished_openers_is_read_in_linear_time(unit: str) -> None:
    """Eight times the text costs about eight times the time (a read to the end at each opener: sixty-four)."""
    small, large = unit * (32_768 // len(unit)), unit * (262_144 // len(unit))
    parse_response(small, tools=TOOLS)
    ratio = _cpu(large) / max(_cpu(small), 1e-4)
    assert ratio < 24, f"{unit!r}: {ratio:.1f}x the time for 8x the text"
