"""Hyphenated call tags, ``<call name=…>`` elements, a call's purpose beside flat arguments, template literals.

Sources (transcribed outside the repository, see docs/accuracy.md):

* a model recorded under arcrouter and hjiancheng9-art/agnes-smart-studio's prompt: ``<function-call>`` tags;
  sorravit/BEACON's parser tests: ``<tool-use>`` with ``<tool-name>`` inside;
* John0123412/PawnLogic's agent: ``<call name="run_shell"><command>…</command></call>``;
* dennidalpos/OnlyRagV2's tool parser tests: ``{"tool": …, "command": …, "explanation": "…"}`` and a file's
  content written as a JavaScript template literal (one reply captured live from qwen2.5-coder under Ollama).
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.types import DiagnosticKind, Tool

from .conftest import assert_every_cut_matches

READ = Tool("read_file", parameters={"type": "object", "properties": {"path": {"type": "string"}}})
SHELL = Tool("run_shell", parameters={"type": "object", "properties": {"command": {"type": "string"}}})
WRITE = Tool("write_file", parameters={"type": "object", "properties": {"filePath": {"type": "string"}, "content": {"type": "string"}}})
NOTE = Tool("add_note", parameters={"type": "object", "properties": {"text": {"type": "string"}, "reason": {"type": "string"}}})
TOOLS = [READ, SHELL, WRITE, NOTE]


def _calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


# --- hyphenated call tags -----------------------------------------------------------------------


@pytest.mark.parametrize("tag", ["function-call", "tool-call", "tool-use"])
def test_a_call_tag_spelled_with_a_hyphen(tag: str) -> None:
    text = f'To read it:\n\n<{tag}>\n    {{"name": "read_file", "arguments": {{"path": "a.py"}}}}\n</{tag}>\n\nDone.'
    assert _calls(text) == [("read_file", {"path": "a.py"})]
    assert _calls(text, None) == [("read_file", {"path": "a.py"})]
    assert_every_cut_matches(text, TOOLS, step=4)


def test_hyphenated_tags_with_flat_calls_one_after_another() -> None:
    text = '<function-call>{"name": "read_file", "path": "a.py"}</function-call>\n<function-call>{"name": "run_shell", "command": "ls"}</function-call>'
    assert _calls(text) == [("read_file", {"path": "a.py"}), ("run_shell", {"command": "ls"})]


@pytest.mark.parametrize(
    "text",
    [
        '<tool-use>\n<tool-name>read_file</tool-name>\n<parameters>{"path": "a.py"}</parameters>\n</tool-use>',
        '<tool_use>\n<tool_name>read_file</tool-name>\n<parameters>{"path": "a.py"}</parameters>\n</tool_use>',  # closed in the other spelling
        '<tool_use>\n<tool-name>read_file</tool-name>\n<tool-arguments>{"path": "a.py"}</tool-arguments>\n</tool_use>',
    ],
)
def test_a_tags_children_spelled_with_hyphens(text: str) -> None:
    """sorravit/BEACON's ``<tool-use>`` prompt: its name and arguments elements hyphenated too."""
    assert _calls(text) == [("read_file", {"path": "a.py"})]
    assert _calls(text, None) == [("read_file", {"path": "a.py"})]
    assert_every_cut_matches(text, TOOLS, step=9)


def test_a_name_element_closed_by_another_element_names_nothing() -> None:
    assert _calls('<tool_use>\n<tool_name>read_file</function_name>\n<parameters>{"path": "a.py"}</parameters>\n</tool_use>') == []


@pytest.mark.parametrize(
    "text",
    [
        "Wrap each call in a <function-call> tag and put the JSON inside.",
        "<function-call>the call goes here</function-call>",
        '<tool-call>{"city": "Paris"}</tool-call>',  # no name anywhere
    ],
)
def test_hyphenated_tags_that_hold_no_call(text: str) -> None:
    assert _calls(text) == []


# --- <call name="…"> ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '<call name="run_shell"><command>ls -la</command></call>',
        '<call name="run_shell">\n  <command>ls -la</command>\n</call>',
        '<call name="run_shell"><parameter name="command">ls -la</parameter></call>',
    ],
)
def test_a_call_element_naming_its_tool(text: str) -> None:
    assert _calls(text) == [("run_shell", {"command": "ls -la"})]
    assert_every_cut_matches(text, TOOLS, step=3)


@pytest.mark.parametrize(
    ("text", "tools"),
    [
        ('<call name="dial"><number>555</number></call>', TOOLS),  # not an offered tool
        ('<call name="run_shell"><command>ls</command></call>', None),  # no tools, no arguments vocabulary: markup
        ('<call name="run_shell">Please run ls for me.</call>', TOOLS),  # prose in the body
    ],
)
def test_call_elements_that_are_no_call(text: str, tools: list[Tool] | None) -> None:
    assert _calls(text, tools) == []


# --- the call's purpose beside flat arguments -----------------------------------------------------


def test_an_explanation_beside_flat_arguments_is_no_argument() -> None:
    text = '```json\n{\n  "tool": "run_shell",\n  "command": "npm install tailwindcss",\n  "explanation": "Installing tailwind"\n}\n```'
    assert _calls(text) == [("run_shell", {"command": "npm install tailwindcss"})]


def test_a_purpose_key_the_tool_declares_is_its_argument() -> None:
    assert _calls('{"tool": "add_note", "text": "buy milk", "reason": "groceries"}') == [("add_note", {"text": "buy milk", "reason": "groceries"})]


def test_a_purpose_that_is_data_keeps_the_object_from_being_a_flat_call() -> None:
    assert _calls('{"tool": "run_shell", "command": "ls", "explanation": {"why": "list"}}') == []


# --- a value written as a JavaScript template literal ---------------------------------------------

APP = 'import React from "react";\n\nfunction App() {\n  return <Dashboard />;\n}\n\nexport default App;\n'


def test_a_template_literal_value_is_its_text() -> None:
    text = '```json\n{\n  "tool": "write_file",\n  "parameters": {\n    "filePath": "src/App.tsx",\n    "content": `' + APP + '`\n  },\n  "explanation": "Creating App.tsx"\n}\n```'
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("write_file", {"filePath": "src/App.tsx", "content": APP})]
    assert any("template literal" in repair for call in result.tool_calls for repair in call.repairs)


def test_a_template_literal_decodes_its_escapes() -> None:
    text = '{"name": "write_file", "arguments": {"filePath": "a", "content": `a \\` tick\\n\\u00e9 ${x}`}}'
    assert _calls(text) == [("write_file", {"filePath": "a", "content": "a ` tick\n\u00e9 ${x}"})]


def test_a_template_literal_cut_off_is_reported_not_run() -> None:
    result = parse_response('{"name": "write_file", "arguments": {"filePath": "a", "content": `import x', tools=TOOLS)
    assert result.tool_calls == []
    assert any(d.kind is DiagnosticKind.TRUNCATED or d.kind is DiagnosticKind.UNPARSEABLE for d in result.diagnostics)


def test_backticks_in_prose_are_no_json() -> None:
    assert _calls("Run `ls -la` and then `pwd` to see where you are.") == []


# --- more of the eighty-ninth to ninety-first sets' shapes -----------------------------------------

LIST = Tool("list_files", parameters={"type": "object", "properties": {"path": {"type": "string"}}})
WEATHER = Tool("get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}})
ANSWER = Tool("final_answer", parameters={"type": "object", "properties": {"text": {"type": "string"}}})
MORE = [*TOOLS, LIST, WEATHER, ANSWER]


@pytest.mark.parametrize(
    "text",
    [
        '<｜tool▁call▁begin｜>function<｜tool▁sep｜>list_files {"path":"/workspace"}<｜tool▁call▁end｜>',  # a recorded reply
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>list_files\n{"path":"/workspace"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    ],
)
def test_deepseek_v3_arguments_without_their_fence(text: str) -> None:
    """V3 writes ``function<sep>NAME`` then a ```` ```json ```` fence; the fence dropped, ``function`` was read as the name."""
    assert _calls(text, MORE) == [("list_files", {"path": "/workspace"})]
    assert_every_cut_matches(text, MORE, step=4)


def test_deepseek_v31_calls_are_still_named_before_the_separator() -> None:
    text = '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>list_files<｜tool▁sep｜>{"path": "/a"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    assert _calls(text, MORE) == [("list_files", {"path": "/a"})]


@pytest.mark.parametrize(
    "text",
    [
        'Tool call: `read_file(path="FACT.txt")`',
        'Tool call: `read_file(path="FACT.txt")`\nTool call: `run_shell(command="cat FACT.txt")`',
    ],
)
def test_a_call_line_in_inline_code_after_its_label(text: str) -> None:
    """gemma-4-e2b under LM Studio writes its call lines so; without the backticks they were read already."""
    assert [name for name, _ in _calls(text)] == ["read_file", "run_shell"][: text.count("Tool call:")]
    assert_every_cut_matches(text, TOOLS, step=3)


@pytest.mark.parametrize(
    "text",
    [
        'Tool call: `read_file(path="a")',  # the inline code never closes
        'Tool call: read_file(path="a")`',  # closes without opening
        'Use this: Tool call: `read_file(path="a")`',  # the label inside a sentence
    ],
)
def test_call_lines_in_inline_code_that_are_not_whole(text: str) -> None:
    assert _calls(text) == []


def test_a_harmony_header_closed_before_its_message_sends_nothing() -> None:
    """The next message, on the final channel without a recipient, is the answer, not the closed header's call."""
    text = '<|start|>assistant<|channel|>commentary to=functions.get_weather<|end|><|start|>assistant<|channel|>final<|message|>{"city": "Paris"}<|return|>'
    result = parse_response(text, tools=MORE)
    assert result.tool_calls == []
    assert result.content == '{"city": "Paris"}'


def test_a_harmony_header_with_its_message_still_calls() -> None:
    text = '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>'
    assert _calls(text, MORE) == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{“tool”:“final_answer”,“args”:{“text”:“你好”}}", [("final_answer", {"text": "你好"})]),  # a Chinese input method's quotes
        ("{“name”: “get_weather”, “arguments”: {“city”: “Paris”}}", [("get_weather", {"city": "Paris"})]),
        ("他说：{“name”: “张三”}", []),  # a name key alone, no offered tool: data
    ],
)
def test_call_objects_written_with_typographic_quotes(text: str, expected: list) -> None:
    assert _calls(text, MORE) == expected


# --- Llama's <|python_tag|> call followed by prose, no end-of-turn token (PeakUI) -------------------

WEB = Tool("web", parameters={"type": "object", "properties": {"query": {"type": "string"}}})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('Before\n<|python_tag|>web.call(query="x")\nAfter', [("web", {"query": "x"})]),
        ('<|python_tag|>web(query="a")\nweb(query="b")\nThat is all.', [("web", {"query": "a"}), ("web", {"query": "b"})]),
    ],
)
def test_python_tag_call_lines_followed_by_prose(text: str, expected: list) -> None:
    result = parse_response(text, tools=[WEB])
    assert [(c.name, c.arguments) for c in result.tool_calls] == expected
    assert "python_tag" not in result.content and ("After" in result.content or "That is all." in result.content)
    assert_every_cut_matches(text, [WEB], step=3)


@pytest.mark.parametrize(
    "text",
    [
        "<|python_tag|>import os\nprint(os.getcwd())\nDone",  # code for an interpreter
        '<|python_tag|>other(query="a")\nThat is all.',  # not an offered tool
    ],
)
def test_python_tag_code_followed_by_prose_is_no_call(text: str) -> None:
    assert _calls(text, [WEB]) == []


# --- the ninety-sixth set: a tag's body as a name line and YAML lines; tool_call_* keys -------------

NOTION_READ = Tool("Read", parameters={"type": "object", "properties": {"file_path": {"type": "string"}}})
REFUND = Tool("refund", parameters={"type": "object", "properties": {"amount": {"type": "integer"}}})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<tool_use>\nRead\nfile_path: /home/a/b.py\n</tool_use>", [("Read", {"file_path": "/home/a/b.py"})]),
        (
            "<tool_use>\nRead\nfile_path: a.py\n</tool_use>\nsome prose\n<tool_use>\nRead\nfile_path: b.py\n</tool_use>",
            [("Read", {"file_path": "a.py"}), ("Read", {"file_path": "b.py"})],
        ),
    ],
)
def test_a_call_tag_holding_the_name_alone_then_yaml_lines(text: str, expected: list) -> None:
    """A Notion proxy's prompt asks for the name on its own line and ``key: value`` lines below it."""
    assert _calls(text, [NOTION_READ]) == expected
    assert_every_cut_matches(text, [NOTION_READ], step=4)


@pytest.mark.parametrize(
    "text",
    [
        "<tool_use>\nRead\nsome words about the file\n</tool_use>",  # no key lines
        "<tool_use>\nRead\npath: a.py\n</tool_use>",  # a key the tool does not declare
        "<tool_use>\nWrite\nfile_path: a.py\n</tool_use>",  # not an offered tool
    ],
)
def test_a_name_line_then_lines_that_are_not_its_arguments(text: str) -> None:
    assert _calls(text, [NOTION_READ]) == []


def test_call_keys_spelled_tool_call_name_and_tool_call_arguments() -> None:
    assert _calls('{"tool_call_name":"refund","tool_call_arguments":{"amount":5}}', [REFUND]) == [("refund", {"amount": 5})]


# --- a call after a Markdown-emphasised label (RWKV's adapter tests) --------------------------------

LOOKUP = Tool("lookup", parameters={"type": "object", "properties": {"id": {"type": "string"}}})


def test_a_call_after_a_label_in_markdown_emphasis() -> None:
    text = '**Tool Call:** lookup(id="A1")'
    assert _calls(text, [LOOKUP]) == [("lookup", {"id": "A1"})]
    assert_every_cut_matches(text, [LOOKUP], step=3)


@pytest.mark.parametrize("text", ["**Note:** lookup(id) is the function to use.", "**Tool Call:** see lookup(id=\"A1\") below"])
def test_an_emphasised_label_before_prose_is_no_call(text: str) -> None:
    assert _calls(text, [LOOKUP]) == []
