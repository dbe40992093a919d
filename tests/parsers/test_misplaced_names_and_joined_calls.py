"""Calls whose name stands out of place, calls joined by words, and calls left unfinished before the next.

* the name written as a quoted call object (``"name": "{\\"name\\": \\"todo\\", …}"``), or among the
  arguments of an object that has no name, inside a call tag (mlx-coder's captures of Qwen models);
* Gemma 4's braces holding Python's keyword arguments (``call:run_command{command="ls"}``);
* JSON calls joined by a word of sequence (``{…} then {…}``);
* a ``<tool_call>`` left unfinished when the model starts the call again;
* an LFM2 call list whose ``]`` was left out before ``<|tool_call_end|>``;
* a call after a sentence on the call's own line (``Let me check. read_file(path="a")``);
* gpt-oss's recipient alone opening the answer (``to=search {"query": "x"}``).

Each with what must stay data, code or prose.
"""

from __future__ import annotations

import json

import pytest

from utp.parsers import parse_response
from utp.types import DiagnosticKind, Tool

from .conftest import assert_every_cut_matches


def _tool(name: str, required: tuple[str, ...] = (), **properties: str) -> Tool:
    return Tool(name, parameters={"type": "object", "properties": {k: {"type": t} for k, t in properties.items()}, "required": list(required)})


WEATHER = _tool("get_weather", ("city",), city="string")
READ = _tool("read_file", ("path",), path="string")
TASK = _tool("task", ("description",), description="string", profile="string")
TOOLS = [WEATHER, READ, TASK]


def _calls(text: str, tools: list | None = TOOLS) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parse_response(text, tools=tools).tool_calls]


# --------------------------------------------------------------------------- names out of place


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>\n{"arguments":{},"name":"{\\"arguments\\":{\\"city\\":\\"Paris\\"},\\"name\\":\\"get_weather\\"}"}\n</tool_call>',
        '<tool_call>\n{"arguments":{"city":"Paris"},"name":"{\\"name\\":\\"get_weather\\"}"}\n</tool_call>',
        '{"arguments": {"city": "Paris"}, "name": "{\\"name\\": \\"get_weather\\"}"}',
    ],
)
def test_a_name_written_as_a_quoted_call_object(text: str) -> None:
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert any("quoted call object" in r for r in result.tool_calls[0].repairs)


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"arguments":{"description":"fix the bug","profile":"executor","name":"task"}}</tool_call>',
        '<tool_call>{"arguments":{"name":"task","arguments":{"description":"fix the bug","profile":"executor"}}}</tool_call>',
    ],
)
def test_a_name_among_the_arguments_inside_a_call_tag(text: str) -> None:
    assert _calls(text) == [("task", {"description": "fix the bug", "profile": "executor"})]
    assert_every_cut_matches(text, TOOLS, step=7)


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        ('{"arguments": {"name": "task", "description": "fix the bug"}}', []),  # no call tag: data
        ('The record is {"arguments": {"name": "task", "arguments": {"description": "x"}}} as stored.', []),
        # a name of its own: the argument called "name" stays an argument
        ('<tool_call>{"name": "task", "arguments": {"name": "bob", "description": "x"}}</tool_call>', [("task", {"name": "bob", "description": "x"})]),
        # a brace that opens no JSON: the name as written (then flagged unknown)
        ('<tool_call>{"arguments": {"city": "Paris"}, "name": "{not json"}</tool_call>', [("{not json", {"city": "Paris"})]),
    ],
)
def test_names_that_are_not_out_of_place_stay_as_written(text: str, calls: list) -> None:
    assert _calls(text) == calls


# --------------------------------------------------------------------------- Gemma's braces with '='


@pytest.mark.parametrize(
    "text",
    [
        '<|tool_call>call:read_file{path="a.txt"}<tool_call|>',
        '<|tool_call>call:read_file{path=<|"|>a.txt<|"|>}<tool_call|>',
        '<start_function_call>call:read_file{path="a.txt"}<end_function_call>',
    ],
)
def test_gemma_braces_holding_keyword_arguments(text: str) -> None:
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("read_file", {"path": "a.txt"})]
    assert "'=' after key 'path' read as ':'" in result.tool_calls[0].repairs
    assert_every_cut_matches(text, TOOLS, step=5)


def test_an_equals_sign_inside_a_gemma_value_is_text() -> None:
    assert _calls('<|tool_call>call:read_file{path:<|"|>a=b.txt<|"|>}<tool_call|>') == [("read_file", {"path": "a=b.txt"})]


# --------------------------------------------------------------------------- JSON calls joined and JSON in code


@pytest.mark.parametrize("word", ["then", "and", "and then", "followed by", "Then"])
def test_json_calls_joined_by_a_word_of_sequence(word: str) -> None:
    text = f'{{"name": "read_file", "arguments": {{"path": "a.py"}}}} {word} {{"name": "read_file", "arguments": {{"path": "b.py"}}}}'
    assert _calls(text) == [("read_file", {"path": "a.py"}), ("read_file", {"path": "b.py"})]
    assert_every_cut_matches(text, TOOLS, step=11)


def test_a_word_of_sequence_before_an_object_that_is_no_call() -> None:
    text = '{"name": "read_file", "arguments": {"path": "a.py"}} then {"path": "b.py"}'
    assert _calls(text) == [("read_file", {"path": "a.py"})]


@pytest.mark.parametrize(
    "text",
    [
        'data = {"name": "get_weather", "arguments": {"city": "Paris"}}',
        'print({"name": "get_weather", "arguments": {"city": "Paris"}})',
        'Here is an example:\n\n```python\nimport json\n\ndata = {"name": "get_weather", "arguments": {"city": "Paris"}}\n'
        "print(json.dumps(data))\n```\nThat prints the object.",
    ],
)
def test_a_call_object_assigned_or_passed_in_code_is_data(text: str) -> None:
    assert _calls(text) == []


def test_a_call_object_after_a_sentence_on_its_line_is_still_read() -> None:
    assert _calls('I will check {"name": "get_weather", "arguments": {"city": "Paris"}}') == [("get_weather", {"city": "Paris"})]


# --------------------------------------------------------------------------- a call tag begun again


def test_a_call_tag_left_unfinished_when_the_call_is_begun_again() -> None:
    text = (
        '<tool_call>{"arguments":{"description":"fix the bug","profile":"executor"}\n\n'
        '<tool_call>{"arguments":{"description":"fix the bug","profile":"executor"},"name":"task"}</tool_call>'
    )
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("task", {"description": "fix the bug", "profile": "executor"})]
    assert [d.kind for d in result.diagnostics] == [DiagnosticKind.UNPARSEABLE]
    assert_every_cut_matches(text, TOOLS, step=9)


# --------------------------------------------------------------------------- LFM2's list without its ']'


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        ("<|tool_call_start|>[read_file(path='a.txt')<|tool_call_end|>", [("read_file", {"path": "a.txt"})]),
        (
            "<|tool_call_start|>[read_file(path='a.txt'), get_weather(city='Oslo')<|tool_call_end|>",
            [("read_file", {"path": "a.txt"}), ("get_weather", {"city": "Oslo"})],
        ),
    ],
)
def test_a_call_list_whose_bracket_was_left_out_before_the_closer(text: str, calls: list) -> None:
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == calls
    assert "']' missing before the closer" in result.tool_calls[0].repairs
    assert_every_cut_matches(text, TOOLS, step=6)


def test_a_call_list_cut_inside_a_string_before_the_closer_is_not_run() -> None:
    result = parse_response("<|tool_call_start|>[read_file(path='fo<|tool_call_end|>", tools=TOOLS)
    assert result.tool_calls == []
    assert result.diagnostics


# --------------------------------------------------------------------------- a call after a sentence on its line


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        ('Let me check. read_file(path="/src/index.ts")', [("read_file", {"path": "/src/index.ts"})]),
        ('Let me check. read_file({"path": "/src/index.ts"})', [("read_file", {"path": "/src/index.ts"})]),
        ('Sure! read_file(path="a")\nread_file(path="b")', [("read_file", {"path": "a"}), ("read_file", {"path": "b"})]),
        ('I will look first.\n\nLet me check? get_weather(city="Oslo")', [("get_weather", {"city": "Oslo"})]),
        ('我来查一下。get_weather(city="Paris")', [("get_weather", {"city": "Paris"})]),
    ],
)
def test_a_call_after_a_sentence_on_its_own_line(text: str, calls: list) -> None:
    assert _calls(text) == calls
    assert_every_cut_matches(text, TOOLS, step=4)


@pytest.mark.parametrize(
    "text",
    [
        'Call it first. Then get_weather(city="Paris")',  # the call is inside the next sentence
        'Use os.path. get_weather(city="Paris") is fine.',  # the call is the subject of a sentence
        'x = 1. get_weather(city="Paris")',  # code before it
        'Done.get_weather(city="Paris")',  # a method on a word, not a new sentence
        '# Check. get_weather(city="Paris")',  # a comment
        'Let me check. unknown_tool(city="Paris")',  # no offered tool
    ],
)
def test_what_is_no_call_after_a_sentence_stays_prose(text: str) -> None:
    assert _calls(text) == []
    assert_every_cut_matches(text, TOOLS, step=5)


# --------------------------------------------------------------------------- gpt-oss's bare recipient


@pytest.mark.parametrize("text", ['to=get_weather {"city": "Oslo"}', 'to=functions.get_weather {"city": "Oslo"}', 'to=get_weather json\n{"city": "Oslo"}'])
def test_a_bare_recipient_opening_the_answer(text: str) -> None:
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments, c.format) for c in result.tool_calls] == [("get_weather", {"city": "Oslo"}, "harmony")]
    assert_every_cut_matches(text, TOOLS, step=4)


@pytest.mark.parametrize(
    ("text", "tools"),
    [
        ('Send it to=get_weather {"city": "Oslo"}', TOOLS),  # inside a sentence
        ('to=get_weather {"city": "Oslo"}', [READ]),  # not an offered tool
        ('to=get_weather {"city": "Oslo"}', None),
    ],
)
def test_a_recipient_that_opens_no_answer_stays_prose(text: str, tools: list | None) -> None:
    assert _calls(text, tools) == []


# --------------------------------------------------------------------------- Mistral's NAME[ARGS] without [TOOL_CALLS]


@pytest.mark.parametrize(
    ("text", "calls", "content"),
    [
        ('thinking... get_weather[ARGS]{"city": "Paris"}', [("get_weather", {"city": "Paris"})], "thinking..."),
        ('read_file[ARGS]{"path": "a"}read_file[ARGS]{"path": "b"}', [("read_file", {"path": "a"}), ("read_file", {"path": "b"})], ""),
    ],
)
def test_mistral_call_with_its_tool_calls_token_stripped(text: str, calls: list, content: str) -> None:
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == calls
    assert result.content == content
    assert "[TOOL_CALLS] missing before [ARGS]" in result.tool_calls[0].repairs
    assert_every_cut_matches(text, TOOLS, step=6)


@pytest.mark.parametrize(
    ("text", "tools"),
    [
        ('forget_weather[ARGS]{"city": "Paris"}', TOOLS),  # another word
        ('get_weather[ARGS]{"city": "Paris"}', None),  # no offered tool
        ('get_weather[ARGS] is how Mistral writes it', TOOLS),
    ],
)
def test_a_stripped_mistral_call_that_is_no_call(text: str, tools: list | None) -> None:
    assert _calls(text, tools) == []


# --------------------------------------------------------------------------- @tool lines and ```tool fences


@pytest.mark.parametrize(
    ("text", "calls", "content"),
    [
        ('sure!\n@tool get_weather {"city":"Oslo"}\nok', [("get_weather", {"city": "Oslo"})], "sure!\nok"),
        (
            'Reading the files.\n@tool read_file {"path":"a.rs"}\n@tool read_file {"path":"b.rs"}',
            [("read_file", {"path": "a.rs"}), ("read_file", {"path": "b.rs"})],
            "Reading the files.",
        ),
        ('```tool\nread_file {"path":"."}\n```', [("read_file", {"path": "."})], "```tool\n```"),
    ],
)
def test_call_lines_marked_by_an_at_word_or_a_tool_fence(text: str, calls: list, content: str) -> None:
    result = parse_response(text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.tool_calls] == calls
    assert result.content == content
    assert_every_cut_matches(text, TOOLS, step=6)


@pytest.mark.parametrize(
    "text",
    [
        'email me @tool read_file {"path":"a"} later',  # inside a sentence
        '@tool read_file {"path":"a"} is how the prompt asks for it',  # more on the line
        '@tool unknown {"path":"a"}',  # no offered tool
        '@toolbox read_file {"path":"a"} and more',
    ],
)
def test_at_words_that_mark_no_call(text: str) -> None:
    assert _calls(text) == []


# --------------------------------------------------------------------------- a call tag quoted in a JSON record


def test_a_call_tag_opening_a_json_members_string_is_quoted_data() -> None:
    """A labelled record (this README's accuracy example) holds the tag in its ``"output"`` string: data."""
    record = (
        '{"source": "my-model", "output": "<tool_call>{\\"name\\": \\"get_weather\\", \\"arguments\\": {\\"city\\": \\"Paris\\"}}</tool_call>", '
        '"expected": [{"name": "get_weather", "arguments": {"city": "Paris"}}], "tools": ["get_weather"]}'
    )
    for tools in (TOOLS, None):
        assert _calls(record, tools) == []


@pytest.mark.parametrize(
    "text",
    [
        # every family's markup, not only the Hermes tag: the scan loop asks before any family reads
        '{"log": "<function=get_weather><parameter=city>Paris</parameter></function>"}',
        '{"trace": "[TOOL_CALLS][{\\"name\\": \\"get_weather\\", \\"arguments\\": {\\"city\\": \\"Paris\\"}}]"}',
        '{"raw": "<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\\"city\\": \\"Paris\\"}<|tool_call_end|>"}',
    ],
)
def test_any_familys_markup_opening_a_json_members_string_is_quoted_data(text: str) -> None:
    for tools in (TOOLS, None):
        assert _calls(text, tools) == []
    assert_every_cut_matches(text, TOOLS, step=11)


@pytest.mark.parametrize(
    "text",
    [
        '{"content": "<tool_call>{\\"name\\": \\"get_weather\\", \\"arguments\\": {\\"city\\": \\"Paris\\"}}</tool_call>"}',  # an answer object
        '"<tool_call>{\\"name\\": \\"get_weather\\", \\"arguments\\": {\\"city\\": \\"Paris\\"}}</tool_call>"',  # a reply JSON-encoded whole
    ],
)
def test_a_call_tag_in_a_reply_written_as_json_is_still_a_call(text: str) -> None:
    assert _calls(text) == [("get_weather", {"city": "Paris"})]


# --------------------------------------------------------------------------- a call to a dispatcher naming the tool

SHELL = Tool("shell", parameters={"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]})


@pytest.mark.parametrize(
    "text",
    [
        # wazir's recorded Gemma 4 reply: its protocol calls "tool" with the tool's name and input
        '<|tool_call>call:tool{tool:<|"|>shell<|"|>,input:{command:<|"|>mkdir -p out<|"|>}}<tool_call|>',
        '<tool_call>{"name": "tool", "arguments": {"tool": "shell", "input": {"command": "mkdir -p out"}}}</tool_call>',
        '<tool_call>{"name": "run", "arguments": {"name": "shell", "command": "mkdir -p out"}}</tool_call>',
    ],
)
def test_a_call_to_a_dispatcher_naming_an_offered_tool_is_that_tools_call(text: str) -> None:
    parsed = parse_response(text, tools=[SHELL])
    assert [(c.name, c.arguments, c.known) for c in parsed.tool_calls] == [("shell", {"command": "mkdir -p out"}, True)]
    assert "names 'shell' in its arguments" in parsed.tool_calls[0].repairs[-1]
    assert_every_cut_matches(text, [SHELL], step=9)


@pytest.mark.parametrize(
    "arguments",
    [
        {"tool": "nope", "input": {"command": "x"}},  # no such tool
        {"tool": "shell", "input": {"cmd": "x"}},  # not its parameter
        {"tool": "shell", "command": "x", "cwd": "/"},  # not all its parameters
        {"tool": "shell"},  # its required argument missing
    ],
)
def test_a_dispatcher_call_that_does_not_fit_the_named_tool_stays_unknown(arguments: dict) -> None:
    text = f'<tool_call>{{"name": "tool", "arguments": {json.dumps(arguments)}}}</tool_call>'
    (call,) = parse_response(text, tools=[SHELL]).tool_calls
    assert (call.name, call.arguments, call.known) == ("tool", arguments, False)
