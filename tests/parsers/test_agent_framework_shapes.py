"""Call shapes agent frameworks read from plain text, each read from the framework's own definition.

* Cline / Roo Code XML tool use: a parameter closes at the first closer of its name that the
  next parameter or the end of the tool element follows (a file's text may hold that closer);
  a value on lines of its own keeps its indentation, only the line break after the opening
  tag and the one before the closer being layout; a one-line value is trimmed.
* ReAct steps as LlamaIndex and crewAI read them: a description in parentheses after the
  action's name (``Action: add (adds two numbers)``), a name in any script, and an input
  object behind a constructor (``Tool({...})``) or Markdown emphasis (``** {...}``).
* camel-ai's MCP call object ``{"server_idx": 0, "tool_name": ..., "tool_args": {...}}``: the
  server index is routing beside the call, like an id; in a sentence, the object may be a
  Python dict as ``repr`` prints it (an offered tool's name); in a ```` ```yaml ```` fence, the
  same shape as a YAML mapping, for offered tools.
* Text Generation Inference's grammar-forced call ``{"function": {"_name": NAME, **arguments}}``.
* DSPy's ChatAdapter ``tool_calls`` field: ``[[ ## tool_calls ## ]]`` then the calls as JSON or a
  Python literal, without the tools offered too (the marker is exact).
* A call object that says it is one (``"type": "tool_call"``) with only a name: a call without
  arguments even when no tools are offered.

Every shape has its negative (prose that mentions it is no call) and streams to the
one-shot reading.
"""

from __future__ import annotations

import pytest

from utp.parsers import parse_response
from utp.types import Tool

from .conftest import assert_every_cut_matches, assert_stream_matches_under

SAVE = Tool("save_page", parameters={"type": "object", "properties": {"target": {"type": "string"}, "body": {"type": "string"}}})
OPEN = Tool("open_page", parameters={"type": "object", "properties": {"target": {"type": "string"}}})
TOOLS = [SAVE, OPEN]


def calls(text: str, tools: list[Tool] | None = TOOLS) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


CLINE_VALUES = [
    ("<save_page><target>notes.md</target><body>\n  - first\n    - nested\n</body></save_page>",
     [("save_page", {"target": "notes.md", "body": "  - first\n    - nested"})]),
    ("<save_page><target>x.html</target><body>\n<p>see </body> below</p>\n<p>end</p>\n</body></save_page>",
     [("save_page", {"target": "x.html", "body": "<p>see </body> below</p>\n<p>end</p>"})]),
    ("<save_page>\n<target>\n   a.txt   \n</target>\n<body>one line</body>\n</save_page>",
     [("save_page", {"target": "a.txt", "body": "one line"})]),
    ("Opening it. <open_page><target>  index.md </target></open_page> then more prose.",
     [("open_page", {"target": "index.md"})]),
]


@pytest.mark.parametrize(("text", "want"), CLINE_VALUES)
def test_cline_values_keep_the_layout_cline_keeps(text: str, want: list) -> None:
    assert calls(text) == want
    assert_stream_matches_under(text, TOOLS, 3)


def test_cline_value_holding_its_own_closer_streams_at_every_cut() -> None:
    assert_every_cut_matches(CLINE_VALUES[1][0], TOOLS, 7)


def test_cline_element_with_prose_after_a_parameter_closer_is_no_call() -> None:
    text = "Write <open_page><target>a.md</target> and then explain it</open_page> in your reply."
    assert calls(text) == []


SUM = Tool("sum_up", parameters={"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}})
KANJI = Tool("合計", parameters={"type": "object", "properties": {"x": {"type": "integer"}}})
REACT_TOOLS = [SUM, KANJI]

REACT_STEPS = [
    ('Thought: adding.\nAction: sum_up (adds two integers)\nAction Input: {"x": 2, "y": 5}\n', [("sum_up", {"x": 2, "y": 5})]),
    ('Action: 合計\n\nAction Input: {"x": 4}\nObservation:', [("合計", {"x": 4})]),
    ('Thought: go\nAction: sum_up\nAction Input: Calculator({"x": 1,\n "y": 2})\n', [("sum_up", {"x": 1, "y": 2})]),
    ('Action: sum_up\nAction Input: **{"x": 3, "y": 3}**\nObservation: 6', [("sum_up", {"x": 3, "y": 3})]),
]


@pytest.mark.parametrize(("text", "want"), REACT_STEPS)
def test_react_steps_as_llamaindex_and_crewai_read_them(text: str, want: list) -> None:
    assert calls(text, REACT_TOOLS) == want
    assert calls(text, None) == want
    assert_stream_matches_under(text, REACT_TOOLS, 2)


@pytest.mark.parametrize("index", [0, 2, 3])
def test_react_wrapped_and_described_steps_stream_at_every_cut(index: int) -> None:
    assert_every_cut_matches(REACT_STEPS[index][0], REACT_TOOLS, 9)


@pytest.mark.parametrize("text", [
    "Action: sum_up (adds two integers) was my plan, but I answered directly.",
    "Action: sum_up (adds two integers)\nI decided against it.",
    'Action: sum_up\nAction Input: see Calculator({"x": 1}) in the docs\n',
])
def test_prose_about_react_steps_is_no_call(text: str) -> None:
    assert calls(text, REACT_TOOLS) == []


MCP_CALLS = [
    ('Calling it now:\n```json\n{"server_idx": 1, "tool_name": "open_page", "tool_args": {"target": "a.md"}}\n```',
     [("open_page", {"target": "a.md"})]),
    ('Sending {"server_idx": 0, "tool_name": "open_page",\n  "tool_args": {"target": "b.md"}} to the server.',
     [("open_page", {"target": "b.md"})]),
    ("Sending {'server_name': 'docs', 'tool_name': 'save_page', 'tool_args': {'target': 'c.md', 'body': 'Hi'}} now",
     [("save_page", {"target": "c.md", "body": "Hi"})]),
    ('Both: [{"server_idx": 0, "tool_name": "open_page", "tool_args": {"target": "x"}}, {"server_idx": 2, "tool_name": "open_page", "tool_args": {"target": "y"}}]',
     [("open_page", {"target": "x"}), ("open_page", {"target": "y"})]),
]


@pytest.mark.parametrize(("text", "want"), MCP_CALLS)
def test_mcp_call_objects_with_their_server_index(text: str, want: list) -> None:
    assert calls(text) == want
    assert_stream_matches_under(text, TOOLS, 4)


@pytest.mark.parametrize("text", [
    "Sending {'server_idx': 0, 'tool_name': 'reboot', 'tool_args': {}} is what an admin would do.",
    'The server said {"server_idx": 0, "tool_name": "open_page", "tool_args": {"target": "b.md"}, "status": "done"}.',
    "Sending {'server_idx': 0, 'tool_name': 'open_page', 'tool_args': {'target': 'b.md',}} broken.",
])
def test_mcp_shaped_prose_is_no_call(text: str) -> None:
    assert calls(text) == []


TGI_CALL = '{"function": {"_name": "save_page", "target": "d.md", "body": "text"}}'


@pytest.mark.parametrize("tools", [TOOLS, None])
def test_tgi_grammar_call_is_its_name_and_the_arguments_beside_it(tools: list[Tool] | None) -> None:
    assert calls(TGI_CALL, tools) == [("save_page", {"target": "d.md", "body": "text"})]
    assert_every_cut_matches(TGI_CALL, tools, 7)


@pytest.mark.parametrize("tools", [TOOLS, None])
def test_tgi_no_tool_is_the_answer_not_a_call(tools: list[Tool] | None) -> None:
    assert calls('{"function": {"_name": "no_tool", "content": "Hello there."}}', tools) == []


def test_tgi_shaped_json_in_prose_is_no_call() -> None:
    text = 'TGI constrains output to {"function": {"_name": "reboot", "now": true}} when tools are given.'
    assert calls(text) == [] and calls(text, None) == []


DSPY_FIELDS = [
    "[[ ## tool_calls ## ]]\n[{'name': 'open_page', 'args': {'target': 'e.md'}}]\n\n[[ ## completed ## ]]",
    '[[ ## next_thought ## ]]\nRead it.\n\n[[ ## tool_calls ## ]]\n{"name": "open_page", "args": {"target": "e.md"}}',
    '[[ ## tool_calls ## ]]\n{"tool_calls": [{"name": "open_page", "args": {"target": "e.md"}}]}\n',
]


@pytest.mark.parametrize("text", DSPY_FIELDS)
@pytest.mark.parametrize("tools", [TOOLS, None])
def test_dspy_tool_calls_field_is_the_calls(text: str, tools: list[Tool] | None) -> None:
    parsed = parse_response(text, tools=tools)
    assert [(c.name, c.arguments, c.format) for c in parsed.tool_calls] == [("open_page", {"target": "e.md"}, "dspy")]
    assert "tool_calls ##" not in parsed.content
    assert_every_cut_matches(text, tools, 11)


@pytest.mark.parametrize("text", [
    "DSPy writes a [[ ## tool_calls ## ]] field before the calls.",
    "[[ ## tool_calls ## ]]\nNone needed.\n\n[[ ## completed ## ]]",
    '[[ ## tool_calls ## ]]\n{"city": "Paris"}',
    "The field [[ ## tool_calls ## ]] is followed by a list such as [one, two].",
])
def test_prose_about_the_dspy_field_is_no_call(text: str) -> None:
    assert calls(text) == [] and calls(text, None) == []


YAML_FENCES = [
    "Here is the call:\n```yaml\nserver_idx: 0\ntool_name: open_page\ntool_args:\n  target: f.md\n```\n",
    "```yml\n- name: open_page\n  arguments:\n    target: f.md\n```",
]


@pytest.mark.parametrize("text", YAML_FENCES)
def test_a_yaml_fence_shaped_like_a_call_to_an_offered_tool_is_that_call(text: str) -> None:
    assert calls(text) == [("open_page", {"target": "f.md"})]
    assert calls(text, None) == []
    assert_every_cut_matches(text, TOOLS, 9)


@pytest.mark.parametrize("text", [
    "Config:\n```yaml\nname: open_page\nversion: 2\n```\n",
    "```yaml\ntool_name: reboot\ntool_args:\n  now: true\n```",
    "For example:\n```yaml\ntool_name: open_page\ntool_args:\n  target: f.md\n```\nwould call it, but I will not.",
    "```yaml\ntool_name: open_page\ntool_args:\n  target: 2024-01-02\n```",
])
def test_yaml_fences_that_are_data_are_no_call(text: str) -> None:
    assert calls(text) == []


@pytest.mark.parametrize("kind", ["tool_call", "function_call", "tool_use"])
def test_an_object_typed_as_a_call_with_only_a_name_is_a_call(kind: str) -> None:
    text = f'{{"type": "{kind}", "name": "open_page"}}'
    assert calls(text, None) == [("open_page", {})]
    assert_every_cut_matches(text, None, 5)


@pytest.mark.parametrize("text", [
    '{"type": "message", "name": "open_page"}',
    'The log line {"type": "tool_call", "name": "open_page"} shows the event.',
])
def test_a_name_alone_without_a_call_type_is_no_call(text: str) -> None:
    assert calls(text, None) == []
