"""Calls written in the notation of Gemini CLI's system prompt: ``[tool_call: NAME for key 'value']``.

Gemini CLI's prompt (and Qwen Code's, its fork) shows tools in use as such
lines; models imitate them in their answers. A line of its own naming an
offered tool, with keys it takes and literal values, is a call; descriptions
in free text, unknown names and keys, and the notation quoted in a sentence
stay prose.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from utp.parsers import parse_response
from utp.types import Tool

from .conftest import assert_every_cut_matches, streamed_at_cuts

TOOLS = [
    Tool("read_file", parameters={"type": "object", "properties": {"absolute_path": {"type": "string"}, "offset": {"type": "integer"}}, "required": ["absolute_path"]}),
    Tool("run_shell_command", parameters={"type": "object", "properties": {"command": {"type": "string"}, "description": {"type": "string"}}, "required": ["command"]}),
    Tool("read_many_files", parameters={"type": "object", "properties": {"paths": {"type": "array", "items": {"type": "string"}}}, "required": ["paths"]}),
    Tool("list_directory", parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    Tool("web_search", parameters={"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}}),
]

#: real: a Qwen Code report, a local model answering in the prompt's notation
QWEN_CODE = (
    "I need to examine the key files to understand the project's core technologies. Let me start by checking the "
    "requirements.txt file to see the dependencies.\n\n[tool_call: read_file for absolute_path 'requirements.txt']\n\n"
    "Now let me look at some of the main Python files to understand the structure and functionality."
)


def _calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


def test_a_real_answer_in_the_prompts_notation_is_a_call() -> None:
    parsed = parse_response(QWEN_CODE, tools=TOOLS)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [("read_file", {"absolute_path": "requirements.txt"}, "gemini_cli")]
    assert "[tool_call:" not in parsed.content
    assert parsed.content.startswith("I need to examine") and parsed.content.endswith("functionality.")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("[tool_call: list_directory for path '.']", ("list_directory", {"path": "."})),
        # the prompt's own examples: a keyless value, a comment after it, a list
        ("[tool_call: run_shell_command for 'node server.js &' because it must run in the background]", ("run_shell_command", {"command": "node server.js &"})),
        ("[tool_call: read_many_files for paths ['**/*.test.ts', 'src/**/*.spec.ts'] assuming someFile.ts is in the src directory]", ("read_many_files", {"paths": ["**/*.test.ts", "src/**/*.spec.ts"]})),
        ("[tool_call: read_file for absolute_path '/path/to/someFile.ts' or use glob to find it if its location is unknown]", ("read_file", {"absolute_path": "/path/to/someFile.ts"})),
        # several pairs, double quotes, numbers
        ('[tool_call: read_file for absolute_path "/a.py", offset 10]', ("read_file", {"absolute_path": "/a.py", "offset": 10})),
        ("[tool_call: web_search for query 'it\\'s late' and limit 3]", ("web_search", {"query": "it's late", "limit": 3})),
        ("  [tool_call: list_directory for path '/src']  ", ("list_directory", {"path": "/src"})),
    ],
)
def test_the_notations_shapes(line: str, expected: tuple) -> None:
    assert _calls(line) == [expected]


def test_one_call_per_line() -> None:
    text = "First the layout.\n[tool_call: list_directory for path '.']\n[tool_call: read_file for absolute_path '/x/README.md']\nThen I will decide."
    assert _calls(text) == [("list_directory", {"path": "."}), ("read_file", {"absolute_path": "/x/README.md"})]


@pytest.mark.parametrize(
    "text",
    [
        # a description, not arguments
        "[tool_call: run_shell_command to apply the refactoring to 'src/auth.py']",
        "[tool_call: read_file or glob to find the file]",
        # a name no tool has, a key the tool does not take, a value that is not a literal
        "[tool_call: write_file for path '/a.py']",
        "[tool_call: read_file for path '/a.py']",
        "[tool_call: read_file for absolute_path /a.py]",
        # a keyless value where the tool has no one parameter for it
        "[tool_call: web_search for 'cats']",
        # quoted in a sentence, or with text after its bracket
        "Gemini CLI writes [tool_call: read_file for absolute_path '/a'] in its examples.",
        "[tool_call: read_file for absolute_path '/a'] is how the prompt shows it.",
        # a log line naming calls
        "[tool_call: read_file]",
        # never closed on its line
        "[tool_call: read_file for absolute_path '/a'\nmore",
    ],
)
def test_prose_and_descriptions_stay_prose(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert parsed.tool_calls == [] and parsed.content == text


def test_without_tools_the_notation_is_prose() -> None:
    assert _calls(QWEN_CODE, tools=None) == []


@pytest.mark.parametrize("text", [QWEN_CODE, "[tool_call: run_shell_command for 'npm test' because tests]\nDone.", "[tool_call: read_file for path '/a.py']\n"])
def test_streaming_any_cut_matches_one_shot(text: str) -> None:
    assert_every_cut_matches(text, TOOLS, step=11)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="[tool_call: read_fie for absolute_path'\"/,]\n 0123", max_size=80))
def test_any_text_in_the_notations_alphabet_parses_and_streams_the_same(text: str) -> None:
    parsed = parse_response(text, tools=TOOLS)
    assert streamed_at_cuts(text, list(range(0, len(text), 7)), TOOLS) == (parsed.content, [(c.name, c.arguments) for c in parsed.tool_calls])
