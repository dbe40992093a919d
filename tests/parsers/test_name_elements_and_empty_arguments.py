"""A call named by a ``<name>`` element with its arguments as sibling elements, and Mistral's
``NAME[ARGS]`` with no arguments before the end of the sequence.

``<function><name>read_file</name><path>a.txt</path></function>`` (and the same
in ``<tool_call>``) writes each argument as an element beside the name;
``[TOOL_CALLS]f[ARGS]</s>`` (or with the ``</s>`` stripped) calls a tool that takes none.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response

from .conftest import assert_stream_matches_under
from .test_scan_filter import SCANNER

TOOLS = [
    {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}},
    {"name": "list_tools", "parameters": {"type": "object", "properties": {}}},
]

NAMED = {
    "in <function>": "<function>\n<name>read_file</name>\n<path>/root/MEMORY.md</path>\n</function>",
    "in <tool_call>": "<tool_call>\n  <name>read_file</name>\n  <path>/root/MEMORY.md</path>\n</tool_call>",
}


@pytest.mark.parametrize("case", sorted(NAMED))
def test_arguments_as_elements_beside_the_name(case: str) -> None:
    parsed = parse_response(NAMED[case], tools=TOOLS)
    assert [(c.name, c.arguments, c.format, c.repairs) for c in parsed.tool_calls] == [("read_file", {"path": "/root/MEMORY.md"}, "hermes", [])]
    assert parsed.tool_calls[0].raw.startswith("<")
    assert_stream_matches_under(NAMED[case], TOOLS, 4)


@pytest.mark.parametrize(
    "text",
    [
        "In JavaScript a <function> keyword starts a declaration.",
        "<function>return x;</function>",
        "<function><title>read_file</title></function>",
    ],
)
def test_a_function_tag_without_a_name_is_prose(text: str) -> None:
    assert parse_response(text, tools=TOOLS).tool_calls == []


@pytest.mark.parametrize("text", ["Listing. [TOOL_CALLS]list_tools[ARGS]</s>", "[TOOL_CALLS]list_tools[ARGS] [TOOL_CALLS]read_file[ARGS]{\"path\": \"a\"}"])
def test_mistral_args_marker_with_nothing_after_it_before_the_end(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls[0].name == "list_tools" and parsed.tool_calls[0].arguments == {}
    assert "no arguments after [ARGS]" in parsed.tool_calls[0].repairs
    assert_stream_matches_under(text, TOOLS, 3)


def test_mistral_args_marker_at_the_very_end_is_a_call_unless_the_length_limit_stopped_it() -> None:
    """A server that strips ``</s>`` leaves ``NAME[ARGS]`` at the end: the stop token was its closer."""
    parsed = parse_response("[TOOL_CALLS]list_tools[ARGS]", tools=TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("list_tools", {})]
    assert_stream_matches_under("[TOOL_CALLS]list_tools[ARGS]", TOOLS, 3)
    limited = parse_response({"message": {"content": "[TOOL_CALLS]list_tools[ARGS]"}, "done_reason": "length"}, tools=TOOLS)
    assert limited.tool_calls == [] and limited.diagnostics[-1].kind.value == "truncated"


LANGROID_TOOLS = [{"name": "code_tool", "parameters": {"type": "object", "properties": {"filepath": {"type": "string"}, "version": {"type": "integer"}, "code": {"type": "string"}}}}]
LANGROID_XML = """
    <tool>
        <request>code_tool</request>
        <filepath>
            /path/to/file.py
        </filepath>
        <version>1</version>
        <code><![CDATA[
if a < b:
    print("<b>")
        ]]></code>
    </tool>
"""


def test_langroid_xml_tool_message_with_a_cdata_value() -> None:
    parsed = parse_response(LANGROID_XML, tools=LANGROID_TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [
        ("code_tool", {"filepath": "/path/to/file.py", "version": 1, "code": 'if a < b:\n    print("<b>")'})
    ]
    assert_stream_matches_under(LANGROID_XML, LANGROID_TOOLS, 9)


def test_elements_beside_the_name_that_do_not_close_are_reported_not_dropped() -> None:
    text = "<tool>\n<request>code_tool</request>\n<filepath>/a.py</filepath>\n<code>\nprint(1)\n</tool>"
    parsed = parse_response(text, tools=LANGROID_TOOLS)
    assert parsed.tool_calls == [] and parsed.diagnostics[0].kind.value == "unparseable"


@pytest.mark.parametrize(
    ("text", "arguments"),
    [
        ('Ok, thank you.\n{\n"request": "code_tool",\n"filepath": "a.py",\n"version": 2\n}\nHope you can tell me!', {"filepath": "a.py", "version": 2}),
        ('{"request": "code_tool"}', {}),
    ],
)
def test_langroid_json_tool_message_names_the_tool_under_request(text: str, arguments: dict) -> None:
    parsed = parse_response(text, tools=LANGROID_TOOLS)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("code_tool", arguments)]
    assert_stream_matches_under(text, LANGROID_TOOLS, 6)


@pytest.mark.parametrize("text", ['{"request": "GET", "url": "/a"}', '{"request": "code_tool", "method": "POST"}'])
def test_a_request_that_names_no_offered_tool_or_holds_other_keys_is_data(text: str) -> None:
    assert parse_response(text, tools=LANGROID_TOOLS).tool_calls == []


def test_arguments_element_repairs_are_recorded_on_the_call() -> None:
    call = parse_response("<tool_call><name>read_file</name><arguments>{'path': 'a'}</arguments></tool_call>", tools=TOOLS).tool_calls[0]
    assert (call.name, call.arguments, call.format) == ("read_file", {"path": "a"}, "hermes") and "single quotes to double" in call.repairs


def test_a_flood_of_function_tags_is_not_read_tag_by_tag() -> None:
    """``<function><function>…``: a name element must hold a name and close, so no opener is visited."""
    for unit in ("<function>", "<function>\n", "<request>"):
        flood = unit * 500
        for pattern in (SCANNER.filtered_call_pattern, SCANNER.filtered_pattern):
            visited = [m.start() for m in pattern.finditer(flood)]
            assert all(at >= len(flood) - len(unit) for at in visited), (unit, visited[:3])
