"""Cline-style XML tool use: an element named after an offered tool, one child per parameter.

The definition is Cline's system prompt ("Tool use is formatted using
XML-style tags. The tool name is enclosed in opening and closing tags, and
each parameter is similarly enclosed within its own set of tags"), which Roo
Code and Kilo Code share. The same shape inside ``<tool_call>`` is the
hermes family's.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp.parsers import get_parser, parse_response
from utp.types import DiagnosticKind, Tool

from .conftest import assert_every_cut_matches, streamed_at_cuts

READ_FILE = Tool("read_file", parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
RUN = Tool(
    "execute_command",
    parameters={"type": "object", "properties": {"command": {"type": "string"}, "requires_approval": {"type": "boolean"}, "timeout": {"type": "integer"}}},
)
TOOLS = [READ_FILE, RUN]


def _calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


def test_the_documented_shape_is_a_call_with_values_typed_by_the_schema() -> None:
    text = (
        "I'll check the tests first.\n\n<execute_command>\n<command>pytest -q tests/</command>\n"
        "<requires_approval>false</requires_approval>\n<timeout>60</timeout>\n</execute_command>"
    )
    parsed = parse_response(text, tools=TOOLS)
    [call] = parsed.tool_calls
    assert (call.name, call.arguments) == ("execute_command", {"command": "pytest -q tests/", "requires_approval": False, "timeout": 60})
    assert call.format == "cline_xml" and call.known
    assert parsed.content == "I'll check the tests first."


def test_a_string_parameter_keeps_text_that_looks_like_json() -> None:
    assert _calls("<read_file>\n<path>2024</path>\n</read_file>") == [("read_file", {"path": "2024"})]


def test_multi_line_values_and_markup_inside_a_value_are_kept() -> None:
    text = "<execute_command>\n<command>cat <<EOF > a.txt\nhello\nEOF</command>\n</execute_command>"
    assert _calls(text) == [("execute_command", {"command": "cat <<EOF > a.txt\nhello\nEOF"})]


def test_several_elements_are_several_calls() -> None:
    text = "<read_file><path>a.py</path></read_file>\n<read_file><path>b.py</path></read_file>"
    assert _calls(text) == [("read_file", {"path": "a.py"}), ("read_file", {"path": "b.py"})]


def test_a_tool_without_parameters() -> None:
    assert _calls("<ping></ping>", tools=[Tool("ping")]) == [("ping", {})]


@pytest.mark.parametrize(
    "text",
    [
        "Use <read_file> to open a file.",  # a mention
        "<execute_command>the command</execute_command>",  # prose inside, for a tool of several parameters
        "<read_file>see <b>this</b></read_file>",  # markup inside a one-parameter tool's element
        "<read_file><path>a.py</path> and more</read_file>",  # prose after a parameter
        "<read_file><path>a.py</read_file>",  # a parameter never closed
        "`<read_file><path>a.py</path></read_file>`",  # shown as inline code
        "<write_file><path>a.py</path></write_file>",  # not an offered tool
    ],
)
def test_anything_else_stays_content(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == []
    assert parsed.content == text
    assert not parsed.diagnostics


def test_without_the_tool_offered_the_element_is_markup() -> None:
    text = "<read_file><path>a.py</path></read_file>"
    assert _calls(text, tools=None) == []
    assert _calls(text, tools=[RUN]) == []


def test_an_element_the_output_ends_inside_is_reported_truncated() -> None:
    parsed = parse_response("Reading.\n<read_file>\n<path>src/ap", tools=TOOLS)
    assert parsed.tool_calls == []
    assert [d.kind for d in parsed.diagnostics] == [DiagnosticKind.TRUNCATED]
    assert parsed.content == "Reading."


def test_the_same_element_in_a_tool_call_tag_is_read_by_hermes() -> None:
    [call] = parse_response("<tool_call>\n<read_file>\n<path>a.py</path>\n</read_file>\n</tool_call>", tools=TOOLS).tool_calls
    assert (call.name, call.arguments, call.format) == ("read_file", {"path": "a.py"}, "hermes")


@pytest.mark.parametrize(
    ("unit", "visits"),
    [
        ("<read_file>\n<path>", 1),  # never closed: only the last one (the output may end inside it) is tried
        ("<read_file><path>x</path>", 1),
        ("<tool_call><read_file><path>x</path>", 2),  # the last <tool_call> and the last <read_file>
        ("<read_file>\n<path>x</path>\n</read_file>\n", 1000),  # every one a call
    ],
)
def test_unclosed_elements_are_decided_by_the_scan_not_one_extract_each(unit: str, visits: int) -> None:
    """The heads look ahead for the element's closer before it reopens: a flood costs one regex pass."""
    text = unit * 1000
    scanner = get_parser("auto", TOOLS).scanner
    assert len(list(scanner.filtered_call_pattern.finditer(text))) == visits


def test_reasoning_tag_names_add_no_trigger() -> None:
    parser = get_parser("auto", [Tool("think"), READ_FILE])
    owners = {c.family.name for c in parser.scanner.candidates.get("<think>", ())}
    assert "cline_xml" not in owners
    assert "cline_xml" in {c.family.name for c in parser.scanner.candidates["<read_file>"]}


STREAM_TEXTS = [
    "Let me look.\n<read_file>\n<path>src/main.py</path>\n</read_file>\nThen run it.",
    "<execute_command><command>ls</command><timeout>5</timeout></execute_command><read_file><path>x</path></read_file>",
    "Use <read_file> for that, e.g. <read_file>the path</read_file>.",
    "<read_file>\n<path>cut",
]


@pytest.mark.parametrize("text", STREAM_TEXTS)
def test_streaming_any_single_and_double_cut_matches_one_shot(text: str) -> None:
    assert_every_cut_matches(text, TOOLS, step=5)


PIECES = ["<read_file>", "</read_file>", "<path>", "</path>", "a.py", " ", "\n", "<", ">", "x", "<command>", "</command>"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=12), cut=st.integers(0, 200))
def test_generated_element_soup_parses_cleanly_and_streams_the_same(pieces: list[str], cut: int) -> None:
    text = "".join(pieces)
    parsed = parse_response(text, tools=TOOLS)
    assert not [d for d in parsed.diagnostics if "parser error" in d.reason]
    assert streamed_at_cuts(text, tools=TOOLS, cuts=[cut % (len(text) + 1)]) == (parsed.content, [(c.name, c.arguments) for c in parsed.tool_calls])


SEARCH = Tool("search", parameters={"type": "object", "properties": {"query": {"type": "string"}}})
CODE = Tool("code", parameters={"type": "object", "properties": {"script": {"type": "string"}}})
LIMIT = Tool("top", parameters={"type": "object", "properties": {"n": {"type": "integer"}}})


@pytest.mark.parametrize(
    "text, expected",
    [
        ("<search>capital of France</search>", [("search", {"query": "capital of France"})]),
        ("I need facts. <search>capital of France</search>", [("search", {"query": "capital of France"})]),
        ("<think>Need info</think><search>  capital of France  </search> then", [("search", {"query": "capital of France"})]),
        ("<search>\nline one\n  line two\n</search>", [("search", {"query": "line one\n  line two"})]),
        ("<search>a</search> <search>b</search>", [("search", {"query": "a"}), ("search", {"query": "b"})]),
        ("<top>5</top>", [("top", {"n": 5})]),
    ],
)
def test_a_one_parameter_tools_element_holding_text_is_its_value(text: str, expected: list[tuple]) -> None:
    """Search-R1-style agents offer tools of one parameter and read ``<search>query</search>``."""
    assert _calls(text, tools=[SEARCH, LIMIT]) == expected
    assert_every_cut_matches(text, [SEARCH, LIMIT], 5)


@pytest.mark.parametrize(
    "text, tools",
    [
        ("Wrap it in <code>x = 1</code> to show it.", [CODE]),  # HTML's own element: markup in prose
        ("<search>see <b>this</b></search>", [SEARCH]),  # markup inside
        ("<search>   </search> is empty", [SEARCH]),  # nothing written
        ("<search>never closed", [SEARCH]),
        ("<search>" + "x" * 5000 + "</search>", [SEARCH]),  # longer than a query: prose
    ],
)
def test_text_elements_that_are_not_a_value(text: str, tools: list[Tool]) -> None:
    """No value read (an empty element may still be a call without arguments)."""
    assert not any(arguments for _, arguments in _calls(text, tools=tools))
    if len(text) < 100:
        assert_every_cut_matches(text, tools, 5)

