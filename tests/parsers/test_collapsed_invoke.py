"""DeepSeek V4.1-Flash's collapsed DSML: ``<parameter name="TOOL">`` where the invoke's opener belongs.

Source (transcribed outside the repository, see docs/accuracy.md): mtolmacs/pi-tool-repair's grammar-repair
tests, several outputs copied from a deepseek-v4.1-flash session log.
"""

from __future__ import annotations

import pytest

from utp.parsers import get_family, parse_response
from utp.types import DiagnosticKind, Tool, ToolCall

from .conftest import assert_every_cut_matches

BASH = Tool("bash", parameters={"type": "object", "properties": {"command": {"type": "string"}, "timeout": {"type": "integer"}}})
READ = Tool("read", parameters={"type": "object", "properties": {"path": {"type": "string"}, "offset": {"type": "integer"}, "limit": {"type": "integer"}}})
PWD = Tool("shell", parameters={"type": "object", "properties": {"cmd": {"type": "string"}}})
TOOLS = [BASH, READ, PWD]


def _calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'Let me check.\n\n<parameter name="bash">\n<｜DSML｜ parameter name="command" string="true">npx vitest run</｜DSML｜ parameter>\n'
            '<｜DSML｜ parameter name="timeout" string="false">600</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>',
            ("bash", {"command": "npx vitest run", "timeout": 600}),
        ),
        (
            "I'll read the file.\n\n<parameter name=\"read\">\n<parameter name=\"path\">/a/handler_test.go</parameter>\n"
            '<parameter name="offset">80</parameter>\n<parameter name="limit">140</parameter>\n</read>',
            ("read", {"path": "/a/handler_test.go", "offset": 80, "limit": 140}),
        ),
        ('<parameter name="bash">\n<｜DSML｜ parameter name="command" string="true">cd /x && ls</｜DSML｜ parameter>', ("bash", {"command": "cd /x && ls"})),
        ('<parameter name="shell">pwd</｜DSML｜ parameter>', ("shell", {"cmd": "pwd"})),  # raw text for the one parameter
    ],
)
def test_an_invoke_written_as_a_parameter_tag(text: str, expected: tuple[str, dict]) -> None:
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [expected]
    assert any("invoke written as a parameter" in repair for repair in result.tool_calls[0].repairs)
    assert "parameter" not in result.content
    assert_every_cut_matches(text, TOOLS, step=6)


@pytest.mark.parametrize(
    "text",
    [
        '<parameter name="bash">cd /tmp && ls</｜DSML｜ parameter>',  # raw text, two parameters to give it to
        '<parameter name="read">/etc/hosts</｜DSML｜ parameter>',
        '<parameter name="bash">\n</parameter>',  # nothing in it
    ],
)
def test_a_collapsed_call_whose_arguments_cannot_be_placed_is_reported(text: str) -> None:
    result = parse_response(text, tools=TOOLS)
    assert result.tool_calls == []
    assert any(d.kind is DiagnosticKind.UNPARSEABLE for d in result.diagnostics)


@pytest.mark.parametrize(
    ("text", "tools"),
    [
        ('Let me look.\n<parameter name="bash">cd /tmp && ls', TOOLS),  # never closed: nothing runs
        ('<parameter name="bash"><parameter name="command">ls', TOOLS),  # an argument cut off
        ('<parameter name="bash"><parameter name="command">ls</parameter>', None),  # no tools offered
        ('<parameter name="rm"><parameter name="path">/</parameter>', TOOLS),  # not an offered tool
    ],
)
def test_collapsed_calls_that_are_not_read(text: str, tools: list[Tool] | None) -> None:
    assert _calls(text, tools) == []


def test_an_invoke_closed_with_nothing_in_it_is_a_call_without_arguments() -> None:
    assert _calls('<parameter name="shell">\n</｜DSML｜ invoke>') == [("shell", {})]


def test_a_parameter_tag_inside_a_real_invoke_is_that_invoke_s() -> None:
    text = '<invoke name="bash">\n<parameter name="command">ls</parameter>\n</invoke>'
    assert _calls(text, [BASH, Tool("command", parameters={"type": "object", "properties": {}})]) == [("bash", {"command": "ls"})]


def test_what_the_family_renders_reads_back() -> None:
    calls = [ToolCall("bash", {"command": "42", "timeout": 5}), ToolCall("read", {"path": "/a"})]
    text = get_family("collapsed_invoke").render(calls)
    assert _calls(text) == [("bash", {"command": "42", "timeout": 5}), ("read", {"path": "/a"})]


# --- DeepSeek's string attribute written after its tag closed (WeaverCode's tests) ------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('<invoke name="bash"><parameter name="command">string="true">ls -la</parameter></invoke>', {"command": "ls -la"}),
        ('<｜DSML｜invoke name="bash"><｜DSML｜parameter name="timeout">string="false">30</｜DSML｜parameter></｜DSML｜invoke>', {"timeout": 30}),
    ],
)
def test_a_string_attribute_leaked_into_the_value_is_its_flag(text: str, expected: dict) -> None:
    assert _calls(text) == [("bash", expected)]


def test_the_same_words_later_in_a_value_stay_text() -> None:
    text = '<invoke name="bash"><parameter name="command">echo string="true"></parameter></invoke>'
    assert _calls(text) == [("bash", {"command": 'echo string="true">'})]
