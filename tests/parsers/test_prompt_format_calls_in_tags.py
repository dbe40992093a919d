"""Calls in the text formats a BFCL prompt asks for, written inside call tags.

Source (transcribed outside the repository, see docs/accuracy.md): itea1001/bfcl-pv-01's recorded
replies: a Python-style call list inside ``<tool_call>``, ``<function_call>`` elements whose
arguments are ``<arg name="k" type="t">`` elements, a ``<function_call>`` inside ``<tool_call>``.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.types import Tool

from .conftest import assert_every_cut_matches

MUSIC = Tool("Music_3_LookupMusic", parameters={"type": "object", "properties": {"artist": {"type": "string"}, "year": {"type": "integer"}}})
HOTELS = Tool("Hotels_2_SearchHouse", parameters={"type": "object", "properties": {"where_to": {"type": "string"}, "number_of_adults": {"type": "integer"}}})
VERSION = Tool("version_api.get_version")
TOOLS = [MUSIC, HOTELS, VERSION]


def _calls(text: str) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=TOOLS).tool_calls]


def test_a_python_call_list_inside_a_tool_call_tag() -> None:
    text = "Searching.\n<tool_call>[Hotels_2_SearchHouse(where_to='New York, NY', number_of_adults=4), version_api.get_version()]</tool_call>"
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [
        ("Hotels_2_SearchHouse", {"where_to": "New York, NY", "number_of_adults": 4}),
        ("version_api.get_version", {}),
    ]
    assert result.content == "Searching."
    assert_every_cut_matches(text, TOOLS, step=13)


@pytest.mark.parametrize(
    "text",
    [
        "<tool_call>[x for x in items(1)]</tool_call>",  # a comprehension: code, no call list
        "The tag holds JSON, not `<tool_call>[f(a=1)]</tool_call>`.",  # quoted in a code span
    ],
)
def test_other_brackets_in_a_tool_call_tag_are_no_call(text: str) -> None:
    assert _calls(text) == []


ARG_ELEMENTS = """<function_call>
  <name>Music_3_LookupMusic</name>
  <arguments>
    <arg name="artist" type="string">Sia</arg>
    <arg name="year" type="integer">2016</arg>
  </arguments>
</function_call>"""


@pytest.mark.parametrize("text", [ARG_ELEMENTS, f"<tool_call>\n{ARG_ELEMENTS}\n</tool_call>"])
def test_argument_elements_named_by_attribute(text: str) -> None:
    """Each ``<arg>`` overwrote the one before under the key ``arg``; inside ``<tool_call>`` the
    ``<function_call>`` element was taken for the tool's name."""
    assert _calls(text) == [("Music_3_LookupMusic", {"artist": "Sia", "year": 2016})]
    assert_every_cut_matches(text, TOOLS, step=19)


def test_an_empty_arguments_element_inside_a_wrapped_call_is_a_call_without_arguments() -> None:
    text = "<tool_call>\n<function_call>\n  <name>version_api.get_version</name>\n  <arguments>\n  </arguments>\n</function_call>\n</tool_call>"
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("version_api.get_version", {})]
    assert "the call wrapped again in <function_call>" in result.tool_calls[0].repairs
    assert result.content == ""


def test_an_element_named_arg_without_a_name_attribute_keeps_its_tag_as_key() -> None:
    text = "<function_call><name>Music_3_LookupMusic</name><arguments><arg>Sia</arg></arguments></function_call>"
    assert _calls(text) == [("Music_3_LookupMusic", {"arg": "Sia"})]
