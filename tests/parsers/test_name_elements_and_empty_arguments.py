"""A call named by a ``<name>`` element with its arguments as sibling elements, and Mistral's
``NAME[ARGS]`` with no arguments before the end of the sequence.

``<function><name>read_file</name><path>a.txt</path></function>`` (and the same
in ``<tool_call>``) writes each argument as an element beside the name;
``[TOOL_CALLS]f[ARGS]</s>`` calls a tool that takes none.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response

from .conftest import assert_stream_matches_under

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
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("read_file", {"path": "/root/MEMORY.md"})]
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


def test_mistral_args_marker_at_the_very_end_is_still_cut_off() -> None:
    parsed = parse_response("[TOOL_CALLS]list_tools[ARGS]", tools=TOOLS)
    assert parsed.tool_calls == [] and parsed.diagnostics[0].kind.value == "truncated"
